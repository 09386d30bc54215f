// The cache's NodeVolumeLimits bookkeeping: Node.csi_drivers and
// volumes_in_use as pods, claims, volumes, classes, CSINodes and
// VolumeAttachments change, in any order.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/node_key.h"
#include "nlohmann/json.hpp"
#include "shim/cache/cache.h"
#include "shim/cache/testing/candidates.h"
#include "shim/objects/storage.h"

namespace kscore::cache {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;

constexpr char kEbs[] = "ebs.csi.aws.com";

std::shared_ptr<const objects::ClaimInfo> Claim(const std::string& name,
                                                const std::string& volume,
                                                const std::string& cls = "") {
  json spec = {{"volumeName", volume}};
  if (!cls.empty()) spec["storageClassName"] = cls;
  auto c = objects::ClaimFromJson(
      {{"metadata", {{"namespace", "ns"}, {"name", name}, {"uid", name}}},
       {"spec", spec}});
  EXPECT_TRUE(c.ok()) << c.status();
  return std::make_shared<objects::ClaimInfo>(*c);
}

std::shared_ptr<const objects::VolumeInfo> Csi(const std::string& name,
                                               const std::string& driver) {
  auto v = objects::VolumeFromJson(
      {{"metadata", {{"name", name}}},
       {"spec",
        {{"csi", {{"driver", driver}, {"volumeHandle", "h-" + name}}}}}});
  EXPECT_TRUE(v.ok()) << v.status();
  return std::make_shared<objects::VolumeInfo>(*v);
}

std::shared_ptr<const objects::StorageClassInfo> Class(
    const std::string& name, const std::string& provisioner) {
  auto c = objects::StorageClassFromJson(
      {{"metadata", {{"name", name}}}, {"provisioner", provisioner}});
  EXPECT_TRUE(c.ok()) << c.status();
  return std::make_shared<objects::StorageClassInfo>(*c);
}

objects::CsiNodeInfo CsiNode(const std::string& node, int64_t limit) {
  auto n = objects::CsiNodeFromJson(
      {{"metadata", {{"name", node}}},
       {"spec",
        {{"drivers",
          {{{"name", kEbs}, {"allocatable", {{"count", limit}}}},
           {{"name", "other"}}}}}}});
  EXPECT_TRUE(n.ok()) << n.status();
  return *n;
}

objects::AttachmentInfo Attachment(const std::string& name,
                                   const std::string& node,
                                   const std::string& volume) {
  auto a = objects::AttachmentFromJson(
      {{"metadata", {{"name", name}}},
       {"spec",
        {{"attacher", kEbs},
         {"nodeName", node},
         {"source", {{"persistentVolumeName", volume}}}}}});
  EXPECT_TRUE(a.ok()) << a.status();
  return *a;
}

objects::PodInfo Pod(const std::string& name, const std::string& node,
                     const std::vector<std::string>& claims) {
  objects::PodInfo p;
  p.namespace_ = "ns";
  p.name = name;
  p.key = "ns/" + name;
  p.uid = name;
  p.node_name = node;
  p.phase = "Running";
  p.pod.set_namespace_("ns");
  p.pod.set_name(name);
  p.pod.set_uid(name);
  for (const std::string& c : claims) {
    pb::VolumeClaim* vc = p.pod.add_volume_claims();
    vc->set_volume(c);
    vc->set_claim_name(c);
  }
  return p;
}

pb::Node Node(const std::string& name) {
  pb::Node n;
  n.set_name(name);
  return n;
}

// The node `name` as a candidate for `incoming`.
pb::Node Candidate(const Cache& c, const objects::PodInfo& incoming) {
  google::protobuf::RepeatedPtrField<pb::Node> out;
  testing::FillCandidates(c, incoming, {}, 0, 100, &out);
  EXPECT_EQ(out.size(), 1);
  return out.empty() ? pb::Node() : out[0];
}

// The candidate's content key is its content's (model::NodeContentKey).
void ExpectKeyOfContent(const Cache& c, const objects::PodInfo& incoming) {
  std::string wire;
  c.AppendCandidates(incoming, {}, 0, 1, true, 4, &wire, nullptr, nullptr,
                     NodeForm::kFullWithKey);
  pb::FilterRequest req;
  ASSERT_TRUE(req.ParseFromString(wire));
  ASSERT_EQ(req.nodes_size(), 1);
  EXPECT_EQ(req.nodes(0).content_key(), model::NodeContentKey(req.nodes(0)));
}

int32_t Attached(const pb::Node& n) {
  for (const pb::CsiDriverUse& d : n.csi_drivers()) {
    if (d.name() == kEbs) return d.attached();
  }
  return -1;
}

TEST(CsiUsageTest, CountsDistinctVolumesOfPodsAndAttachments) {
  Cache c;
  c.UpsertNode(Node("n1"));
  c.UpsertCsiNode(CsiNode("n1", 3));
  c.volumes().UpsertVolume(Csi("pv1", kEbs));
  c.volumes().UpsertVolume(Csi("pv2", kEbs));
  c.volumes().UpsertVolume(Csi("pv3", kEbs));
  c.volumes().UpsertClaim(Claim("c1", "pv1"));
  c.volumes().UpsertClaim(Claim("c2", "pv2"));
  const objects::PodInfo incoming = Pod("new", "", {"c2", "c1"});
  pb::Node n = Candidate(c, incoming);
  ASSERT_EQ(n.csi_drivers_size(), 2);
  EXPECT_EQ(n.csi_drivers(0).limit(), 3);
  EXPECT_FALSE(n.csi_drivers(1).has_limit());
  EXPECT_EQ(Attached(n), 0);

  c.UpsertAssignedPod(Pod("a", "n1", {"c1"}));
  c.UpsertAssignedPod(Pod("b", "n1", {"c1", "c2"}));
  n = Candidate(c, incoming);
  EXPECT_EQ(Attached(n), 2);  // c1 once
  // The pod's claims resolve in order: c2 is index 0, c1 index 1.
  EXPECT_THAT(n.volumes_in_use(), ElementsAre(0, 1));
  // An attachment of a volume pods use counts once; another adds one.
  c.UpsertAttachment(Attachment("va2", "n1", "pv2"));
  EXPECT_EQ(Attached(Candidate(c, incoming)), 2);
  c.UpsertAttachment(Attachment("va3", "n1", "pv3"));
  EXPECT_EQ(Attached(Candidate(c, incoming)), 3);

  c.RemovePod("ns/b");  // c2 stays attached (va2), no longer in use by pods
  n = Candidate(c, incoming);
  EXPECT_EQ(Attached(n), 3);
  EXPECT_THAT(n.volumes_in_use(), ElementsAre(1));
  c.RemoveAttachment("va2");
  c.RemoveAttachment("va3");
  EXPECT_EQ(Attached(Candidate(c, incoming)), 1);
  c.RemoveCsiNode("n1");
  EXPECT_EQ(Candidate(c, incoming).csi_drivers_size(), 0);
}

TEST(CsiUsageTest, FollowsClaimsVolumesAndClassesInAnyOrder) {
  Cache c;
  c.UpsertNode(Node("n1"));
  c.UpsertCsiNode(CsiNode("n1", 5));
  // The attachment and pod come before what they name.
  c.UpsertAttachment(Attachment("va", "n1", "pv9"));
  c.UpsertAssignedPod(Pod("a", "n1", {"c1"}));
  const objects::PodInfo incoming = Pod("new", "", {});
  EXPECT_EQ(Attached(Candidate(c, incoming)), 0);
  c.volumes().UpsertVolume(Csi("pv9", kEbs));
  EXPECT_EQ(Attached(Candidate(c, incoming)), 1);
  // A claim without its volume counts by its class's provisioner.
  c.volumes().UpsertClass(Class("fast", kEbs));
  c.volumes().UpsertClaim(Claim("c1", "pv1", "fast"));
  const std::string before = Candidate(c, incoming).SerializeAsString();
  EXPECT_EQ(Attached(Candidate(c, incoming)), 2);
  c.volumes().UpsertVolume(Csi("pv1", kEbs));
  EXPECT_EQ(Attached(Candidate(c, incoming)), 2);
  c.volumes().UpsertVolume(Csi("pv1", "other"));
  EXPECT_EQ(Attached(Candidate(c, incoming)), 1);
  c.volumes().RemoveVolume("pv1");
  EXPECT_EQ(Candidate(c, incoming).SerializeAsString(), before);
  c.volumes().RemoveClass("fast");
  EXPECT_EQ(Attached(Candidate(c, incoming)), 1);
  c.volumes().RemoveVolume("pv9");
  EXPECT_EQ(Attached(Candidate(c, incoming)), 0);
}

TEST(CsiUsageTest, ContentKeyFollowsTheCounts) {
  Cache c;
  c.UpsertNode(Node("n1"));
  c.UpsertCsiNode(CsiNode("n1", 5));
  c.volumes().UpsertVolume(Csi("pv1", kEbs));
  const objects::PodInfo incoming = Pod("new", "", {});
  std::string wire;
  c.AppendCandidates(incoming, {}, 0, 1, false, 4, &wire, nullptr, nullptr,
                     NodeForm::kFullWithKey);
  pb::FilterRequest first;
  ASSERT_TRUE(first.ParseFromString(wire));
  c.UpsertAttachment(Attachment("va", "n1", "pv1"));
  wire.clear();
  c.AppendCandidates(incoming, {}, 0, 1, false, 4, &wire, nullptr, nullptr,
                     NodeForm::kFullWithKey);
  pb::FilterRequest second;
  ASSERT_TRUE(second.ParseFromString(wire));
  EXPECT_NE(first.nodes(0).content_key(), second.nodes(0).content_key());
}

TEST(CsiUsageTest, PodVolumesListTheAttachableOnes) {
  Cache c;
  c.volumes().UpsertVolume(Csi("pv1", kEbs));
  c.volumes().UpsertClaim(Claim("c1", "pv1"));
  c.volumes().UpsertClaim(Claim("c2", "", "fast"));
  c.volumes().UpsertClass(Class("fast", "other"));
  auto driver = objects::CsiDriverFromJson(
      {{"metadata", {{"name", "other"}}},
       {"spec", {{"preventPodSchedulingIfMissing", true}}}});
  ASSERT_TRUE(driver.ok());
  c.volumes().UpsertDriver(std::make_shared<objects::CsiDriverInfo>(*driver));
  const pb::Pod pod = c.PodFor(Pod("new", "", {"c1", "c2", "c1", "gone"}),
                               {pb::POD_DATA_VOLUMES});
  ASSERT_EQ(pod.volumes().attachable_size(), 2);
  EXPECT_EQ(pod.volumes().attachable(0).driver(), kEbs);
  EXPECT_FALSE(pod.volumes().attachable(0).required_on_node());
  EXPECT_EQ(pod.volumes().attachable(1).driver(), "other");
  EXPECT_TRUE(pod.volumes().attachable(1).required_on_node());
}

// Preemption: the CSI volumes the lower-priority pods use, how many pods
// use each, a VolumeAttachment naming one, and the preemptor's own.
TEST(CsiUsageTest, PreemptionNodesCarryTheVictimsVolumes) {
  Cache c;
  c.UpsertNode(Node("n1"));
  c.UpsertCsiNode(CsiNode("n1", 3));
  for (const char* v : {"pv1", "pv2", "pv3"}) {
    c.volumes().UpsertVolume(Csi(v, kEbs));
    c.volumes().UpsertClaim(Claim(std::string("c") + v, v));
  }
  c.UpsertAttachment(Attachment("va3", "n1", "pv3"));
  objects::PodInfo low = Pod("low", "n1", {"cpv1", "cpv2"});
  low.priority = 1;
  objects::PodInfo low2 = Pod("low2", "n1", {"cpv3", "cpv1"});
  low2.priority = 1;
  objects::PodInfo high = Pod("high", "n1", {"cpv2"});
  high.priority = 1000;
  for (const objects::PodInfo& p : {low, low2, high}) c.UpsertAssignedPod(p);
  objects::PodInfo preemptor = Pod("new", "", {"cpv1"});
  preemptor.priority = 100;
  preemptor.pod = c.PodFor(preemptor, {pb::POD_DATA_VOLUMES});

  google::protobuf::RepeatedPtrField<pb::PreemptionNode> out;
  ASSERT_EQ(testing::FillPreemptionNodes(c, preemptor, preemptor.pod, {},
                                         {"n1"}, false, pb::PlanResponse(),
                                         nullptr, 100, &out),
            1u);
  const pb::PreemptionNode& pn = out[0];
  ASSERT_EQ(pn.pods_size(), 2);
  ASSERT_EQ(pn.csi_volumes_size(), 3);
  // In the order the victims name them: pv1, pv2 (low), pv3 (low2).
  const pb::CandidateCsiVolume& v1 = pn.csi_volumes(0);
  EXPECT_EQ(v1.driver(), kEbs);
  EXPECT_EQ(v1.pods(), 2);
  EXPECT_FALSE(v1.has_attacher());
  EXPECT_EQ(v1.preemptor_volume(), 0);
  EXPECT_EQ(pn.csi_volumes(1).pods(), 2);  // high uses pv2 too
  EXPECT_FALSE(pn.csi_volumes(1).has_preemptor_volume());
  EXPECT_EQ(pn.csi_volumes(2).pods(), 1);
  EXPECT_EQ(pn.csi_volumes(2).attacher(), kEbs);
  ASSERT_EQ(pn.pods(0).name(), "low");  // the node's pods in order
  EXPECT_THAT(pn.pods(0).csi_volumes(), ElementsAre(0, 1));
  EXPECT_THAT(pn.pods(1).csi_volumes(), ElementsAre(2, 0));

  // The same from the victims alone (the oracle driver's way).
  pb::PreemptionNode again;
  *again.mutable_pods() = pn.pods();
  for (pb::VictimPod& v : *again.mutable_pods()) v.clear_csi_volumes();
  c.AddCandidateCsiVolumes("n1", preemptor.pod, &again);
  EXPECT_EQ(again.csi_volumes_size(), 3);
  EXPECT_THAT(again.pods(1).csi_volumes(), ElementsAre(2, 0));
  EXPECT_EQ(again.csi_volumes(0).preemptor_volume(), 0);
}

std::shared_ptr<const objects::VolumeInfo> InTree(const std::string& name,
                                                  const json& spec) {
  auto v =
      objects::VolumeFromJson({{"metadata", {{"name", name}}}, {"spec", spec}});
  EXPECT_TRUE(v.ok()) << v.status();
  return std::make_shared<objects::VolumeInfo>(*v);
}

// An in-tree inline volume after the pod's claims so far.
void AddInline(objects::PodInfo* p, const std::string& name,
               const std::string& plugin, const std::string& id,
               const std::string& kind = "") {
  pb::InTreeVolume* v = p->pod.add_in_tree_volumes();
  v->set_name(name);
  v->set_plugin(plugin);
  v->set_id(id);
  v->set_claims_before(p->pod.volume_claims_size());
  if (!kind.empty()) v->set_azure_kind(kind);
}

TEST(CsiUsageTest, PodVolumesTranslateInTreeVolumes) {
  Cache c;
  c.volumes().UpsertVolume(InTree(
      "pv-aws", {{"awsElasticBlockStore", {{"volumeID", "aws://z/vol-1"}}}}));
  c.volumes().UpsertVolume(Csi("pv-csi", kEbs));
  c.volumes().UpsertVolume(
      InTree("pv-bad",
             {{"azureDisk", {{"diskURI", "https://d"}, {"kind", "Shared"}}}}));
  c.volumes().UpsertClass(Class("gp", "kubernetes.io/gce-pd"));
  c.volumes().UpsertClass(Class("af", "kubernetes.io/azure-file"));
  c.volumes().UpsertClaim(Claim("c-aws", "pv-aws"));
  // The CSI volume of the same disk: h-pv-csi is not vol-1, so name it so.
  auto same = objects::VolumeFromJson(
      {{"metadata", {{"name", "pv-same"}}},
       {"spec", {{"csi", {{"driver", kEbs}, {"volumeHandle", "vol-1"}}}}}});
  ASSERT_TRUE(same.ok());
  c.volumes().UpsertVolume(std::make_shared<objects::VolumeInfo>(*same));
  c.volumes().UpsertClaim(Claim("c-same", "pv-same"));
  c.volumes().UpsertClaim(Claim("c-gp", "", "gp"));
  c.volumes().UpsertClaim(Claim("c-af", "", "af"));
  c.volumes().UpsertClaim(Claim("c-bad", "pv-bad"));
  objects::PodInfo incoming = Pod("new", "", {});
  AddInline(&incoming, "cv", objects::kPluginCinder, "cinder-1");
  for (const char* claim : {"c-aws", "c-same"}) {
    pb::VolumeClaim* vc = incoming.pod.add_volume_claims();
    vc->set_volume(claim);
    vc->set_claim_name(claim);
  }
  AddInline(&incoming, "bad", objects::kPluginAwsEbs, "aws://z/x");
  for (const char* claim : {"c-gp", "c-af", "c-bad"}) {
    pb::VolumeClaim* vc = incoming.pod.add_volume_claims();
    vc->set_volume(claim);
    vc->set_claim_name(claim);
  }
  AddInline(&incoming, "worse", objects::kPluginAzureDisk, "u", "Dedicated");
  AddInline(&incoming, "file", objects::kPluginAzureFile, "");
  const pb::Pod pod = c.PodFor(incoming, {pb::POD_DATA_VOLUMES});
  const auto& a = pod.volumes().attachable();
  ASSERT_EQ(a.size(), 3);
  EXPECT_EQ(a[0].driver(), "cinder.csi.openstack.org");
  EXPECT_TRUE(a[0].migrated());
  // The in-tree PV and the CSI one are one disk, counted on every node.
  EXPECT_EQ(a[1].driver(), kEbs);
  EXPECT_FALSE(a[1].migrated());
  EXPECT_EQ(a[2].driver(), "pd.csi.storage.gke.io");
  EXPECT_TRUE(a[2].migrated());
  ASSERT_TRUE(pod.volumes().has_migration_error());
  EXPECT_EQ(pod.volumes().migration_error().message(),
            "converting volume(bad) from inline to csi: failed to translate "
            "Kubernetes ID to EBS Volume ID Invalid format for AWS volume "
            "(aws://z/x)");
  EXPECT_EQ(pod.volumes().migration_error().claims_before(), 2);
  // A pod with in-tree volumes only gets its volumes too.
  objects::PodInfo only = Pod("only", "", {});
  AddInline(&only, "g", objects::kPluginGcePd, "pd");
  const pb::Pod alone = c.PodFor(only, {pb::POD_DATA_VOLUMES});
  ASSERT_EQ(alone.volumes().attachable_size(), 1);
  EXPECT_TRUE(alone.volumes().attachable(0).migrated());
}

TEST(CsiUsageTest, NodesCountTheirPodsInlineVolumesAndTheirErrors) {
  Cache c;
  c.UpsertNode(Node("n1"));
  c.UpsertCsiNode(CsiNode("n1", 3));
  auto same = objects::VolumeFromJson(
      {{"metadata", {{"name", "pv1"}}},
       {"spec", {{"csi", {{"driver", kEbs}, {"volumeHandle", "vol-1"}}}}}});
  ASSERT_TRUE(same.ok());
  c.volumes().UpsertVolume(std::make_shared<objects::VolumeInfo>(*same));
  c.volumes().UpsertClaim(Claim("c1", "pv1"));
  const objects::PodInfo incoming = Pod("new", "", {"c1"});
  objects::PodInfo a = Pod("a", "n1", {});
  AddInline(&a, "e", objects::kPluginAwsEbs, "aws://us-east-1a/vol-1");
  c.UpsertAssignedPod(a);
  pb::Node n = Candidate(c, incoming);
  EXPECT_EQ(Attached(n), 1);
  EXPECT_THAT(n.volumes_in_use(), ElementsAre(0));  // the same disk
  EXPECT_TRUE(n.has_csi_node());
  EXPECT_EQ(n.volume_error(), "");
  objects::PodInfo b = Pod("b", "n1", {});
  AddInline(&b, "d", objects::kPluginAzureDisk, "https://x/d", "Shared");
  c.UpsertAssignedPod(b);
  n = Candidate(c, incoming);
  EXPECT_EQ(n.volume_error(),
            "converting volume(d) from inline to csi: kind(Shared) is not "
            "supported in csi migration");
  EXPECT_EQ(Attached(n), 1);
  ExpectKeyOfContent(c, incoming);
  // With two, the one added first (upstream's NodeInfo order), not by name.
  objects::PodInfo early = Pod("0", "n1", {});
  AddInline(&early, "x", objects::kPluginAwsEbs, "aws://z/bad");
  c.UpsertAssignedPod(early);
  EXPECT_EQ(Candidate(c, incoming).volume_error(), n.volume_error());
  c.RemovePod("ns/b");
  EXPECT_EQ(Candidate(c, incoming).volume_error(),
            "converting volume(x) from inline to csi: failed to translate "
            "Kubernetes ID to EBS Volume ID Invalid format for AWS volume "
            "(aws://z/bad)");
  c.RemovePod("ns/0");
  EXPECT_EQ(Candidate(c, incoming).volume_error(), "");
  c.RemovePod("ns/a");
  EXPECT_EQ(Attached(Candidate(c, incoming)), 0);
}

TEST(CsiUsageTest, ACsiNodeWithoutDriversStillCounts) {
  Cache c;
  c.UpsertNode(Node("n1"));
  const objects::PodInfo incoming = Pod("new", "", {});
  EXPECT_FALSE(Candidate(c, incoming).has_csi_node());
  auto empty = objects::CsiNodeFromJson({{"metadata", {{"name", "n1"}}}});
  ASSERT_TRUE(empty.ok());
  c.UpsertCsiNode(*empty);
  pb::Node n = Candidate(c, incoming);
  EXPECT_TRUE(n.has_csi_node());
  EXPECT_EQ(n.csi_drivers_size(), 0);
  c.UpsertCsiNode(CsiNode("n1", 2));
  EXPECT_EQ(Candidate(c, incoming).csi_drivers_size(), 2);
  c.RemoveCsiNode("n1");
  EXPECT_FALSE(Candidate(c, incoming).has_csi_node());
  // A CSINode of a node that does not exist (yet) is kept, then dropped.
  c.UpsertCsiNode(*empty);
  empty->name = "n2";
  c.UpsertCsiNode(*empty);
  c.RemoveCsiNode("n2");
  c.UpsertNode(Node("n2"));
  google::protobuf::RepeatedPtrField<pb::Node> out;
  testing::FillCandidates(c, incoming, {}, 0, 100, &out);
  ASSERT_EQ(out.size(), 2);
  EXPECT_TRUE(out[0].has_csi_node());
  EXPECT_FALSE(out[1].has_csi_node());
}

}  // namespace
}  // namespace kscore::cache
