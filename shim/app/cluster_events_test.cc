#include "shim/app/cluster_events.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace kscore::app {
namespace {

// The real cache and queue: what the handlers leave in them is the test.
class ClusterEventsTest : public ::testing::Test {
 protected:
  ClusterEventsTest()
      : queue_({absl::Seconds(1), absl::Seconds(10), absl::Minutes(5),
                [] { return absl::Now(); }}),
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
    auto pod = cache::PodFromJson(nlohmann::json{
        {"metadata",
         {{"name", name}, {"namespace", "default"}, {"uid", "u-" + name}}},
        {"spec", spec},
        {"status", {{"phase", "Pending"}}}});
    EXPECT_TRUE(pod.ok()) << pod.status();
    return std::make_shared<const cache::PodInfo>(*pod);
  }
  static ClusterEvents::NodePtr Node(const std::string& name,
                                     int64_t milli_cpu) {
    auto n = std::make_shared<cache::NodeInfo>();
    n->node.set_name(name);
    n->node.mutable_allocatable()->set_milli_cpu(milli_cpu);
    return n;
  }
  // Pops `key` and sends it back as unschedulable.
  void MakeUnschedulable(const std::string& key) {
    auto qp = queue_.Pop(absl::Seconds(1));
    ASSERT_TRUE(qp.has_value());
    ASSERT_EQ(qp->info->key, key);
    queue_.Requeue(*std::move(qp), /*unschedulable=*/true);
    ASSERT_EQ(queue_.sizes().unschedulable, 1u);
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
  pods.on_synced();
  nodes.on_synced();
  EXPECT_EQ(synced, 2);
}

}  // namespace
}  // namespace kscore::app
