#include "scorer/plugins/volume_restrictions.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scorer/testing/wrappers.h"

namespace kscore::plugins {
namespace {

using ::kscore::testing::MakeNode;
using ::kscore::testing::MakePod;
namespace pb = framework::pb;
using framework::Code;
using framework::CycleState;
using framework::PluginStatus;

pb::InlineDisk Disk(pb::DiskKind kind, const std::string& id, bool ro = false,
                    const std::string& pool = "",
                    std::vector<std::string> monitors = {}) {
  pb::InlineDisk d;
  d.set_kind(kind);
  d.set_id(id);
  d.set_read_only(ro);
  d.set_pool(pool);
  for (const std::string& m : monitors) d.add_monitors(m);
  return d;
}

// A pod with a persistentVolumeClaim volume per claim: found or not, its
// access mode, the volumes naming it.
class ClaimPod {
 public:
  ClaimPod() : pod_(MakePod().Name("p").Obj()) {}
  ClaimPod& Claim(const std::string& name, const std::string& mode,
                  int64_t refs, bool found = true, bool ephemeral = false) {
    pb::VolumeClaim* v = pod_.add_volume_claims();
    v->set_volume("v-" + name);
    v->set_claim_name(name);
    v->set_ephemeral(ephemeral);
    pb::ClaimState* c = pod_.mutable_volumes()->add_claims();
    c->set_name(name);
    c->set_found(found);
    if (found) c->add_access_modes(mode);
    c->set_pod_refs(refs);
    return *this;
  }
  ClaimPod& With(pb::InlineDisk d) {
    *pod_.add_inline_disks() = std::move(d);
    return *this;
  }
  const pb::Pod& Obj() const { return pod_; }

 private:
  pb::Pod pod_;
};

// PreFilter then, unless it stopped the pod, Filter on `node`.
PluginStatus RunPlugin(const pb::Pod& pod, const pb::Node& node,
                       absl::Span<const int64_t> freed = {}) {
  VolumeRestrictions pl;
  CycleState state;
  state.BindFreedClaimRefs(freed);
  PluginStatus pre = pl.PreFilter(state, pod);
  if (pre.code == Code::kSkip) return pre;
  if (!pre.ok()) return pre;
  return pl.Filter(state, pod, node);
}

TEST(VolumeRestrictionsTest, ConflictRules) {
  using VR = VolumeRestrictions;
  const auto gce = pb::DISK_KIND_GCE_PD;
  EXPECT_TRUE(VR::Conflict(Disk(gce, "a"), Disk(gce, "a")));
  EXPECT_TRUE(VR::Conflict(Disk(gce, "a", true), Disk(gce, "a")));
  EXPECT_FALSE(VR::Conflict(Disk(gce, "a", true), Disk(gce, "a", true)));
  EXPECT_FALSE(VR::Conflict(Disk(gce, "a"), Disk(gce, "b")));
  // EBS conflicts even when both are read-only.
  const auto ebs = pb::DISK_KIND_AWS_EBS;
  EXPECT_TRUE(VR::Conflict(Disk(ebs, "v", true), Disk(ebs, "v", true)));
  EXPECT_FALSE(VR::Conflict(Disk(ebs, "v"), Disk(gce, "v")));
  const auto iscsi = pb::DISK_KIND_ISCSI;
  EXPECT_TRUE(VR::Conflict(Disk(iscsi, "iqn"), Disk(iscsi, "iqn", true)));
  EXPECT_FALSE(
      VR::Conflict(Disk(iscsi, "iqn", true), Disk(iscsi, "iqn", true)));
  // RBD: a shared monitor, the same pool and image.
  const auto rbd = pb::DISK_KIND_RBD;
  EXPECT_TRUE(VR::Conflict(Disk(rbd, "img", false, "p", {"m1", "m2"}),
                           Disk(rbd, "img", true, "p", {"m2"})));
  EXPECT_FALSE(VR::Conflict(Disk(rbd, "img", false, "p", {"m1"}),
                            Disk(rbd, "img", false, "p", {"m2"})));
  EXPECT_FALSE(VR::Conflict(Disk(rbd, "img", false, "p", {"m1"}),
                            Disk(rbd, "img", false, "q", {"m1"})));
  EXPECT_FALSE(VR::Conflict(Disk(rbd, "img", true, "p", {"m1"}),
                            Disk(rbd, "img", true, "p", {"m1"})));
}

TEST(VolumeRestrictionsTest, DiskConflictOnTheNode) {
  const pb::Pod pod = ClaimPod().With(Disk(pb::DISK_KIND_GCE_PD, "pd")).Obj();
  pb::Node free = MakeNode().Name("n1").Obj();
  EXPECT_TRUE(RunPlugin(pod, free).ok());
  pb::Node used = free;
  *used.add_disks() = Disk(pb::DISK_KIND_GCE_PD, "pd", true);
  PluginStatus s = RunPlugin(pod, used);
  EXPECT_EQ(s.code, Code::kUnschedulable);
  EXPECT_THAT(s.reasons,
              ::testing::ElementsAre("node(s) had no available disk"));
}

TEST(VolumeRestrictionsTest, SkipsWithoutDisksOrClaimsInUse) {
  EXPECT_EQ(RunPlugin(ClaimPod().Obj(), MakeNode().Name("n").Obj()).code,
            Code::kSkip);
  // A ReadWriteOnce claim in use, or a ReadWriteOncePod one unused.
  EXPECT_EQ(RunPlugin(ClaimPod()
                          .Claim("a", "ReadWriteOnce", 3)
                          .Claim("b", "ReadWriteOncePod", 0)
                          .Obj(),
                      MakeNode().Name("n").Obj())
                .code,
            Code::kSkip);
}

TEST(VolumeRestrictionsTest, ReadWriteOncePodInUse) {
  const pb::Pod pod = ClaimPod().Claim("a", "ReadWriteOncePod", 1).Obj();
  PluginStatus s = RunPlugin(pod, MakeNode().Name("n").Obj());
  EXPECT_EQ(s.code, Code::kUnschedulable);
  EXPECT_THAT(
      s.reasons,
      ::testing::ElementsAre(
          "node(s) unavailable due to PersistentVolumeClaim with "
          "ReadWriteOncePod access mode already in-use by another pod"));
  // Preemption removed the pod using it.
  const int64_t freed[] = {1};
  EXPECT_EQ(RunPlugin(pod, MakeNode().Name("n").Obj(), freed).code,
            Code::kSkip);
}

TEST(VolumeRestrictionsTest, ClaimCountsOncePerNameHoweverManyUseIt) {
  // Upstream's IsPVCUsedByPods adds one per claim, RemovePod one per
  // removed pod's volume: two users, one removed, and the pod fits.
  const pb::Pod pod = ClaimPod().Claim("a", "ReadWriteOncePod", 2).Obj();
  const int64_t freed[] = {1};
  EXPECT_EQ(RunPlugin(pod, MakeNode().Name("n").Obj(), freed).code,
            Code::kSkip);
  // The same claim twice in the pod counts once.
  const pb::Pod twice = ClaimPod()
                            .Claim("a", "ReadWriteOncePod", 1)
                            .Claim("a", "ReadWriteOncePod", 1)
                            .Obj();
  const int64_t once[] = {1, 0};
  EXPECT_EQ(RunPlugin(twice, MakeNode().Name("n").Obj(), once).code,
            Code::kSkip);
}

TEST(VolumeRestrictionsTest, MissingClaim) {
  PluginStatus s = RunPlugin(ClaimPod()
                                 .Claim("a", "ReadWriteOnce", 0)
                                 .Claim("gone", "", 0, /*found=*/false)
                                 .Obj(),
                             MakeNode().Name("n").Obj());
  EXPECT_EQ(s.code, Code::kUnschedulableAndUnresolvable);
  EXPECT_THAT(s.reasons, ::testing::ElementsAre(
                             "persistentvolumeclaim \"gone\" not found"));
  // An ephemeral volume's claim is not read.
  EXPECT_EQ(
      RunPlugin(ClaimPod()
                    .Claim("p-eph", "", 0, /*found=*/false, /*ephemeral=*/true)
                    .Obj(),
                MakeNode().Name("n").Obj())
          .code,
      Code::kSkip);
}

TEST(VolumeRestrictionsTest, StateRoundTrips) {
  VolumeRestrictions::PreFilterState s{{0, 3}, 2};
  absl::StatusOr<VolumeRestrictions::PreFilterState> back =
      VolumeRestrictions::PreFilterState::Decode(s.Encode());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->rwop_claims, s.rwop_claims);
  EXPECT_EQ(back->conflicts, 2);
  EXPECT_FALSE(VolumeRestrictions::PreFilterState::Decode("x;1").ok());
}

TEST(VolumeRestrictionsTest, HintOnAssignedPodDelete) {
  VolumeRestrictions pl;
  const pb::Pod pod = ClaimPod()
                          .Claim("a", "ReadWriteOncePod", 1)
                          .With(Disk(pb::DISK_KIND_AWS_EBS, "vol"))
                          .Obj();
  model::EventObjects e;
  e.event =
      model::MakeEvent(pb::EVENT_RESOURCE_ASSIGNED_POD, model::action::kDelete);
  pb::Pod deleted = MakePod().Name("d").Obj();
  e.old_pod = &deleted;
  EXPECT_EQ(pl.Hint(pod, e), model::QueueingHint::kQueueSkip);
  *deleted.add_inline_disks() = Disk(pb::DISK_KIND_AWS_EBS, "vol");
  EXPECT_EQ(pl.Hint(pod, e), model::QueueingHint::kQueue);
  deleted.clear_inline_disks();
  pb::VolumeClaim* c = deleted.add_volume_claims();
  c->set_claim_name("a");
  EXPECT_EQ(pl.Hint(pod, e), model::QueueingHint::kQueue);
  deleted.set_namespace_("other");
  EXPECT_EQ(pl.Hint(pod, e), model::QueueingHint::kQueueSkip);
}

}  // namespace
}  // namespace kscore::plugins
