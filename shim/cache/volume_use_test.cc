#include "shim/cache/volume_use.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kscore::cache {
namespace {

pb::InlineDisk Disk(pb::DiskKind kind, const std::string& id, bool ro) {
  pb::InlineDisk d;
  d.set_kind(kind);
  d.set_id(id);
  d.set_read_only(ro);
  return d;
}

pb::Pod PodWith(const std::string& ns, const std::string& claim, bool ephemeral,
                const pb::InlineDisk* disk) {
  pb::Pod p;
  p.set_namespace_(ns);
  pb::VolumeClaim* c = p.add_volume_claims();
  c->set_claim_name(claim);
  c->set_ephemeral(ephemeral);
  if (disk != nullptr) *p.add_inline_disks() = *disk;
  return p;
}

TEST(VolumeUseTest, CountsClaimRefsAsPodsComeAndGo) {
  VolumeUse use;
  const VolumeUse::PodUse a = VolumeUse::Of(PodWith("ns", "c", false, nullptr));
  const VolumeUse::PodUse b = VolumeUse::Of(PodWith("ns", "c", false, nullptr));
  // An ephemeral volume's claim is not counted (upstream's PodPVCKeys).
  const VolumeUse::PodUse eph =
      VolumeUse::Of(PodWith("ns", "c", true, nullptr));
  use.Add(a, "n1");
  use.Add(b, "n2");
  use.Add(eph, "n2");
  EXPECT_EQ(use.ClaimRefs("ns", "c"), 2);
  EXPECT_EQ(use.ClaimRefs("other", "c"), 0);
  use.Remove(a, "n1");
  EXPECT_EQ(use.ClaimRefs("ns", "c"), 1);
  use.Remove(b, "n2");
  EXPECT_EQ(use.ClaimRefs("ns", "c"), 0);
}

TEST(VolumeUseTest, DisksPerNodeOfTheWantedKindAndId) {
  VolumeUse use;
  const pb::InlineDisk pd = Disk(pb::DISK_KIND_GCE_PD, "pd", true);
  const pb::InlineDisk ebs = Disk(pb::DISK_KIND_AWS_EBS, "pd", false);
  const VolumeUse::PodUse p1 = VolumeUse::Of(PodWith("ns", "x", false, &pd));
  const VolumeUse::PodUse p2 = VolumeUse::Of(PodWith("ns", "y", false, &pd));
  const VolumeUse::PodUse p3 = VolumeUse::Of(PodWith("ns", "z", false, &ebs));
  use.Add(p1, "n1");
  use.Add(p2, "n1");
  use.Add(p3, "n1");
  google::protobuf::RepeatedPtrField<pb::InlineDisk> wanted;
  *wanted.Add() = Disk(pb::DISK_KIND_GCE_PD, "pd", false);
  *wanted.Add() = Disk(pb::DISK_KIND_GCE_PD, "pd", true);  // asked once
  google::protobuf::RepeatedPtrField<pb::InlineDisk> out;
  use.DisksOn("n1", wanted, &out);
  EXPECT_EQ(out.size(), 2);  // one per pod's volume, not the EBS one
  out.Clear();
  use.DisksOn("n2", wanted, &out);
  EXPECT_EQ(out.size(), 0);
  use.Remove(p1, "n1");
  use.DisksOn("n1", wanted, &out);
  EXPECT_EQ(out.size(), 1);
}

TEST(VolumeUseTest, VictimsClaimRefsAndDisks) {
  const pb::InlineDisk pd = Disk(pb::DISK_KIND_GCE_PD, "pd", false);
  pb::Pod preemptor = PodWith("ns", "eph", true, &pd);
  preemptor.add_volume_claims()->set_claim_name("c");
  const VolumeUse::PodUse victim =
      VolumeUse::Of(PodWith("other", "c", false, &pd));
  google::protobuf::RepeatedField<int32_t> refs;
  VolumeUse::ClaimRefsInto(victim, preemptor, &refs);
  EXPECT_THAT(refs, ::testing::ElementsAre(1));  // by name, any namespace
  google::protobuf::RepeatedPtrField<pb::InlineDisk> disks;
  VolumeUse::Matching(victim, preemptor.inline_disks(), &disks);
  EXPECT_EQ(disks.size(), 1);
}

}  // namespace
}  // namespace kscore::cache
