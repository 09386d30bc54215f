#include "shim/scheduler/preemption_executor.h"

#include <functional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "shim/scheduler/scheduler.h"
#include "shim/scheduler/testing/fake_scorer.h"

namespace kscore::scheduler {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Answers every request at once (on the caller's thread, as the client's
// default DoAsync does) with the status `answer` gives, 200 by default, and
// records it as "METHOD PATH BODY".
class RecordingClient : public kube::Client {
 public:
  std::function<int(absl::string_view method, absl::string_view path)> answer;

  absl::StatusOr<kube::Response> Do(absl::string_view method,
                                    absl::string_view path,
                                    absl::string_view body,
                                    absl::string_view) override {
    absl::MutexLock lock(&mu_);
    written_.push_back(absl::StrCat(method, " ", path, " ", body));
    return kube::Response{answer ? answer(method, path) : 200, "{}"};
  }
  absl::Status Stream(absl::string_view,
                      const std::function<bool(absl::string_view)>&,
                      const std::atomic<bool>*) override {
    return absl::UnimplementedError("no streams");
  }
  std::vector<std::string> Written() {
    absl::MutexLock lock(&mu_);
    return written_;
  }
  // The requests whose "METHOD PATH" starts with `prefix`.
  std::vector<std::string> Matching(absl::string_view prefix) {
    std::vector<std::string> out;
    for (const std::string& w : Written()) {
      if (absl::StartsWith(w, prefix)) out.push_back(w);
    }
    return out;
  }

 private:
  absl::Mutex mu_;
  std::vector<std::string> written_;
};

objects::PodInfo Pod(const std::string& name, int32_t priority,
                     const std::string& node = "",
                     const std::string& nominated = "") {
  nlohmann::json spec = {{"schedulerName", "test-scheduler"},
                         {"priority", priority},
                         {"containers", {{{"name", "c"}}}}};
  if (!node.empty()) spec["nodeName"] = node;
  nlohmann::json status = {{"phase", node.empty() ? "Pending" : "Running"}};
  if (!nominated.empty()) status["nominatedNodeName"] = nominated;
  absl::StatusOr<objects::PodInfo> p = objects::PodFromJson(nlohmann::json{
      {"metadata",
       {{"name", name}, {"namespace", "default"}, {"uid", "u-" + name}}},
      {"spec", spec},
      {"status", status}});
  EXPECT_TRUE(p.ok()) << p.status();
  return *p;
}

constexpr char kVictimPatch[] =
    "PATCH /api/v1/namespaces/default/pods/low/status";
constexpr char kVictimDelete[] = "DELETE /api/v1/namespaces/default/pods/low";
constexpr char kEvents[] = "POST /apis/events.k8s.io/v1/namespaces/default";

// Upstream's PreemptPod for each victim: the DisruptionTarget condition,
// then the deletion, then the Preempted event on the victim (related to the
// preemptor); and the lower-priority pods nominated to the node lose their
// nomination.
TEST(PreemptionExecutorTest, ConditionThenDeletionThenEvent) {
  RecordingClient client;
  cache::Cache cache;
  {
    Writer writer(&client, Writer::Options());
    Feedback feedback(&writer, "host");
    PreemptionExecutor executor(
        &writer, &feedback, &cache,
        [](const std::string& name) { return name == "test-scheduler"; },
        [](const std::string&) {});
    cache.Nominate(Pod("nominated-low", 5), "n1");
    objects::PodInfo theirs = Pod("theirs", 5);
    theirs.scheduler_name = "default-scheduler";
    cache.Nominate(theirs, "n1");
    cache.Nominate(Pod("nominated-high", 200), "n1");
    cache.Nominate(Pod("elsewhere", 5), "n2");
    auto preemptor = std::make_shared<const objects::PodInfo>(Pod("big", 100));
    executor.Preempt(preemptor, {"n1",
                                 {{"default", "low", "u-low", false},
                                  {"default", "leaving", "u-leaving", true}}});
  }
  EXPECT_EQ(cache.NominatedNode("default/nominated-low"), "");
  EXPECT_EQ(cache.NominatedNode("default/nominated-high"), "n1");
  EXPECT_EQ(cache.NominatedNode("default/elsewhere"), "n2");
  EXPECT_EQ(cache.NominatedNode("default/theirs"), "n1");
  EXPECT_THAT(
      client.Matching("PATCH /api/v1/namespaces/default/pods/nominated-low/"),
      ElementsAre(HasSubstr(R"({"status":{"nominatedNodeName":null}})")));
  EXPECT_THAT(client.Matching("PATCH /api/v1/namespaces/default/pods/n"),
              ::testing::SizeIs(1));
  const std::vector<std::string> patch = client.Matching(kVictimPatch);
  ASSERT_EQ(patch.size(), 1u);
  const nlohmann::json condition = nlohmann::json::parse(
      patch[0].substr(patch[0].find('{')))["status"]["conditions"][0];
  EXPECT_EQ(condition["type"], "DisruptionTarget");
  EXPECT_EQ(condition["status"], "True");
  EXPECT_EQ(condition["reason"], "PreemptionByScheduler");
  EXPECT_EQ(condition["message"],
            "test-scheduler: preempting to accommodate a higher priority pod");
  EXPECT_THAT(client.Matching(kVictimDelete),
              ElementsAre(HasSubstr(R"("preconditions":{"uid":"u-low"})")));
  const std::vector<std::string> events = client.Matching(kEvents);
  ASSERT_EQ(events.size(), 1u);
  const nlohmann::json ev =
      nlohmann::json::parse(events[0].substr(events[0].find('{')));
  EXPECT_EQ(ev["reason"], "Preempted");
  EXPECT_EQ(ev["action"], "Preempting");
  EXPECT_EQ(ev["type"], "Normal");
  EXPECT_EQ(ev["note"], "Preempted by pod u-big on node n1");
  EXPECT_EQ(ev["regarding"]["name"], "low");
  EXPECT_EQ(ev["regarding"]["uid"], "u-low");
  EXPECT_EQ(ev["related"]["name"], "big");
  EXPECT_EQ(ev["reportingController"], "test-scheduler");
  // The victim being deleted already: nothing sent for it.
  for (const std::string& w : client.Written()) {
    EXPECT_THAT(w, ::testing::Not(HasSubstr("leaving"))) << w;
  }
  // In order: the condition, then the deletion, then the event.
  const std::vector<std::string> all = client.Written();
  auto at = [&](absl::string_view prefix) {
    return std::find_if(all.begin(), all.end(),
                        [&](const std::string& w) {
                          return absl::StartsWith(w, prefix);
                        }) -
           all.begin();
  };
  EXPECT_LT(at(kVictimPatch), at(kVictimDelete));
  EXPECT_LT(at(kVictimDelete), at(kEvents));
}

// A victim gone (404) or refused stops that victim's writes, as upstream's
// PreemptPod returns on them; the others sent with it go on, and the last
// victim, sent once they are answered, goes only if none was refused.
TEST(PreemptionExecutorTest, FailuresStopThatVictimAndTheLast) {
  // A refused call leaves a victim in place, so no deletion event will
  // move the preemptor: it is activated instead.
  struct Case {
    std::string name;
    std::function<int(absl::string_view, absl::string_view)> answer;
    size_t want_deletes;
    size_t want_events;
    bool want_activated;
  } cases[] = {
      {"patch: gone",
       [](absl::string_view m, absl::string_view) {
         return m == "PATCH" ? 404 : 200;
       },
       0, 0, false},
      {"patch: refused",
       [](absl::string_view m, absl::string_view) {
         return m == "PATCH" ? 500 : 200;
       },
       0, 0, true},
      {"delete: gone",
       [](absl::string_view m, absl::string_view) {
         return m == "DELETE" ? 404 : 200;
       },
       1, 0, false},
      {"delete: another pod by that name",
       [](absl::string_view m, absl::string_view) {
         return m == "DELETE" ? 409 : 200;
       },
       1, 0, false},
      {"delete: refused",
       [](absl::string_view m, absl::string_view) {
         return m == "DELETE" ? 403 : 200;
       },
       1, 0, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    RecordingClient client;
    client.answer = [&](absl::string_view m, absl::string_view path) {
      return absl::StrContains(path, "/low") ? c.answer(m, path) : 200;
    };
    cache::Cache cache;
    pb::Node node;
    node.set_name("n1");
    cache.UpsertNode(node);
    cache.UpsertAssignedPod(Pod("low", 5, "n1"));
    cache.UpsertAssignedPod(Pod("other", 5, "n1"));
    std::vector<std::string> activated;
    {
      Writer writer(&client, Writer::Options());
      Feedback feedback(&writer, "host");
      PreemptionExecutor executor(
          &writer, &feedback, &cache, [](const std::string&) { return true; },
          [&activated](const std::string& key) { activated.push_back(key); });
      executor.Preempt(
          std::make_shared<const objects::PodInfo>(Pod("big", 100)),
          {"n1",
           {{"default", "low", "u-low", false},
            {"default", "other", "u-other", false}}});
      writer.WaitIdle(Writer::Lane::kBindings);
      // Waiting for the deletion events, unless a victim stays.
      EXPECT_EQ(executor.Preempting("default/big"), !c.want_activated);
    }
    EXPECT_EQ(activated, c.want_activated
                             ? std::vector<std::string>{"default/big"}
                             : std::vector<std::string>{});
    EXPECT_EQ(client.Matching(kVictimDelete).size(), c.want_deletes);
    const size_t last = c.want_activated ? 0 : 1;
    EXPECT_EQ(client.Matching(kEvents).size(), c.want_events + last);
    EXPECT_THAT(client.Matching("DELETE /api/v1/namespaces/default/pods/other"),
                ::testing::SizeIs(last));
    EXPECT_THAT(client.Matching("PATCH /api/v1/namespaces/default/pods/other"),
                ::testing::SizeIs(last));
  }
}

// A node n1 holding `pods` (priority 5), and an executor over a recording
// client (answering at once) that notes the pods it activates.
struct ExecutorWorld {
  explicit ExecutorWorld(const std::vector<std::string>& pods) {
    pb::Node node;
    node.set_name("n1");
    cache.UpsertNode(node);
    for (const std::string& p : pods) cache.UpsertAssignedPod(Pod(p, 5, "n1"));
  }
  RecordingClient client;
  cache::Cache cache;
  Writer writer{&client, Writer::Options()};
  Feedback feedback{&writer, "host"};
  std::vector<std::string> activated;
  PreemptionExecutor executor{
      &writer, &feedback, &cache, [](const std::string&) { return true; },
      [this](const std::string& key) { activated.push_back(key); }};
};

// Upstream's IsPodRunningPreemption: the preemptor waits while a victim's
// calls are unanswered or the cache still holds a victim they deleted; a
// victim seen being deleted or gone ends the wait.
TEST(PreemptionExecutorTest, PreemptingUntilTheCacheSeesTheVictimsGo) {
  ExecutorWorld w({"low", "other"});
  RecordingClient& client = w.client;
  cache::Cache& cache = w.cache;
  Writer& writer = w.writer;
  PreemptionExecutor& executor = w.executor;
  EXPECT_FALSE(executor.Preempting("default/big"));
  executor.Preempt(std::make_shared<const objects::PodInfo>(Pod("big", 100)),
                   {"n1",
                    {{"default", "low", "u-low", false},
                     {"default", "other", "u-other", false}}});
  writer.WaitIdle(Writer::Lane::kBindings);
  ASSERT_THAT(client.Matching("DELETE"), ::testing::SizeIs(2));
  EXPECT_TRUE(executor.Preempting("default/big"));
  cache.RemovePod("default/low");
  EXPECT_TRUE(executor.Preempting("default/big"));
  objects::PodInfo leaving = Pod("other", 5, "n1");
  leaving.deleting = true;
  cache.UpsertAssignedPod(leaving);
  EXPECT_FALSE(executor.Preempting("default/big"));
  EXPECT_FALSE(executor.Preempting("default/big"));
}

// Gate is Preempting for the queue, which asks it at every cluster event:
// one taken while a victim's calls are pending says true, then follows the
// preemption to its end, and to the end of the next one of the same pod.
TEST(PreemptionExecutorTest, AGateTakenWhileCallsArePendingEndsWithThem) {
  ExecutorWorld w({"low", "other", "third"});
  RecordingClient& client = w.client;
  cache::Cache& cache = w.cache;
  Writer& writer = w.writer;
  PreemptionExecutor& executor = w.executor;
  const std::vector<std::string>& activated = w.activated;
  std::function<bool()> gate;
  client.answer = [&](absl::string_view method, absl::string_view path) {
    if (gate == nullptr && method == "DELETE" &&
        absl::StrContains(path, "/low")) {
      gate = executor.Gate("default/big");  // low's call is not answered
      EXPECT_TRUE(gate());
    }
    return absl::StrContains(path, "/third") && method == "DELETE" ? 500 : 200;
  };
  const auto big = std::make_shared<const objects::PodInfo>(Pod("big", 100));
  executor.Preempt(big, {"n1",
                         {{"default", "low", "u-low", false},
                          {"default", "other", "u-other", false}}});
  writer.WaitIdle(Writer::Lane::kBindings);
  ASSERT_NE(gate, nullptr);
  EXPECT_TRUE(gate());  // the cache still holds the last victim
  cache.RemovePod("default/other");
  EXPECT_FALSE(gate());
  EXPECT_FALSE(executor.Preempting("default/big"));
  executor.Preempt(big, {"n1", {{"default", "low", "u-low", false}}});
  writer.WaitIdle(Writer::Lane::kBindings);
  EXPECT_TRUE(gate());  // a preemption of the same pod, under way
  // One that fails (a refused deletion) ends at once, activating the pod.
  executor.Preempt(big, {"n1", {{"default", "third", "u-third", false}}});
  writer.WaitIdle(Writer::Lane::kBindings);
  EXPECT_EQ(activated, std::vector<std::string>{"default/big"});
  EXPECT_FALSE(gate());
}

// The victims' deletion events may come before the calls are answered (and
// find the pod waiting on them): then the answers activate it, as no event
// is left to come.
TEST(PreemptionExecutorTest, VictimsSeenGoneBeforeTheAnswersActivate) {
  ExecutorWorld w({"low"});
  w.client.answer = [&w](absl::string_view method, absl::string_view) {
    if (method == "DELETE") w.cache.RemovePod("default/low");
    return 200;
  };
  w.executor.Preempt(std::make_shared<const objects::PodInfo>(Pod("big", 100)),
                     {"n1", {{"default", "low", "u-low", false}}});
  w.writer.WaitIdle(Writer::Lane::kBindings);
  EXPECT_EQ(w.activated, std::vector<std::string>{"default/big"});
  EXPECT_FALSE(w.executor.Preempting("default/big"));
}

// The Scheduler around it: a pod no node took preempts where the scorer
// says, is nominated there (cache and status, with the condition), keeps
// waiting in the queue, and its event carries the PostFilter message.
class SchedulerPreemptionTest : public ::testing::Test {
 protected:
  SchedulerPreemptionTest()
      : queue_({absl::Seconds(1), absl::Seconds(10), absl::Minutes(5),
                [] { return absl::Now(); }, nullptr, nullptr}),
        writer_(&client_, Writer::Options()),
        feedback_(&writer_, "host"),
        profiles_(ProfileOptions(), [this] { return Profile(); }),
        scheduler_(Scheduler::Options{.schedule_workers = 0}, &profiles_,
                   &cache_, &queue_, &scorer_, &writer_, &feedback_,
                   &metrics_) {
    pb::Node node;
    node.set_name("n1");
    cache_.UpsertNode(node);
    scorer_.rejected["n1"] = "Insufficient cpu";
  }
  ~SchedulerPreemptionTest() override { scheduler_.Stop(); }

  static Profiles::Options ProfileOptions() {
    Profiles::Options o;
    o.served = {"test-scheduler"};
    return o;
  }
  pb::ListProfilesResponse Profile() const {
    pb::ListProfilesResponse r;
    pb::Profile* p = r.add_profiles();
    p->set_scheduler_name("test-scheduler");
    if (post_filter_) {
      pb::PluginInfo* plugin = p->add_plugins();
      plugin->set_name("DefaultPreemption");
      plugin->add_extension_points("PostFilter");
    }
    return r;
  }
  // Queues the pod and runs one cycle for it; with `deleted`, the pod is
  // deleted while the cycle runs.
  void Schedule(const objects::PodInfo& pod, bool deleted = false) {
    queue_.Delete(pod.key);  // from an earlier Schedule
    queue_.AddOrUpdate(std::make_shared<const objects::PodInfo>(pod));
    auto qp = queue_.Pop(absl::Seconds(5));
    ASSERT_TRUE(qp.has_value());
    if (deleted) {
      cache_.RemovePod(pod.key);
      queue_.Delete(pod.key);
    }
    scheduler_.ScheduleOne(*std::move(qp));
  }
  std::vector<std::string> PreemptorPatches() {
    return client_.Matching("PATCH /api/v1/namespaces/default/pods/big/status");
  }
  static std::function<
      absl::StatusOr<pb::PreemptResponse>(const pb::PreemptRequest&)>
  Chooses(int victim) {
    return [victim](const pb::PreemptRequest& req) {
      pb::PreemptResponse resp;
      resp.set_message(
          "preemption: found a potential placement for pod on node n1, "
          "preempting 1 victims");
      pb::PreemptionCandidate* c = resp.add_candidates();
      c->set_node(0);
      c->add_victims(victim);
      resp.set_chosen(0);
      EXPECT_EQ(req.nodes(0).pods(victim).name(), "low");
      return resp;
    };
  }

  bool post_filter_ = true;
  RecordingClient client_;
  testing::FakeScorer scorer_;
  cache::Cache cache_;
  queue::SchedulingQueue queue_;
  Writer writer_;
  Feedback feedback_;
  Metrics metrics_;
  Profiles profiles_;
  Scheduler scheduler_;
};

TEST_F(SchedulerPreemptionTest, PreemptsAndNominates) {
  cache_.UpsertAssignedPod(Pod("low", 0, "n1"));
  scorer_.preempt = Chooses(0);
  Schedule(Pod("big", 100));
  EXPECT_EQ(cache_.NominatedNode("default/big"), "n1");
  EXPECT_EQ(queue_.sizes().unschedulable, 1u);
  EXPECT_EQ(client_.Matching(kVictimDelete).size(), 1u);
  const std::vector<std::string> patches = PreemptorPatches();
  ASSERT_EQ(patches.size(), 1u);  // the condition and the nomination at once
  const nlohmann::json status =
      nlohmann::json::parse(patches[0].substr(patches[0].find('{')))["status"];
  EXPECT_EQ(status["nominatedNodeName"], "n1");
  const std::string want =
      "0/1 nodes are available: 1 Insufficient cpu. preemption: found a "
      "potential placement for pod on node n1, preempting 1 victims";
  EXPECT_EQ(status["conditions"][0]["message"], want);
  bool failed_scheduling = false;
  for (const std::string& w : client_.Matching(kEvents)) {
    const nlohmann::json ev = nlohmann::json::parse(w.substr(w.find('{')));
    if (ev["reason"] != "FailedScheduling") continue;
    failed_scheduling = true;
    EXPECT_EQ(ev["note"], want);
    EXPECT_EQ(ev["regarding"]["name"], "big");
  }
  EXPECT_TRUE(failed_scheduling);
}

// Upstream's PreEnqueue for DefaultPreemption: while its victims are live,
// a preemptor popped again goes back to wait without a cycle, an attempt,
// an event or a status write; once the cache sees them go it is tried.
TEST_F(SchedulerPreemptionTest, APreemptorWaitsWhileItsVictimsAreLive) {
  cache_.UpsertAssignedPod(Pod("low", 0, "n1"));
  scorer_.preempt = Chooses(0);
  Schedule(Pod("big", 100));
  ASSERT_EQ(scorer_.preempted.size(), 1u);
  ASSERT_EQ(client_.Matching(kVictimDelete).size(), 1u);
  writer_.WaitIdle(Writer::Lane::kBindings);
  writer_.WaitIdle(Writer::Lane::kFeedback);
  const size_t evaluated = scorer_.evaluated.size();
  const size_t written = client_.Matching("").size();

  // Popped again while "low" is still in the cache: straight back.
  queue_.Activate("default/big");
  auto again = queue_.Pop(absl::Seconds(5));
  ASSERT_TRUE(again.has_value());
  const int attempts = again->attempts;
  scheduler_.ScheduleOne(*std::move(again));
  writer_.WaitIdle(Writer::Lane::kFeedback);
  EXPECT_EQ(scorer_.evaluated.size(), evaluated);
  EXPECT_EQ(scorer_.preempted.size(), 1u);
  EXPECT_EQ(client_.Matching("").size(), written);
  EXPECT_EQ(queue_.sizes().unschedulable, 1u);

  // The victim goes: tried again, that wait not counted as an attempt.
  cache_.RemovePod("default/low");
  scorer_.rejected.clear();
  queue_.Activate("default/big");
  auto last = queue_.Pop(absl::Seconds(5));
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(last->attempts, attempts);
  scheduler_.ScheduleOne(*std::move(last));
  EXPECT_GT(scorer_.evaluated.size(), evaluated);
  EXPECT_EQ(cache_.NodeOf("default/big"), "n1");
}

// What each failure does to a nomination the pod already has (from the
// API): cleared without PostFilter, kept when the pod may not preempt again
// yet, set elsewhere after a new preemption; never left behind by a pod
// deleted during its cycle.
TEST_F(SchedulerPreemptionTest, FailuresSetTheNominationAsUpstream) {
  cache_.UpsertAssignedPod(Pod("low", 0, "n1"));
  const objects::PodInfo nominated = Pod("big", 100, "", "n9");
  auto nnn_in_patch = [&]() -> std::optional<nlohmann::json> {
    const std::vector<std::string> p = PreemptorPatches();
    if (p.empty()) return std::nullopt;
    const nlohmann::json s =
        nlohmann::json::parse(p.back().substr(p.back().find('{')))["status"];
    if (!s.contains("nominatedNodeName")) return std::nullopt;
    return s["nominatedNodeName"];
  };

  post_filter_ = false;
  cache_.UpdatePendingPod(nominated);
  Schedule(nominated);
  EXPECT_EQ(cache_.NominatedNode("default/big"), "");
  EXPECT_EQ(nnn_in_patch(), nlohmann::json(nullptr));
  EXPECT_THAT(scorer_.preempted, IsEmpty());

  profiles_.Invalidate("test: PostFilter on");
  post_filter_ = true;
  scorer_.preempt = [](const pb::PreemptRequest&) {
    pb::PreemptResponse resp;
    resp.mutable_status()->set_code(pb::CODE_UNSCHEDULABLE);
    resp.set_message(
        "preemption: not eligible due to a terminating pod on the nominated "
        "node.");
    resp.set_chosen(-1);
    return resp;
  };
  objects::PodInfo waiting = nominated;
  waiting.unschedulable_message = "stale";
  cache_.UpdatePendingPod(waiting);
  Schedule(waiting);
  EXPECT_EQ(cache_.NominatedNode("default/big"), "n9");
  EXPECT_EQ(nnn_in_patch(), std::nullopt);  // the condition only

  scorer_.preempt = Chooses(0);
  Schedule(Pod("gone", 100), /*deleted=*/true);
  EXPECT_EQ(client_.Matching(kVictimDelete).size(), 1u);  // it preempted
  EXPECT_EQ(cache_.NominatedNode("default/gone"), "");
  EXPECT_FALSE(queue_.Contains("default/gone"));
}

}  // namespace
}  // namespace kscore::scheduler
