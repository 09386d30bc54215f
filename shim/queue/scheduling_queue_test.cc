#include "shim/queue/scheduling_queue.h"

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/cluster_event.h"

namespace kscore::queue {
namespace {

namespace pb = ::kscore::scorer::v1;
namespace action = ::kscore::model::action;
using ::kscore::model::MakeEvent;

pb::ClusterEvent NodeAdd() {
  return MakeEvent(pb::EVENT_RESOURCE_NODE, action::kAdd);
}

// What upstream's NodeResourcesFit, TaintToleration and InterPodAffinity
// register, and a plugin that registers nothing.
std::shared_ptr<const PluginEvents> Registered() {
  auto m = std::make_shared<PluginEvents>();
  (*m)["NodeResourcesFit"] = {
      MakeEvent(pb::EVENT_RESOURCE_ASSIGNED_POD, action::kDelete),
      MakeEvent(pb::EVENT_RESOURCE_NODE,
                action::kAdd | action::kUpdateNodeAllocatable)};
  (*m)["TaintToleration"] = {
      MakeEvent(pb::EVENT_RESOURCE_NODE,
                action::kAdd | action::kUpdateNodeTaint),
      MakeEvent(pb::EVENT_RESOURCE_TARGET_POD, action::kUpdatePodToleration)};
  (*m)["InterPodAffinity"] = {
      MakeEvent(pb::EVENT_RESOURCE_ASSIGNED_POD,
                action::kAdd | action::kUpdatePodLabel | action::kDelete),
      MakeEvent(pb::EVENT_RESOURCE_TARGET_POD, action::kUpdatePodLabel)};
  (*m)["Silent"] = {};
  return m;
}

std::shared_ptr<const objects::PodInfo> Pod(const std::string& name,
                                            int32_t priority = 0,
                                            const std::string& uid = "") {
  auto p = std::make_shared<objects::PodInfo>();
  p->name = name;
  p->key = "ns/" + name;
  p->uid = uid.empty() ? name + "-uid" : uid;
  p->priority = priority;
  return p;
}

class QueueTest : public ::testing::Test {
 protected:
  SchedulingQueue::Options Opts() {
    SchedulingQueue::Options o;
    o.initial_backoff = absl::Seconds(1);
    o.max_backoff = absl::Seconds(10);
    o.now = [this] { return now_; };
    return o;
  }
  // Opts, with the queue's questions to the hints kept in `asked`.
  SchedulingQueue::Options OptsAsking(
      std::vector<SchedulingQueue::HintJob>* asked) {
    SchedulingQueue::Options o = Opts();
    o.ask_hints = [asked](SchedulingQueue::HintJob job) {
      asked->push_back(std::move(job));
    };
    return o;
  }
  absl::Time now_ = absl::FromUnixSeconds(1000);
};

TEST_F(QueueTest, PopsByPriorityThenAge) {
  SchedulingQueue q(Opts());
  q.AddOrUpdate(Pod("low", 0));
  now_ += absl::Seconds(1);
  q.AddOrUpdate(Pod("high", 10));
  now_ += absl::Seconds(1);
  q.AddOrUpdate(Pod("low2", 0));
  EXPECT_EQ(q.Pop(absl::ZeroDuration())->info->name, "high");
  EXPECT_EQ(q.Pop(absl::ZeroDuration())->info->name, "low");
  EXPECT_EQ(q.Pop(absl::ZeroDuration())->info->name, "low2");
  EXPECT_FALSE(q.Pop(absl::ZeroDuration()).has_value());
}

// PeekActive shows what Pop would hand out next, in order, and takes
// nothing out.
TEST_F(QueueTest, PeeksInPopOrder) {
  SchedulingQueue q(Opts());
  q.AddOrUpdate(Pod("low", 0));
  now_ += absl::Seconds(1);
  q.AddOrUpdate(Pod("high", 10));
  now_ += absl::Seconds(1);
  q.AddOrUpdate(Pod("low2", 0));
  auto names = [](const auto& pods) {
    std::vector<std::string> out;
    for (const auto& p : pods) out.push_back(p->name);
    return out;
  };
  EXPECT_THAT(names(q.PeekActive(2)), ::testing::ElementsAre("high", "low"));
  EXPECT_THAT(names(q.PeekActive(10)),
              ::testing::ElementsAre("high", "low", "low2"));
  EXPECT_EQ(q.Pop(absl::ZeroDuration())->info->name, "high");
  EXPECT_THAT(names(q.PeekActive(10)), ::testing::ElementsAre("low", "low2"));
}

TEST_F(QueueTest, BackoffDoublesUpToTheMax) {
  SchedulingQueue q(Opts());
  EXPECT_EQ(q.BackoffFor(1), absl::Seconds(1));
  EXPECT_EQ(q.BackoffFor(2), absl::Seconds(2));
  EXPECT_EQ(q.BackoffFor(4), absl::Seconds(8));
  EXPECT_EQ(q.BackoffFor(5), absl::Seconds(10));
  EXPECT_EQ(q.BackoffFor(50), absl::Seconds(10));
}

TEST_F(QueueTest, ErrorsBackOffThenComeBack) {
  SchedulingQueue q(Opts());
  q.AddOrUpdate(Pod("p"));
  auto qp = q.Pop(absl::ZeroDuration());
  ASSERT_TRUE(qp.has_value());
  q.Requeue(*qp, /*unschedulable=*/false);
  EXPECT_EQ(q.sizes().backoff, 1u);
  q.Flush();
  EXPECT_FALSE(q.Pop(absl::ZeroDuration()).has_value());
  now_ += absl::Seconds(1);
  q.Flush();
  auto again = q.Pop(absl::ZeroDuration());
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->attempts, 2);
}

TEST_F(QueueTest, UnschedulableWaitsForAnEventOrTheCeiling) {
  SchedulingQueue q(Opts());
  q.AddOrUpdate(Pod("p"));
  q.Requeue(*q.Pop(absl::ZeroDuration()), true);
  now_ += absl::Seconds(30);
  q.Flush();
  EXPECT_EQ(q.sizes().unschedulable, 1u);
  q.MoveAllToActiveOrBackoff(NodeAdd());
  EXPECT_EQ(q.sizes().active, 1u);
  q.Requeue(*q.Pop(absl::ZeroDuration()), true);
  now_ += absl::Minutes(5);
  q.Flush();
  EXPECT_EQ(q.sizes().unschedulable, 0u);
}

// A pod whose preemption is under way (RequeueGated) stays in
// unschedulable, not popped, while events come and its gate says so; the
// first event after the gate opens moves it; Activate moves it regardless.
TEST_F(QueueTest, GatedPodsWaitForTheirGateThenAnEvent) {
  SchedulingQueue q(Opts());
  q.AddOrUpdate(Pod("g"));
  q.AddOrUpdate(Pod("h"));
  bool preempting = true;
  int asked = 0;
  auto gate = [&] {
    ++asked;
    return preempting;
  };
  q.RequeueGated(*q.Pop(absl::ZeroDuration()), gate);
  q.RequeueGated(*q.Pop(absl::ZeroDuration()), gate);
  for (int i = 0; i < 3; ++i) q.MoveAllToActiveOrBackoff(NodeAdd());
  EXPECT_EQ(q.sizes().unschedulable, 2u);
  EXPECT_FALSE(q.Pop(absl::ZeroDuration()).has_value());
  EXPECT_EQ(asked, 6);
  q.Activate("ns/h");
  EXPECT_EQ(q.sizes().active, 1u);
  preempting = false;
  q.MoveAllToActiveOrBackoff(NodeAdd());
  EXPECT_EQ(q.sizes().unschedulable, 0u);
  EXPECT_EQ(asked, 7);  // h's gate went with its Activate
  now_ += absl::Seconds(30);
  q.Flush();  // g's backoff is over
  ASSERT_EQ(q.sizes().active, 2u);
  q.Requeue(*q.Pop(absl::ZeroDuration()), true);
  q.Requeue(*q.Pop(absl::ZeroDuration()), true);
  preempting = true;  // an ordinary wait is not gated
  q.MoveAllToActiveOrBackoff(NodeAdd());
  EXPECT_EQ(q.sizes().unschedulable, 0u);
  EXPECT_EQ(asked, 7);
}

// Activate (upstream's, event ForceActivate) sends a waiting pod, from
// unschedulable or from backoff before its end, to activeQ at once; an
// active, in-flight or unknown pod is left alone.
TEST_F(QueueTest, ActivateMovesOnlyAWaitingPodAtOnce) {
  std::vector<std::string> seen;
  SchedulingQueue::Options o = Opts();
  o.on_incoming = [&seen](absl::string_view queue, absl::string_view event) {
    seen.push_back(absl::StrCat(queue, "/", event));
  };
  SchedulingQueue q(o);
  q.AddOrUpdate(Pod("u"));
  q.AddOrUpdate(Pod("b"));
  q.Requeue(*q.Pop(absl::ZeroDuration()), /*unschedulable=*/true);
  q.Requeue(*q.Pop(absl::ZeroDuration()), /*unschedulable=*/false);
  ASSERT_EQ(q.sizes().unschedulable, 1u);
  ASSERT_EQ(q.sizes().backoff, 1u);
  seen.clear();
  q.Activate("ns/u");
  q.Activate("ns/b");  // its backoff of 1 s is not over
  EXPECT_EQ(q.sizes().active, 2u);
  EXPECT_EQ(q.sizes().unschedulable, 0u);
  EXPECT_EQ(q.sizes().backoff, 0u);
  EXPECT_THAT(seen, ::testing::ElementsAre("active/ForceActivate",
                                           "active/ForceActivate"));
  q.Activate("ns/u");  // active already: not queued twice
  q.Activate("ns/nobody");
  auto first = q.Pop(absl::ZeroDuration());
  ASSERT_TRUE(first.has_value());
  q.Activate(first->info->key);  // in flight: nothing to move
  EXPECT_TRUE(q.Pop(absl::ZeroDuration()).has_value());
  EXPECT_FALSE(q.Pop(absl::ZeroDuration()).has_value());
  EXPECT_EQ(seen.size(), 2u);
}

// Every move into a queue is reported with kube-scheduler's queue and event
// labels (scheduler_queue_incoming_pods_total).
TEST_F(QueueTest, TellsWhichEventSentAPodToWhichQueue) {
  std::vector<std::string> seen;
  SchedulingQueue::Options o = Opts();
  o.on_incoming = [&seen](absl::string_view queue, absl::string_view event) {
    seen.push_back(absl::StrCat(queue, "/", event));
  };
  SchedulingQueue q(o);
  q.AddOrUpdate(Pod("p"));
  q.Requeue(*q.Pop(absl::ZeroDuration()), true);
  q.MoveAllToActiveOrBackoff(NodeAdd());
  now_ += absl::Seconds(1);
  q.Flush();
  q.Requeue(*q.Pop(absl::ZeroDuration()), false);
  now_ += absl::Minutes(1);
  q.Flush();
  q.Requeue(*q.Pop(absl::ZeroDuration()), true);
  now_ += absl::Minutes(5);
  q.Flush();
  EXPECT_THAT(
      seen, ::testing::ElementsAre("active/UnscheduledPodAdd",
                                   "unschedulable/ScheduleAttemptFailure",
                                   "backoff/NodeAdd", "active/BackoffComplete",
                                   "backoff/ScheduleAttemptFailure",
                                   "active/BackoffComplete",
                                   "unschedulable/ScheduleAttemptFailure",
                                   "active/UnschedulableTimeout"));
}

TEST_F(QueueTest, EventDuringTheCycleSendsToBackoffNotUnschedulable) {
  SchedulingQueue q(Opts());
  q.AddOrUpdate(Pod("p"));
  auto qp = q.Pop(absl::ZeroDuration());
  q.MoveAllToActiveOrBackoff(
      NodeAdd());  // a node was added while we were scheduling
  q.Requeue(*qp, true);
  EXPECT_EQ(q.sizes().unschedulable, 0u);
  EXPECT_EQ(q.sizes().backoff, 1u);
}

TEST_F(QueueTest, NothingLostNothingTwice) {
  SchedulingQueue q(Opts());
  q.AddOrUpdate(Pod("p"));
  q.AddOrUpdate(Pod("p"));  // an update while queued: still one entry
  auto qp = q.Pop(absl::ZeroDuration());
  ASSERT_TRUE(qp.has_value());
  q.AddOrUpdate(Pod("p"));  // an update while in flight is not a second copy
  EXPECT_FALSE(q.Pop(absl::ZeroDuration()).has_value());
  q.Delete("ns/p");  // deleted while in flight: dropped on requeue
  q.Requeue(*qp, false);
  EXPECT_FALSE(q.Contains("ns/p"));
}

TEST_F(QueueTest, RecreatedWhileInFlightIsKept) {
  SchedulingQueue q(Opts());
  q.AddOrUpdate(Pod("p", 0, "old"));
  auto qp = q.Pop(absl::ZeroDuration());
  q.Delete("ns/p");
  q.AddOrUpdate(Pod("p", 0, "new"));
  q.Done("ns/p", "old");  // the old pod was bound; the new one must not vanish
  auto next = q.Pop(absl::ZeroDuration());
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->info->uid, "new");
}

TEST_F(QueueTest, UpdateInFlightIsUsedOnRequeue) {
  SchedulingQueue q(Opts());
  q.AddOrUpdate(Pod("p", 0));
  auto qp = q.Pop(absl::ZeroDuration());
  q.AddOrUpdate(Pod("p", 7));
  q.Requeue(*qp, true);
  q.MoveAllToActiveOrBackoff(NodeAdd());
  now_ += absl::Seconds(10);
  q.Flush();
  auto next = q.Pop(absl::ZeroDuration());
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->info->priority, 7);
}

// A pod moves out of the unschedulable pods only on an event that one of
// the plugins that rejected it registers (upstream's EventsToRegister).
TEST_F(QueueTest, OnlyEventsTheRejectorsRegisterMoveAPod) {
  SchedulingQueue q(Opts());
  auto reject = [&](const std::string& name, std::vector<std::string> plugins) {
    q.AddOrUpdate(Pod(name));
    auto qp = q.Pop(absl::ZeroDuration());
    qp->unschedulable_plugins = std::move(plugins);
    qp->plugin_events = Registered();
    q.Requeue(*qp, true);
  };
  reject("fit", {"NodeResourcesFit"});
  reject("taint", {"TaintToleration"});
  reject("both", {"NodeResourcesFit", "TaintToleration"});
  reject("silent", {"Silent"});
  reject("unknown", {"SomethingElse"});
  ASSERT_EQ(q.sizes().unschedulable, 5u);
  now_ += absl::Seconds(30);  // past every backoff: moves go to active

  auto popped = [&] {
    std::vector<std::string> names;
    while (auto qp = q.Pop(absl::ZeroDuration())) {
      names.push_back(qp->info->name);
      q.Requeue(*qp, true);  // rejected again, same plugins
    }
    std::sort(names.begin(), names.end());
    return names;
  };
  q.MoveAllToActiveOrBackoff(
      MakeEvent(pb::EVENT_RESOURCE_NODE, action::kUpdateNodeLabel));
  EXPECT_THAT(popped(), ::testing::ElementsAre("unknown"));
  now_ += absl::Seconds(30);
  q.MoveAllToActiveOrBackoff(
      MakeEvent(pb::EVENT_RESOURCE_NODE, action::kUpdateNodeTaint));
  EXPECT_THAT(popped(), ::testing::ElementsAre("both", "taint", "unknown"));
  now_ += absl::Seconds(30);
  q.MoveAllToActiveOrBackoff(
      MakeEvent(pb::EVENT_RESOURCE_ASSIGNED_POD, action::kDelete));
  EXPECT_THAT(popped(), ::testing::ElementsAre("both", "fit", "unknown"));
  now_ += absl::Seconds(30);
  q.MoveAllToActiveOrBackoff(NodeAdd());
  EXPECT_THAT(popped(),
              ::testing::ElementsAre("both", "fit", "taint", "unknown"));
  EXPECT_EQ(q.sizes().unschedulable, 5u);
  // The ceiling moves every pod, "silent" too.
  now_ += absl::Minutes(5);
  q.Flush();
  EXPECT_EQ(q.sizes().unschedulable, 0u);
}

TEST_F(QueueTest, OnlyRegisteredEventsDuringTheCycleSendToBackoff) {
  SchedulingQueue q(Opts());
  q.AddOrUpdate(Pod("p"));
  auto qp = q.Pop(absl::ZeroDuration());
  q.MoveAllToActiveOrBackoff(
      MakeEvent(pb::EVENT_RESOURCE_NODE, action::kUpdateNodeLabel));
  qp->unschedulable_plugins = {"NodeResourcesFit"};
  qp->plugin_events = Registered();
  q.Requeue(*qp, true);
  EXPECT_EQ(q.sizes().unschedulable, 1u);

  now_ += absl::Minutes(6);
  q.Flush();
  qp = q.Pop(absl::ZeroDuration());
  ASSERT_TRUE(qp.has_value());
  q.MoveAllToActiveOrBackoff(
      MakeEvent(pb::EVENT_RESOURCE_NODE, action::kUpdateNodeAllocatable));
  q.Requeue(*qp, true);
  EXPECT_EQ(q.sizes().unschedulable, 0u);
  EXPECT_EQ(q.sizes().backoff, 1u);
}

// The pod's own update moves it only when it is an event its rejectors
// register: the shim's own PodScheduled condition patch is not.
TEST_F(QueueTest, ThePodsOwnUpdateMovesItWhenItMayHelp) {
  SchedulingQueue q(Opts());
  auto labelled = std::make_shared<objects::PodInfo>(*Pod("p"));
  q.AddOrUpdate(labelled);
  auto qp = q.Pop(absl::ZeroDuration());
  qp->unschedulable_plugins = {"InterPodAffinity"};
  qp->plugin_events = Registered();
  q.Requeue(*qp, true);
  now_ += absl::Seconds(30);

  auto status_only = std::make_shared<objects::PodInfo>(*labelled);
  status_only->unschedulable_message = "0/3 nodes are available";
  q.AddOrUpdate(status_only);
  EXPECT_EQ(q.sizes().unschedulable, 1u);
  auto relabelled = std::make_shared<objects::PodInfo>(*status_only);
  (*relabelled->pod.mutable_labels())["app"] = "web";
  q.AddOrUpdate(relabelled);
  EXPECT_EQ(q.sizes().unschedulable, 0u);
  EXPECT_EQ(q.sizes().active, 1u);
}

// With nothing active, Pop takes the pod whose backoff ends first among
// those plugins rejected (SchedulerPopFromBackoffQ); not one that failed on
// an error.
TEST_F(QueueTest, PopsFromBackoffWhenNothingIsActive) {
  std::vector<std::string> seen;
  SchedulingQueue::Options o = Opts();
  o.on_incoming = [&seen](absl::string_view queue, absl::string_view event) {
    seen.push_back(absl::StrCat(queue, "/", event));
  };
  SchedulingQueue q(o);
  q.AddOrUpdate(Pod("error"));
  q.Requeue(*q.Pop(absl::ZeroDuration()), false);
  EXPECT_FALSE(q.Pop(absl::ZeroDuration()).has_value());

  q.AddOrUpdate(Pod("rejected"));
  auto qp = q.Pop(absl::ZeroDuration());
  qp->unschedulable_plugins = {"NodeResourcesFit"};
  qp->plugin_events = Registered();
  q.Requeue(*qp, true);
  q.MoveAllToActiveOrBackoff(NodeAdd());
  EXPECT_EQ(q.sizes().backoff, 2u);
  seen.clear();
  auto next = q.Pop(absl::ZeroDuration());
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->info->name, "rejected");
  EXPECT_THAT(seen, ::testing::ElementsAre("active/PopFromBackoffQ"));
  EXPECT_FALSE(q.Pop(absl::ZeroDuration()).has_value());
  EXPECT_EQ(q.sizes().backoff, 1u);
}

TEST_F(QueueTest, CountsUnschedulablePodsPerPlugin) {
  SchedulingQueue q(Opts());
  for (const char* name : {"a", "b"}) {
    auto info = std::make_shared<objects::PodInfo>(*Pod(name));
    info->scheduler_name = "kscore";
    q.AddOrUpdate(info);
    auto qp = q.Pop(absl::ZeroDuration());
    qp->unschedulable_plugins = {"NodeResourcesFit"};
    if (std::string(name) == "b") qp->unschedulable_plugins.push_back("Silent");
    q.Requeue(*qp, true);
  }
  using Key = std::pair<std::string, std::string>;
  EXPECT_THAT(q.UnschedulableByPlugin(),
              ::testing::UnorderedElementsAre(
                  ::testing::Pair(Key{"kscore", "NodeResourcesFit"}, 2),
                  ::testing::Pair(Key{"kscore", "Silent"}, 1)));
}

// A pod whose rejector registered the event only with a hint waits for the
// hint's answer; only a pod still waiting since then moves on "true".
TEST_F(QueueTest, HintedRegistrationsAskBeforeMoving) {
  std::vector<SchedulingQueue::HintJob> asked;
  SchedulingQueue q(OptsAsking(&asked));
  auto events = std::make_shared<PluginEvents>();
  (*events)["NodeResourcesFit"] = {MakeEvent(
      pb::EVENT_RESOURCE_NODE, action::kAdd | action::kUpdateNodeAllocatable,
      /*hinted=*/true)};
  (*events)["NodeName"] = {MakeEvent(pb::EVENT_RESOURCE_NODE, action::kAdd)};
  auto reject = [&](const std::string& name, const std::string& plugin) {
    q.AddOrUpdate(Pod(name));
    auto qp = q.Pop(absl::ZeroDuration());
    qp->unschedulable_plugins = {plugin};
    qp->plugin_events = events;
    q.Requeue(*qp, true);
  };
  reject("a", "NodeResourcesFit");
  reject("b", "NodeResourcesFit");
  reject("c", "NodeName");
  now_ += absl::Seconds(30);
  EventObjects node_added;
  node_added.new_node = std::make_shared<objects::NodeInfo>();
  q.MoveAllToActiveOrBackoff(NodeAdd(), node_added);
  // "c" moved at once (no hint); "a" and "b" wait for the answer.
  EXPECT_EQ(q.sizes().unschedulable, 2u);
  ASSERT_EQ(asked.size(), 1u);
  ASSERT_EQ(asked[0].pods.size(), 2u);
  EXPECT_THAT(asked[0].pods[0].unschedulable_plugins,
              ::testing::ElementsAre("NodeResourcesFit"));
  EXPECT_EQ(asked[0].objects.new_node, node_added.new_node);
  std::vector<bool> answer(2, false);
  answer[asked[0].pods[0].info->name == "a" ? 0 : 1] = true;  // only "a"
  q.ApplyHints(asked[0], answer);
  EXPECT_EQ(q.sizes().unschedulable, 1u);
  EXPECT_EQ(q.sizes().active, 2u);  // c and a

  // An answer that comes after the pod was tried again changes nothing.
  q.MoveAllToActiveOrBackoff(NodeAdd(), node_added);
  ASSERT_EQ(asked.size(), 2u);
  ASSERT_EQ(asked[1].pods.size(), 1u);  // b
  now_ += absl::Minutes(6);  // the ceiling: b is tried again meanwhile
  q.Flush();
  while (auto qp = q.Pop(absl::ZeroDuration())) q.Requeue(*qp, true);
  const size_t waiting = q.sizes().unschedulable;
  q.ApplyHints(asked[1], {true});
  EXPECT_EQ(q.sizes().unschedulable, waiting);

  // Without the event's objects there is nothing to ask: the pods move.
  now_ += absl::Seconds(30);
  q.MoveAllToActiveOrBackoff(NodeAdd());
  EXPECT_EQ(q.sizes().unschedulable, 0u);
  EXPECT_EQ(asked.size(), 2u);
}

// A gated pod is not asked about while its gate holds: the hints could not
// move it. Once the gate opens, the next event asks as for any pod.
TEST_F(QueueTest, GatedPodsAreNotAskedAboutWhileTheirGateHolds) {
  std::vector<SchedulingQueue::HintJob> asked;
  SchedulingQueue q(OptsAsking(&asked));
  auto events = std::make_shared<PluginEvents>();
  (*events)["NodeResourcesFit"] = {
      MakeEvent(pb::EVENT_RESOURCE_NODE, action::kAdd, /*hinted=*/true)};
  q.AddOrUpdate(Pod("g"));
  auto qp = q.Pop(absl::ZeroDuration());
  qp->unschedulable_plugins = {"NodeResourcesFit"};
  qp->plugin_events = events;
  bool preempting = true;
  q.RequeueGated(*qp, [&preempting] { return preempting; });
  EventObjects node_added;
  node_added.new_node = std::make_shared<objects::NodeInfo>();
  q.MoveAllToActiveOrBackoff(NodeAdd(), node_added);
  EXPECT_TRUE(asked.empty());
  EXPECT_EQ(q.sizes().unschedulable, 1u);

  preempting = false;
  q.MoveAllToActiveOrBackoff(NodeAdd(), node_added);
  ASSERT_EQ(asked.size(), 1u);
  ASSERT_EQ(asked[0].pods.size(), 1u);
  q.ApplyHints(asked[0], {true});
  EXPECT_EQ(q.sizes().unschedulable, 0u);
}

// A pod that failed only because the scorer did not answer backs off, and
// is active again as soon as the scorer answers: not after its backoff,
// which grew while the scorer was away. Other errors keep their backoff.
TEST_F(QueueTest, UnreachableServiceParksUntilItAnswers) {
  std::vector<std::string> incoming;
  auto o = Opts();
  o.on_incoming = [&](absl::string_view queue, absl::string_view event) {
    incoming.push_back(absl::StrCat(queue, "/", event));
  };
  SchedulingQueue q(o);
  q.AddOrUpdate(Pod("scorer"));
  q.AddOrUpdate(Pod("error"));
  auto fail = [&](const SchedulingQueue::QueuedPod& p) {
    if (p.info->name == "scorer") q.RequeueUnreachable(p);
    if (p.info->name == "error") q.Requeue(p, /*unschedulable=*/false);
  };
  for (int attempt = 1; attempt <= 5; ++attempt) {
    std::vector<SchedulingQueue::QueuedPod> popped;
    while (auto p = q.Pop(absl::ZeroDuration())) popped.push_back(*p);
    ASSERT_EQ(popped.size(), 2u) << "attempt " << attempt;
    for (const auto& p : popped) fail(p);
    if (attempt < 5) {
      now_ += q.BackoffFor(attempt);
      q.Flush();
    }
  }
  EXPECT_EQ(q.sizes().backoff, 2u);  // 10 s each now
  incoming.clear();
  q.ScorerAnswered();
  auto back = q.Pop(absl::ZeroDuration());
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->info->name, "scorer");
  EXPECT_FALSE(q.Pop(absl::ZeroDuration()).has_value());
  EXPECT_THAT(incoming, ::testing::ElementsAre("active/ScorerAvailable"));
  // The other error waits for its backoff.
  q.ScorerAnswered();
  EXPECT_FALSE(q.Pop(absl::ZeroDuration()).has_value());
  now_ += absl::Seconds(10);
  q.Flush();
  auto error = q.Pop(absl::ZeroDuration());
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->info->name, "error");
}

// The scorer answered while the pod's cycle ran (after its Pop): when the
// pod comes back unreachable it is active at once, not parked for an
// answer that already came.
TEST_F(QueueTest, AnsweredWhileInFlightGoesActive) {
  SchedulingQueue q(Opts());
  q.AddOrUpdate(Pod("p"));
  auto qp = q.Pop(absl::ZeroDuration());
  ASSERT_TRUE(qp.has_value());
  q.ScorerAnswered();
  q.RequeueUnreachable(*qp);
  EXPECT_EQ(q.sizes().active, 1u);
  auto again = q.Pop(absl::ZeroDuration());
  ASSERT_TRUE(again.has_value());
  // No answer since this Pop: parked.
  q.RequeueUnreachable(*again);
  EXPECT_EQ(q.sizes().backoff, 1u);
  EXPECT_FALSE(q.Pop(absl::ZeroDuration()).has_value());
}

// Parked pods are still pending pods: deleted, they are gone; an
// unschedulable pod never counts as parked.
TEST_F(QueueTest, ParkedPodsAreDeletedAndUnschedulableOnesStay) {
  SchedulingQueue q(Opts());
  q.AddOrUpdate(Pod("parked"));
  q.AddOrUpdate(Pod("unsched"));
  auto a = q.Pop(absl::ZeroDuration());
  auto b = q.Pop(absl::ZeroDuration());
  ASSERT_TRUE(a && b);
  q.RequeueUnreachable(a->info->name == "parked" ? *a : *b);
  q.Requeue(a->info->name == "parked" ? *b : *a, /*unschedulable=*/true);
  q.Delete("ns/parked");
  q.ScorerAnswered();
  EXPECT_FALSE(q.Pop(absl::ZeroDuration()).has_value());
  EXPECT_EQ(q.sizes().unschedulable, 1u);
  EXPECT_FALSE(q.Contains("ns/parked"));
}

}  // namespace
}  // namespace kscore::queue
