#include "scorer/plugins/node_volume_limits.h"

#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scorer/testing/wrappers.h"

namespace kscore::plugins {
namespace {

using ::kscore::testing::MakeNode;
using ::kscore::testing::MakePod;
using ::testing::ElementsAre;
namespace pb = framework::pb;
using framework::Code;
using framework::CycleState;
using framework::PluginStatus;

constexpr char kEbs[] = "ebs.csi.aws.com";
constexpr char kGce[] = "pd.csi.storage.gke.io";

// A pod with claims, each found (and, if ephemeral, its own) unless said.
class VolumePod {
 public:
  VolumePod() : pod_(MakePod().Name("p").Obj()) { pod_.set_namespace_("ns"); }
  VolumePod& Claim(const std::string& name, bool found = true) {
    pod_.add_volume_claims()->set_claim_name(name);
    pb::ClaimState* c = pod_.mutable_volumes()->add_claims();
    c->set_name(name);
    c->set_found(found);
    return *this;
  }
  VolumePod& Ephemeral(const std::string& volume, bool owned) {
    pb::VolumeClaim* vc = pod_.add_volume_claims();
    vc->set_volume(volume);
    vc->set_ephemeral(true);
    pb::ClaimState* c = pod_.mutable_volumes()->add_claims();
    c->set_name("p-" + volume);
    c->set_found(true);
    c->set_owned_by_pod(owned);
    return *this;
  }
  VolumePod& Attach(const std::string& driver, bool required = false,
                    bool migrated = false) {
    pb::AttachableVolume* v = pod_.mutable_volumes()->add_attachable();
    v->set_driver(driver);
    v->set_required_on_node(required);
    v->set_migrated(migrated);
    return *this;
  }
  // An in-tree inline volume (CSI migration), after the claims so far.
  VolumePod& Inline(const std::string& plugin) {
    pb::InTreeVolume* v = pod_.add_in_tree_volumes();
    v->set_name("inline");
    v->set_plugin(plugin);
    v->set_claims_before(pod_.volume_claims_size());
    return *this;
  }
  // The inline volume added last fails translation.
  VolumePod& Fails(const std::string& message) {
    pb::MigrationError* e = pod_.mutable_volumes()->mutable_migration_error();
    e->set_message(message);
    e->set_claims_before(pod_.in_tree_volumes().rbegin()->claims_before());
    return *this;
  }
  const pb::Pod& Obj() const { return pod_; }

 private:
  pb::Pod pod_;
};

// A node whose CSINode lists `drivers` (no CSINode when none) and the
// indexes of the pod's volumes in use there.
pb::Node Node(std::vector<pb::CsiDriverUse> drivers,
              std::vector<int32_t> in_use = {}) {
  pb::Node n = MakeNode().Name("n").Obj();
  for (const pb::CsiDriverUse& d : drivers) *n.add_csi_drivers() = d;
  for (int32_t i : in_use) n.add_volumes_in_use(i);
  n.set_has_csi_node(!drivers.empty());
  return n;
}

pb::Node EmptyCsiNode() {
  pb::Node n = Node({});
  n.set_has_csi_node(true);
  return n;
}

pb::CsiDriverUse Driver(const std::string& name, std::optional<int64_t> limit,
                        int32_t attached = 0) {
  pb::CsiDriverUse d;
  d.set_name(name);
  if (limit.has_value()) d.set_limit(*limit);
  d.set_attached(attached);
  return d;
}

PluginStatus RunFilter(const pb::Pod& pod, const pb::Node& node) {
  NodeVolumeLimits pl;
  CycleState state;
  PluginStatus s = pl.PreFilter(state, pod);
  if (s.code == Code::kSkip) return PluginStatus::Success();
  if (!s.ok()) return s;
  return pl.Filter(state, pod, node);
}

TEST(NodeVolumeLimitsTest, SkipsPodsWithoutClaims) {
  NodeVolumeLimits pl;
  CycleState state;
  EXPECT_EQ(pl.PreFilter(state, MakePod().Name("p").Obj()).code, Code::kSkip);
  EXPECT_TRUE(pl.PreFilter(state, VolumePod().Claim("c").Obj()).ok());
  // In-tree volumes CSI migration knows, even those it never counts.
  EXPECT_TRUE(
      pl.PreFilter(state, VolumePod().Inline("kubernetes.io/azure-file").Obj())
          .ok());
}

TEST(NodeVolumeLimitsTest, MigratedVolumesCountOnNodesWithACsiNode) {
  const pb::Pod pod = VolumePod()
                          .Inline("kubernetes.io/aws-ebs")
                          .Attach(kEbs, true, true)
                          .Obj();
  // No CSINode: not counted, so not required either.
  EXPECT_TRUE(RunFilter(pod, Node({})).ok());
  PluginStatus s = RunFilter(pod, EmptyCsiNode());
  EXPECT_EQ(s.code, Code::kUnschedulable);
  EXPECT_THAT(s.reasons, ElementsAre("ebs.csi.aws.com CSI driver is not "
                                     "installed on the node"));
  EXPECT_EQ(RunFilter(pod, Node({Driver(kEbs, 1, 1)})).code,
            Code::kUnschedulable);
  EXPECT_TRUE(RunFilter(pod, Node({Driver(kEbs, 2, 1)})).ok());
  // Also used without migration: counted everywhere.
  const pb::Pod both = VolumePod().Claim("a").Attach(kEbs, true, false).Obj();
  EXPECT_EQ(RunFilter(both, Node({})).code, Code::kUnschedulable);
}

TEST(NodeVolumeLimitsTest, FailedInlineTranslationOnNodesWithACsiNode) {
  const char kMessage[] =
      "converting volume(inline) from inline to csi: kind(Shared) is not "
      "supported in csi migration";
  const pb::Pod pod = VolumePod()
                          .Claim("a")
                          .Inline("kubernetes.io/azure-disk")
                          .Fails(kMessage)
                          .Claim("gone", false)
                          .Obj();
  PluginStatus s = RunFilter(pod, EmptyCsiNode());
  EXPECT_EQ(s.code, Code::kError);
  EXPECT_THAT(s.reasons, ElementsAre(kMessage));
  // Without a CSINode upstream skips the volume and finds the claim missing.
  EXPECT_EQ(RunFilter(pod, Node({})).code, Code::kUnschedulableAndUnresolvable);
  // A missing claim before the volume comes first.
  const pb::Pod after = VolumePod()
                            .Claim("gone", false)
                            .Inline("kubernetes.io/azure-disk")
                            .Fails(kMessage)
                            .Obj();
  EXPECT_EQ(RunFilter(after, EmptyCsiNode()).code,
            Code::kUnschedulableAndUnresolvable);
}

TEST(NodeVolumeLimitsTest, NodesPodsVolumeErrorOnceLimitsCount) {
  pb::Node node = Node({Driver(kEbs, 5)});
  node.set_volume_error("converting volume(x) from inline to csi: boom");
  PluginStatus s = RunFilter(VolumePod().Claim("a").Attach(kEbs).Obj(), node);
  EXPECT_EQ(s.code, Code::kError);
  EXPECT_THAT(s.reasons,
              ElementsAre("converting volume(x) from inline to csi: boom"));
  // Upstream reads the node's pods only for a pod with volumes to count,
  // on a node with limits.
  EXPECT_TRUE(RunFilter(VolumePod().Claim("a").Obj(), node).ok());
  node.mutable_csi_drivers(0)->clear_limit();
  EXPECT_TRUE(RunFilter(VolumePod().Claim("a").Attach(kEbs).Obj(), node).ok());
}

TEST(NodeVolumeLimitsTest, CountsAttachedAndNewAgainstLimit) {
  const pb::Pod pod =
      VolumePod().Claim("a").Claim("b").Attach(kEbs).Attach(kEbs).Obj();
  // 2 in use + 2 new against 4: fits; against 3: does not.
  EXPECT_TRUE(RunFilter(pod, Node({Driver(kEbs, 4, 2)})).ok());
  PluginStatus s = RunFilter(pod, Node({Driver(kEbs, 3, 2)}));
  EXPECT_EQ(s.code, Code::kUnschedulable);
  EXPECT_THAT(s.reasons, ElementsAre("node(s) exceed max volume count"));
  // A limit of 0 takes no new volume.
  EXPECT_EQ(RunFilter(pod, Node({Driver(kEbs, 0)})).code, Code::kUnschedulable);
}

TEST(NodeVolumeLimitsTest, VolumesInUseOnTheNodeCountOnce) {
  const pb::Pod pod =
      VolumePod().Claim("a").Claim("b").Attach(kEbs).Attach(kEbs).Obj();
  // Volume 1 is already used by a pod there (and counted in attached).
  EXPECT_TRUE(RunFilter(pod, Node({Driver(kEbs, 3, 2)}, {1})).ok());
  EXPECT_FALSE(RunFilter(pod, Node({Driver(kEbs, 2, 2)}, {1})).ok());
  // Indexes past the list are ignored.
  EXPECT_FALSE(RunFilter(pod, Node({Driver(kEbs, 3, 2)}, {7})).ok());
}

TEST(NodeVolumeLimitsTest, OnlyDriversWithLimitsCount) {
  const pb::Pod pod = VolumePod().Claim("a").Attach(kGce).Obj();
  EXPECT_TRUE(RunFilter(pod, Node({Driver(kEbs, 0)})).ok());
  EXPECT_TRUE(RunFilter(pod, Node({Driver(kGce, std::nullopt, 9)})).ok());
  EXPECT_TRUE(RunFilter(pod, Node({})).ok());
}

TEST(NodeVolumeLimitsTest, RequiredDriverMustBeOnTheNode) {
  const pb::Pod pod = VolumePod().Claim("a").Attach(kGce, true).Obj();
  PluginStatus s = RunFilter(pod, Node({Driver(kEbs, 5)}));
  EXPECT_EQ(s.code, Code::kUnschedulable);
  EXPECT_THAT(s.reasons,
              ElementsAre("pd.csi.storage.gke.io CSI driver is not installed "
                          "on the node"));
  EXPECT_EQ(RunFilter(pod, Node({})).code, Code::kUnschedulable);
  // Listed without a limit is installed.
  EXPECT_TRUE(RunFilter(pod, Node({Driver(kGce, std::nullopt)})).ok());
  // Not required: any node.
  EXPECT_TRUE(
      RunFilter(VolumePod().Claim("a").Attach(kGce).Obj(), Node({})).ok());
}

TEST(NodeVolumeLimitsTest, MissingClaimIsUnresolvable) {
  const pb::Pod pod = VolumePod().Claim("a").Claim("gone", false).Obj();
  PluginStatus s = RunFilter(pod, Node({}));
  EXPECT_EQ(s.code, Code::kUnschedulableAndUnresolvable);
  EXPECT_THAT(s.reasons,
              ElementsAre("looking up PVC ns/gone: persistentvolumeclaim "
                          "\"gone\" not found"));
}

TEST(NodeVolumeLimitsTest, EphemeralClaimOfAnotherIsAnError) {
  PluginStatus s =
      RunFilter(VolumePod().Ephemeral("scratch", false).Obj(), Node({}));
  EXPECT_EQ(s.code, Code::kError);
  EXPECT_THAT(s.reasons, ElementsAre("PVC ns/p-scratch was not created for "
                                     "pod ns/p (pod is not owner)"));
  EXPECT_TRUE(
      RunFilter(VolumePod().Ephemeral("scratch", true).Obj(), Node({})).ok());
}

TEST(NodeVolumeLimitsTest, Hints) {
  NodeVolumeLimits pl;
  model::EventObjects e;
  pb::Pod deleted = MakePod().Name("d").Obj();
  deleted.set_node_name("n");
  e.event =
      model::MakeEvent(pb::EVENT_RESOURCE_ASSIGNED_POD, model::action::kDelete);
  e.old_pod = &deleted;
  const pb::Pod pod = VolumePod().Claim("a").Obj();
  EXPECT_EQ(pl.Hint(pod, e), model::QueueingHint::kQueueSkip);
  deleted.add_in_tree_volumes()->set_plugin("kubernetes.io/gce-pd");
  EXPECT_EQ(pl.Hint(pod, e), model::QueueingHint::kQueue);
  deleted.clear_in_tree_volumes();
  deleted.add_volume_claims()->set_claim_name("x");
  EXPECT_EQ(pl.Hint(pod, e), model::QueueingHint::kQueue);

  e = {};
  e.event = model::MakeEvent(pb::EVENT_RESOURCE_VOLUME_ATTACHMENT,
                             model::action::kDelete);
  EXPECT_EQ(pl.Hint(pod, e), model::QueueingHint::kQueue);
  EXPECT_EQ(pl.Hint(VolumePod().Ephemeral("s", true).Obj(), e),
            model::QueueingHint::kQueueSkip);
  EXPECT_EQ(
      pl.Hint(VolumePod().Inline("kubernetes.io/vsphere-volume").Obj(), e),
      model::QueueingHint::kQueue);
}

}  // namespace
}  // namespace kscore::plugins
