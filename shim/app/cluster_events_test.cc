#include "shim/app/cluster_events.h"

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "model/cluster_event.h"
#include "nlohmann/json.hpp"
#include "shim/cache/testing/candidates.h"
#include "shim/objects/informer_codecs.h"
#include "tests/support/in_process_scorer.h"

namespace kscore::app {
namespace {

// The value of `key` in a map, or "<none>": a missing key fails the
// comparison instead of aborting the test binary (Map::at would).
std::string ValueOf(const google::protobuf::Map<std::string, std::string>& m,
                    const std::string& key) {
  auto it = m.find(key);
  return it == m.end() ? "<none>" : it->second;
}

// The real cache and queue: what the handlers leave in them is the test.
class ClusterEventsTest : public ::testing::Test {
 protected:
  ClusterEventsTest()
      : queue_({absl::Seconds(1), absl::Seconds(10), absl::Minutes(5),
                [] { return absl::Now(); }, nullptr, nullptr}),
        events_(&cache_, &queue_,
                [](const std::string& name) { return name == "ours"; }) {}

  static ClusterEvents::PodPtr Pod(const std::string& name,
                                   const std::string& scheduler,
                                   const std::string& node = "",
                                   nlohmann::json extra_spec = {}) {
    nlohmann::json spec = {{"schedulerName", scheduler},
                           {"containers", {{{"name", "c"}}}}};
    if (!node.empty()) spec["nodeName"] = node;
    for (auto& [k, v] : extra_spec.items()) spec[k] = v;
    auto pod = objects::PodFromJson(nlohmann::json{
        {"metadata",
         {{"name", name}, {"namespace", "default"}, {"uid", "u-" + name}}},
        {"spec", spec},
        {"status", {{"phase", "Pending"}}}});
    EXPECT_TRUE(pod.ok()) << pod.status();
    return std::make_shared<const objects::PodInfo>(*pod);
  }
  static ClusterEvents::NodePtr Node(const std::string& name,
                                     int64_t milli_cpu) {
    auto n = std::make_shared<objects::NodeInfo>();
    n->node.set_name(name);
    n->node.mutable_allocatable()->set_milli_cpu(milli_cpu);
    return n;
  }
  static ClusterEvents::NodePtr NodeWithImages(
      const std::string& name, int64_t milli_cpu,
      std::vector<objects::NodeImage> images) {
    auto n = std::make_shared<objects::NodeInfo>(*Node(name, milli_cpu));
    n->images = std::move(images);
    n->images_digest = objects::ImagesDigest(n->images);
    return n;
  }
  // What the node informer's store keeps of a node: old_obj of updates.
  static ClusterEvents::NodePtr Kept(const ClusterEvents::NodePtr& n) {
    return std::make_shared<objects::NodeInfo>(objects::NodeCodec().keep(*n));
  }
  // The size of `image` on `node` as the cache hands it to image locality;
  // -1 when the node does not have it.
  int64_t ImageSize(const std::string& node, const std::string& image) {
    objects::PodInfo incoming = *Pod("probe", "ours");
    incoming.pod.add_images(image);
    auto prepared = cache_.Prepare(incoming.pod, scorer::v1::PlanResponse());
    google::protobuf::RepeatedPtrField<scorer::v1::Node> out;
    testing::FillCandidates(cache_, incoming, {}, 0, 100, &out, true,
                            prepared.get());
    for (const scorer::v1::Node& n : out) {
      if (n.name() != node) continue;
      for (const scorer::v1::ImageState& i : n.images()) {
        if (i.name() == image) return i.size_bytes();
      }
    }
    return -1;
  }
  // Pops `key` and sends it back as unschedulable.
  // Rejected by `plugins` (none: by no plugin in particular), which
  // register what the scorer's in-tree plugins register.
  void MakeUnschedulable(const std::string& key,
                         std::vector<std::string> plugins = {}) {
    auto qp = queue_.Pop(absl::Seconds(1));
    ASSERT_TRUE(qp.has_value());
    ASSERT_EQ(qp->info->key, key);
    qp->unschedulable_plugins = std::move(plugins);
    qp->plugin_events = InTreeEvents();
    const size_t before = queue_.sizes().unschedulable;
    queue_.Requeue(*std::move(qp), /*unschedulable=*/true);
    ASSERT_EQ(queue_.sizes().unschedulable, before + 1);
  }
  void MakeUnschedulableAgain(queue::SchedulingQueue::QueuedPod qp) {
    qp.unschedulable_plugins = {"NodeResourcesFit"};
    qp.plugin_events = InTreeEvents();
    queue_.Requeue(std::move(qp), /*unschedulable=*/true);
  }
  static std::shared_ptr<const queue::PluginEvents> InTreeEvents() {
    static const auto* events = [] {
      auto* m = new queue::PluginEvents();
      auto events = testing::PluginEventsOf(
          "apiVersion: kubescheduler.config.k8s.io/v1\n"
          "kind: KubeSchedulerConfiguration\n",
          "default-scheduler");
      EXPECT_TRUE(events.ok()) << events.status();
      for (auto& [name, list] : *events) (*m)[name] = std::move(list);
      return m;
    }();
    return std::shared_ptr<const queue::PluginEvents>(
        std::shared_ptr<const queue::PluginEvents>(), events);
  }

  cache::Cache cache_;
  queue::SchedulingQueue queue_;
  ClusterEvents events_;
};

TEST_F(ClusterEventsTest, PendingPodsOfServedProfilesAreQueued) {
  events_.OnPod(Pod("a", "ours"));
  events_.OnPod(Pod("b", "default-scheduler"));  // not ours: never touched
  EXPECT_TRUE(queue_.Contains("default/a"));
  EXPECT_FALSE(queue_.Contains("default/b"));
  EXPECT_EQ(queue_.sizes().active, 1u);
}

TEST_F(ClusterEventsTest, GatedOrDeletingPodsLeaveTheQueue) {
  events_.OnPod(Pod("a", "ours"));
  events_.OnPod(
      Pod("a", "ours", "", {{"schedulingGates", {{{"name", "wait"}}}}}));
  EXPECT_FALSE(queue_.Contains("default/a"));
}

// scheduler_pending_pods{queue="gated"} counts gated pods of our profiles.
TEST_F(ClusterEventsTest, GatedPodsAreCountedUntilUngatedOrGone) {
  const nlohmann::json gates = {{"schedulingGates", {{{"name", "wait"}}}}};
  events_.OnPod(Pod("a", "ours", "", gates));
  events_.OnPod(Pod("b", "ours", "", gates));
  events_.OnPod(Pod("c", "default-scheduler", "", gates));  // not ours
  EXPECT_EQ(events_.gated(), 2u);
  events_.OnPod(Pod("a", "ours"));  // gate removed: queued
  EXPECT_EQ(events_.gated(), 1u);
  EXPECT_TRUE(queue_.Contains("default/a"));
  events_.OnPodDelete(Pod("b", "ours", "", gates));
  EXPECT_EQ(events_.gated(), 0u);
}

TEST_F(ClusterEventsTest, AssignedPodsGoToTheCacheAndLeaveTheQueue) {
  events_.OnNode(Node("n1", 4000));
  events_.OnPod(Pod("a", "ours"));
  events_.OnPod(Pod("a", "ours", "n1"));  // bound (by us or anyone)
  EXPECT_FALSE(queue_.Contains("default/a"));
  EXPECT_EQ(cache_.NodeOf("default/a"), "n1");
  // Pods of other schedulers count on their node too.
  events_.OnPod(Pod("b", "default-scheduler", "n1"));
  EXPECT_EQ(cache_.NodeOf("default/b"), "n1");
}

TEST_F(ClusterEventsTest, DeletingAnAssignedPodRequeuesUnschedulablePods) {
  events_.OnNode(Node("n1", 4000));
  events_.OnPod(Pod("bound", "other", "n1"));
  events_.OnPod(Pod("waiting", "ours"));
  MakeUnschedulable("default/waiting");
  events_.OnPodDelete(Pod("never-assigned", "ours"));
  EXPECT_EQ(queue_.sizes().unschedulable, 1u);  // freed nothing
  events_.OnPodDelete(Pod("bound", "other", "n1"));
  EXPECT_EQ(cache_.NodeOf("default/bound"), "");
  EXPECT_EQ(queue_.sizes().unschedulable, 0u);  // room was freed
}

// A victim's deletion is an AssignedPod Delete: it moves a preemptor that
// NodeResourcesFit rejected, as it moves any pod rejected for resources.
TEST_F(ClusterEventsTest, AVictimsDeletionRequeuesThePreemptor) {
  events_.OnNode(Node("n1", 4000));
  events_.OnPod(Pod("victim", "other", "n1"));
  events_.OnPod(Pod("preemptor", "ours"));
  MakeUnschedulable("default/preemptor", {"NodeResourcesFit"});
  events_.OnPodDelete(Pod("victim", "other", "n1"));
  EXPECT_EQ(queue_.sizes().unschedulable, 0u);
}

// Pending pods bring their status.nominatedNodeName to the cache, ours and
// other schedulers' alike; the nomination goes with the pod, when it is
// being deleted or gated, and when the API clears it.
TEST_F(ClusterEventsTest, PendingPodsBringTheirNominations) {
  auto nominated = [](const std::string& name, const std::string& scheduler,
                      const std::string& node) {
    objects::PodInfo p = *Pod(name, scheduler);
    p.nominated_node_name = node;
    return std::make_shared<const objects::PodInfo>(p);
  };
  events_.OnNode(Node("n1", 4000));
  events_.OnPod(nominated("a", "ours", "n1"));
  events_.OnPod(nominated("b", "default-scheduler", "n1"));  // not ours
  EXPECT_EQ(cache_.NominatedNode("default/a"), "n1");
  EXPECT_EQ(cache_.NominatedNode("default/b"), "n1");
  EXPECT_FALSE(queue_.Contains("default/b"));
  events_.OnPodUpdate(nullptr, nominated("a", "ours", ""));
  EXPECT_EQ(cache_.NominatedNode("default/a"), "");
  events_.OnPodUpdate(nullptr, nominated("a", "ours", "n1"));
  objects::PodInfo deleting = *nominated("a", "ours", "n1");
  deleting.deleting = true;
  events_.OnPodUpdate(nullptr,
                      std::make_shared<const objects::PodInfo>(deleting));
  EXPECT_EQ(cache_.NominatedNode("default/a"), "");
  events_.OnPodUpdate(nullptr, nominated("a", "ours", "n1"));
  events_.OnPodDelete(Pod("a", "ours"));
  EXPECT_EQ(cache_.NominatedNode("default/a"), "");
  events_.OnPodUpdate(nullptr, nominated("c", "ours", "n1"));
  events_.OnPodUpdate(nullptr, Pod("c", "ours", "n1"));  // bound
  EXPECT_EQ(cache_.NominatedNode("default/c"), "");
}

// A nomination that goes (the pod deleted, or its nominatedNodeName
// cleared) frees its room for the pods of its priority or lower, as an
// assigned pod's delete; pods of higher priority never yielded to it.
TEST_F(ClusterEventsTest, AGoneNominationMovesPodsOfItsPriorityOrLower) {
  auto nominated = [](const std::string& name, const std::string& node) {
    objects::PodInfo p = *Pod(name, "elsewhere", "", {{"priority", 1000}});
    p.nominated_node_name = node;
    return std::make_shared<const objects::PodInfo>(p);
  };
  events_.OnNode(Node("n1", 4000));
  events_.OnPod(nominated("reserved", "n1"));
  events_.OnPod(nominated("other", "n1"));
  events_.OnPod(Pod("high", "ours", "", {{"priority", 2000}}));
  MakeUnschedulable("default/high", {"NodeResourcesFit"});
  events_.OnPod(Pod("low", "ours", "", {{"priority", 100}}));
  MakeUnschedulable("default/low", {"NodeResourcesFit"});
  events_.OnPod(Pod("equal", "ours", "", {{"priority", 1000}}));
  MakeUnschedulable("default/equal", {"NodeResourcesFit"});
  ASSERT_EQ(queue_.sizes().unschedulable, 3u);

  events_.OnPodDelete(nominated("reserved", "n1"));
  EXPECT_EQ(queue_.sizes().unschedulable, 1u);  // high stays
  for (int i = 0; i < 2; ++i) {
    auto moved = queue_.Pop(absl::Seconds(11));
    ASSERT_TRUE(moved.has_value());
    EXPECT_NE(moved->info->key, "default/high");
    MakeUnschedulableAgain(*std::move(moved));
  }
  ASSERT_EQ(queue_.sizes().unschedulable, 3u);
  events_.OnPodUpdate(nominated("other", "n1"), nominated("other", ""));
  EXPECT_EQ(queue_.sizes().unschedulable, 1u);
}

// With the rejecting plugins known, an event moves only the pods that one of
// their plugins registers it for.
TEST_F(ClusterEventsTest, EventsMoveOnlyPodsTheirRejectorsWaitFor) {
  auto n1 = Node("n1", 4000);
  events_.OnNode(n1);
  events_.OnPod(Pod("fit", "ours"));
  MakeUnschedulable("default/fit", {"NodeResourcesFit"});
  events_.OnPod(Pod("affinity", "ours"));
  MakeUnschedulable("default/affinity", {"InterPodAffinity"});
  events_.OnPod(Pod("taint", "ours"));
  MakeUnschedulable("default/taint", {"TaintToleration"});
  ASSERT_EQ(queue_.sizes().unschedulable, 3u);

  // A pod bound elsewhere: only inter-pod affinity may now be satisfied.
  events_.OnPod(Pod("web", "other", "n1"));
  EXPECT_EQ(queue_.sizes().unschedulable, 2u);
  auto moved = queue_.Pop(absl::ZeroDuration());
  ASSERT_TRUE(moved.has_value());
  EXPECT_EQ(moved->info->key, "default/affinity");
  queue_.Done(moved->info->key);
  // Its status changing moves nobody; its labels changing would.
  auto web = Pod("web", "other", "n1");
  events_.OnPodUpdate(web, Pod("web", "other", "n1"));
  EXPECT_EQ(queue_.sizes().unschedulable, 2u);
  // A node relabelled: neither resources nor taints care.
  auto relabelled = std::make_shared<objects::NodeInfo>(*n1);
  (*relabelled->node.mutable_labels())["zone"] = "b";
  events_.OnNodeUpdate(n1, relabelled);
  EXPECT_EQ(queue_.sizes().unschedulable, 2u);
  // A node deleted: neither either (only PodTopologySpread registers it).
  events_.OnNodeDelete(relabelled);
  EXPECT_EQ(queue_.sizes().unschedulable, 2u);
  // A node added: both.
  events_.OnNode(Node("n2", 4000));
  EXPECT_EQ(queue_.sizes().unschedulable, 0u);
}

// An assigned pod that terminates frees its room, as a delete does.
TEST_F(ClusterEventsTest, ATerminatedPodFreesRoom) {
  events_.OnNode(Node("n1", 4000));
  auto running = Pod("job", "other", "n1");
  events_.OnPod(running);
  events_.OnPod(Pod("waiting", "ours"));
  MakeUnschedulable("default/waiting", {"NodeResourcesFit"});
  auto done = std::make_shared<objects::PodInfo>(*running);
  done->phase = "Succeeded";
  events_.OnPodUpdate(running, done);
  EXPECT_EQ(queue_.sizes().unschedulable, 0u);
}

TEST_F(ClusterEventsTest, NodeHeartbeatsDoNotRequeueButChangesDo) {
  auto before = Node("n1", 4000);
  events_.OnNode(before);
  events_.OnPod(Pod("waiting", "ours"));
  MakeUnschedulable("default/waiting");
  events_.OnNodeUpdate(before, Node("n1", 4000));  // same projection
  EXPECT_EQ(queue_.sizes().unschedulable, 1u);
  events_.OnNodeUpdate(before, Node("n1", 8000));  // more room
  EXPECT_EQ(queue_.sizes().unschedulable, 0u);
  EXPECT_EQ(cache_.NodeCount(), 1u);
  events_.OnNodeDelete(before);
  EXPECT_EQ(cache_.NodeCount(), 0u);
}

// Image locality only scores: new images make no pod schedulable, but the
// cache must know them.
TEST_F(ClusterEventsTest, ImageChangesUpdateTheCacheWithoutRequeue) {
  auto first = NodeWithImages("n1", 4000, {{{"nginx:1.27"}, 500}});
  // The store keeps no images, only their digest.
  EXPECT_TRUE(Kept(first)->images.empty());
  EXPECT_EQ(Kept(first)->images_digest, first->images_digest);
  events_.OnNode(first);
  EXPECT_EQ(ImageSize("n1", "nginx:1.27"), 500);
  events_.OnPod(Pod("waiting", "ours"));
  MakeUnschedulable("default/waiting");

  auto second =
      NodeWithImages("n1", 4000, {{{"nginx:1.27"}, 500}, {{"redis:7"}, 100}});
  events_.OnNodeUpdate(Kept(first), second);
  EXPECT_EQ(ImageSize("n1", "redis:7"), 100);
  EXPECT_EQ(queue_.sizes().unschedulable, 1u);

  auto third = NodeWithImages("n1", 4000, {{{"redis:7"}, 100}});
  events_.OnNodeUpdate(Kept(second), third);
  EXPECT_EQ(ImageSize("n1", "nginx:1.27"), -1);
  EXPECT_EQ(queue_.sizes().unschedulable, 1u);

  // Images and room at once: a node change, which requeues.
  auto fourth = NodeWithImages("n1", 8000, {{{"nginx:1.28"}, 700}});
  events_.OnNodeUpdate(Kept(third), fourth);
  EXPECT_EQ(ImageSize("n1", "nginx:1.28"), 700);
  EXPECT_EQ(queue_.sizes().unschedulable, 0u);
}

TEST_F(ClusterEventsTest, NamespacesAndWorkloadsFeedTheCacheWithoutRequeue) {
  events_.OnPod(Pod("waiting", "ours"));
  MakeUnschedulable("default/waiting");
  objects::PodInfo web = *Pod("web", "ours");
  (*web.pod.mutable_labels())["app"] = "web";
  web.controller_api_version = "apps/v1";
  web.controller_kind = "ReplicaSet";
  web.controller_name = "web-7d4";
  const std::vector<scorer::v1::PodData> wants = {
      scorer::v1::POD_DATA_NAMESPACE_LABELS,
      scorer::v1::POD_DATA_WORKLOAD_SELECTORS};

  auto namespaces = events_.NamespaceHandlers(nullptr);
  auto ns = std::make_shared<objects::NamespaceInfo>();
  ns->name = "default";
  ns->labels["team"] = "a";
  namespaces.on_add(ns);
  auto workloads = events_.WorkloadHandlers(nullptr);
  auto service = std::make_shared<objects::WorkloadInfo>();
  service->kind = objects::WorkloadKind::kService;
  service->namespace_ = "default";
  service->name = "web";
  service->has_selector = true;
  (*service->selector.mutable_match_labels())["app"] = "web";
  workloads.on_add(service);
  auto rs = std::make_shared<objects::WorkloadInfo>();
  rs->kind = objects::WorkloadKind::kReplicaSet;
  rs->namespace_ = "default";
  rs->name = "web-7d4";
  rs->has_selector = true;
  (*rs->selector.mutable_match_labels())["pod-template-hash"] = "7d4";
  workloads.on_add(rs);

  scorer::v1::Pod sent = cache_.PodFor(web, wants);
  EXPECT_EQ(ValueOf(sent.namespace_labels(), "team"), "a");
  ASSERT_EQ(sent.workload_selectors().services_size(), 1);
  EXPECT_EQ(sent.workload_selectors().controller_kind(), "ReplicaSet");
  EXPECT_EQ(ValueOf(sent.workload_selectors().controller().match_labels(),
                    "pod-template-hash"),
            "7d4");

  // The Service loses its selector; the ReplicaSet and the namespace go
  // (deletes get what the stores keep).
  auto selectorless = std::make_shared<objects::WorkloadInfo>(*service);
  selectorless->has_selector = false;
  selectorless->selector.Clear();
  workloads.on_update(service, selectorless);
  workloads.on_delete(std::make_shared<objects::WorkloadInfo>(
      objects::WorkloadCodec(rs->kind).keep(*rs)));
  namespaces.on_delete(std::make_shared<objects::NamespaceInfo>(
      objects::NamespaceCodec().keep(*ns)));
  sent = cache_.PodFor(web, wants);
  EXPECT_EQ(sent.namespace_labels_size(), 0);
  EXPECT_EQ(sent.workload_selectors().services_size(), 0);
  EXPECT_EQ(sent.workload_selectors().controller_kind(), "");
  EXPECT_EQ(queue_.sizes().unschedulable, 1u);  // none of it requeues
  EXPECT_EQ(queue_.sizes().active, 0u);
}

TEST_F(ClusterEventsTest, PdbsFeedTheCacheWithoutRequeue) {
  events_.OnPod(Pod("waiting", "ours"));
  MakeUnschedulable("default/waiting");
  objects::PodInfo web = *Pod("web", "ours");
  (*web.pod.mutable_labels())["app"] = "web";

  auto pdbs = events_.PdbHandlers(nullptr);
  auto pdb = objects::PdbFromJson(nlohmann::json::parse(R"({
    "metadata": {"namespace": "default", "name": "web", "uid": "u1",
                 "resourceVersion": "3"},
    "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
    "status": {"disruptionsAllowed": 0}})"));
  ASSERT_TRUE(pdb.ok()) << pdb.status();
  auto first = std::make_shared<const objects::PdbInfo>(*pdb);
  pdbs.on_add(first);
  ASSERT_EQ(cache_.PdbsCovering(web).size(), 1u);
  EXPECT_EQ(cache_.PdbsCovering(web)[0]->disruptions_allowed, 0);

  // The disruption controller's status update is what the cache holds.
  auto updated = std::make_shared<objects::PdbInfo>(*pdb);
  updated->resource_version = "4";
  updated->disruptions_allowed = 1;
  pdbs.on_update(first, updated);
  EXPECT_EQ(cache_.PdbCount(), 1u);
  ASSERT_EQ(cache_.PdbsCovering(web).size(), 1u);
  EXPECT_EQ(cache_.PdbsCovering(web)[0]->disruptions_allowed, 1);

  // A delete gets what the store keeps.
  pdbs.on_delete(
      std::make_shared<objects::PdbInfo>(objects::PdbCodec().keep(*updated)));
  EXPECT_EQ(cache_.PdbCount(), 0u);
  EXPECT_TRUE(cache_.PdbsCovering(web).empty());
  EXPECT_EQ(queue_.sizes().unschedulable, 1u);  // none of it requeues
  EXPECT_EQ(queue_.sizes().active, 0u);
}

TEST_F(ClusterEventsTest, HandlersCallTheMethodsAndTheSyncSignal) {
  int synced = 0;
  auto pods = events_.PodHandlers([&] { ++synced; });
  auto nodes = events_.NodeHandlers([&] { ++synced; });
  nodes.on_add(Node("n1", 1000));
  pods.on_add(Pod("a", "ours"));
  pods.on_update(Pod("a", "ours"), Pod("a", "ours", "n1"));
  EXPECT_EQ(cache_.NodeOf("default/a"), "n1");
  pods.on_delete(Pod("a", "ours", "n1"));
  EXPECT_EQ(cache_.PodCount(), 0u);
  nodes.on_delete(Node("n1", 1000));
  EXPECT_EQ(cache_.NodeCount(), 0u);
  auto namespaces = events_.NamespaceHandlers([&] { ++synced; });
  auto workloads = events_.WorkloadHandlers([&] { ++synced; });
  auto pdbs = events_.PdbHandlers([&] { ++synced; });
  pods.on_synced();
  nodes.on_synced();
  namespaces.on_synced();
  workloads.on_synced();
  pdbs.on_synced();
  EXPECT_EQ(synced, 5);
}

// A node update is named by what changed, as kube-scheduler labels it.
TEST(NodeUpdateEventsTest, NamesWhatChanged) {
  namespace pb = ::kscore::scorer::v1;
  pb::Node before;
  before.set_name("n1");
  (*before.mutable_labels())["zone"] = "a";
  before.mutable_allocatable()->set_milli_cpu(1000);
  using Events = std::vector<std::string>;
  auto NodeUpdateEvents = [](const pb::Node& a, const pb::Node& b) {
    Events labels;
    for (const pb::ClusterEvent& e : app::NodeUpdateEvents(a, b)) {
      labels.push_back(model::EventLabel(e));
    }
    return labels;
  };
  EXPECT_EQ(NodeUpdateEvents(before, before), Events{"NodeUpdate"});
  pb::Node after = before;
  after.mutable_allocatable()->set_milli_cpu(2000);
  EXPECT_EQ(NodeUpdateEvents(before, after),
            Events{"NodeUpdateNodeAllocatable"});
  after = before;
  (*after.mutable_labels())["zone"] = "b";
  EXPECT_EQ(NodeUpdateEvents(before, after), Events{"NodeUpdateNodeLabel"});
  after = before;
  after.set_unschedulable(true);
  EXPECT_EQ(NodeUpdateEvents(before, after), Events{"NodeUpdateNodeTaint"});
  after = before;
  after.add_taints()->set_key("k");
  after.add_declared_features("F");
  EXPECT_EQ(NodeUpdateEvents(before, after),
            (Events{"NodeUpdateNodeTaint", "NodeUpdateNodeDeclaredFeature"}));
}

}  // namespace
}  // namespace kscore::app
