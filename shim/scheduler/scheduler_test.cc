#include "shim/scheduler/scheduler.h"

#include <atomic>
#include <map>
#include <thread>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "model/cluster_event.h"
#include "nlohmann/json.hpp"
#include "shim/objects/storage.h"
#include "shim/scheduler/hints.h"
#include "shim/scheduler/testing/fake_scorer.h"
#include "shim/scorer_client/scorer_client.h"
#include "tests/support/in_process_scorer.h"

namespace kscore::scheduler {
namespace {

// Holds every binding (or, with hold_all, every request) until the test
// answers it; anything else (events) succeeds at once.
class HoldingClient : public kube::Client {
 public:
  explicit HoldingClient(bool hold_all = false) : hold_all_(hold_all) {}
  absl::StatusOr<kube::Response> Do(absl::string_view method,
                                    absl::string_view path,
                                    absl::string_view body,
                                    absl::string_view) override {
    absl::MutexLock lock(&mu_);
    written_.push_back(absl::StrCat(method, " ", path, " ", body));
    if (!refused_.empty() && absl::StartsWith(path, refused_)) return refusal_;
    return kube::Response{201, "{}"};
  }
  // Answers the requests (other than bindings) to paths under `prefix`
  // with `response` from now on.
  void Refuse(std::string prefix, kube::Response response) {
    absl::MutexLock lock(&mu_);
    refused_ = std::move(prefix);
    refusal_ = std::move(response);
  }
  absl::Status Stream(absl::string_view,
                      const std::function<bool(absl::string_view)>&,
                      const std::atomic<bool>*) override {
    return absl::UnimplementedError("no streams");
  }
  void DoAsync(absl::string_view method, absl::string_view path,
               std::string body, absl::string_view content_type,
               absl::string_view accept, Done done) override {
    if (!hold_all_ && !absl::EndsWith(path, "/binding")) {
      {
        absl::MutexLock lock(&mu_);
        others_.push_back(absl::StrCat(method, " ", path));
      }
      done(DoAs(method, path, body, content_type, accept));
      return;
    }
    absl::MutexLock lock(&mu_);
    binds_.push_back(std::move(done));
    bodies_.push_back(std::move(body));
  }
  std::string Body(size_t i) {
    absl::MutexLock lock(&mu_);
    return bodies_[i];
  }
  size_t Binds() {
    absl::MutexLock lock(&mu_);
    return binds_.size();
  }
  std::vector<std::string> Others() {
    absl::MutexLock lock(&mu_);
    return others_;
  }
  // Requests answered at once (events, condition patches):
  // "METHOD PATH BODY".
  std::vector<std::string> Written() {
    absl::MutexLock lock(&mu_);
    return written_;
  }
  // Answers held request i with 201 (once).
  void Answer(size_t i) { AnswerWith(i, kube::Response{201, "{}"}); }
  void AnswerWith(size_t i, kube::Response response) {
    Done done;
    {
      absl::MutexLock lock(&mu_);
      std::swap(done, binds_[i]);
    }
    if (done) done(std::move(response));
  }
  // Answers every held request not answered yet, including those sent
  // meanwhile (so a failed test does not leave waiters behind).
  void AnswerAll() {
    for (size_t i = 0; i < Binds(); ++i) Answer(i);
  }

 private:
  absl::Mutex mu_;
  const bool hold_all_;
  std::vector<Done> binds_;  // held requests
  std::vector<std::string> bodies_;
  std::vector<std::string> others_;  // requests other than bindings
  std::vector<std::string> written_;
  std::string refused_;
  kube::Response refusal_;
};

constexpr char kProfile[] = R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: concentrate-scheduler
  plugins:
    score:
      enabled:
      - name: Concentrate
)";

objects::PodInfo Pod(int i) {
  return *objects::PodFromJson(
      nlohmann::json{{"metadata",
                      {{"name", absl::StrCat("p-", i)},
                       {"namespace", "default"},
                       {"uid", absl::StrCat("uid-", i)},
                       {"labels", {{"app", "web"}}}}},
                     {"spec",
                      {{"schedulerName", "concentrate-scheduler"},
                       {"containers", {{{"name", "c"}}}}}},
                     {"status", {{"phase", "Pending"}}}});
}

TEST(SchedulerBindTest, BindingsBeyondTheCapWaitAndStopWaitsForThem) {
  auto real = testing::InProcessScorer::Start(kProfile);
  ASSERT_TRUE(real.ok()) << real.status();
  auto scorer =
      *scorer_client::ScorerClient::Create({.target = (*real)->target()});

  cache::Cache cache;
  pb::Node node;
  node.set_name("node-1");
  node.mutable_allocatable()->set_milli_cpu(4000);
  node.mutable_allocatable()->set_memory(int64_t{16} << 30);
  node.mutable_allocatable()->set_pods(110);
  cache.UpsertNode(node);
  queue::SchedulingQueue queue({absl::Seconds(1), absl::Seconds(10),
                                absl::Minutes(5), [] { return absl::Now(); },
                                nullptr, nullptr});
  HoldingClient client;
  Writer::Options writer_options;
  writer_options.max_bindings_in_flight = 2;
  Writer writer(&client, writer_options);
  Feedback feedback(&writer, "test-host");
  Metrics metrics;
  Scheduler::Options options;
  Profiles::Options profile_options;
  profile_options.served = {"concentrate-scheduler"};
  Profiles profiles_known(profile_options,
                          [&] { return scorer->ListProfiles(); });
  Scheduler scheduler(options, &profiles_known, &cache, &queue, scorer.get(),
                      &writer, &feedback, &metrics);

  constexpr int kPods = 5;
  for (int i = 0; i < kPods; ++i) {
    queue.AddOrUpdate(std::make_shared<const objects::PodInfo>(Pod(i)));
  }
  for (int i = 0; i < kPods; ++i) {
    auto qp = queue.Pop(absl::Seconds(5));
    ASSERT_TRUE(qp.has_value());
    scheduler.ScheduleOne(*std::move(qp));
  }
  // Every pod is assumed on the node; two bindings are sent, three wait.
  for (int i = 0; i < kPods; ++i) {
    EXPECT_EQ(cache.NodeOf(absl::StrCat("default/p-", i)), "node-1");
  }
  EXPECT_EQ(client.Binds(), 2u);
  EXPECT_TRUE(client.Others().empty());  // no event before the binding
  client.Answer(0);  // its slot goes to the next waiting binding
  EXPECT_EQ(client.Binds(), 3u);

  std::atomic<bool> stopped{false};
  std::thread stopper([&] {
    scheduler.Stop();
    stopped = true;
  });
  client.Answer(1);
  client.Answer(2);
  EXPECT_EQ(client.Binds(), kPods);
  client.Answer(3);
  EXPECT_FALSE(stopped.load()) << "Stop returned with a binding in flight";
  client.Answer(4);
  stopper.join();
  EXPECT_TRUE(stopped.load());
  // One Scheduled event per bound pod, sent without waiting.
  EXPECT_EQ(
      client.Others(),
      std::vector<std::string>(
          kPods, "POST /apis/events.k8s.io/v1/namespaces/default/events"));
}

objects::PodInfo PodWithClaim(const std::string& name,
                              const std::string& claim) {
  return *objects::PodFromJson(nlohmann::json{
      {"metadata",
       {{"name", name}, {"namespace", "default"}, {"uid", "uid-" + name}}},
      {"spec",
       {{"schedulerName", "concentrate-scheduler"},
        {"containers", {{{"name", "c"}}}},
        {"volumes",
         {{{"name", "data"},
           {"persistentVolumeClaim", {{"claimName", claim}}}}}}}},
      {"status", {{"phase", "Pending"}}}});
}

std::shared_ptr<const objects::ClaimInfo> ClaimOf(const std::string& name,
                                                  const std::string& rv,
                                                  const std::string& volume) {
  nlohmann::json c = {
      {"metadata",
       {{"namespace", "default"},
        {"name", name},
        {"uid", "claim-" + name},
        {"resourceVersion", rv}}},
      {"spec",
       {{"storageClassName", "local"},
        {"accessModes", {"ReadWriteOnce"}},
        {"resources", {{"requests", {{"storage", "1Gi"}}}}}}},
      {"status", {{"phase", volume.empty() ? "Pending" : "Bound"}}}};
  if (!volume.empty()) {
    c["spec"]["volumeName"] = volume;
    c["metadata"]["annotations"] = {{"pv.kubernetes.io/bind-completed", "yes"}};
  }
  return std::make_shared<objects::ClaimInfo>(*objects::ClaimFromJson(c));
}

std::shared_ptr<const objects::VolumeInfo> LocalVolume(
    const std::string& rv, const std::string& claim) {
  nlohmann::json v = {
      {"metadata", {{"name", "pv1"}, {"resourceVersion", rv}}},
      {"spec",
       {{"storageClassName", "local"},
        {"capacity", {{"storage", "2Gi"}}},
        {"accessModes", {"ReadWriteOnce"}},
        {"nodeAffinity",
         {{"required",
           {{"nodeSelectorTerms",
             {{{"matchExpressions",
                {{{"key", "kubernetes.io/hostname"},
                  {"operator", "In"},
                  {"values", {"node-2"}}}}}}}}}}}}}},
      {"status", {{"phase", claim.empty() ? "Available" : "Bound"}}}};
  if (!claim.empty()) {
    v["spec"]["claimRef"] = {
        {"namespace", "default"}, {"name", claim}, {"uid", "claim-" + claim}};
  }
  return std::make_shared<objects::VolumeInfo>(*objects::VolumeFromJson(v));
}

// Two nodes, a WaitForFirstConsumer class and one local volume, pv1 on
// node-2, that either claim (c1, c2) could take; a scheduler in front of
// a real in-process scorer running `profile`, writing through `client_`.
class SchedulerVolumeTest : public ::testing::Test {
 protected:
  void Start(const std::string& profile) {
    auto real = testing::InProcessScorer::Start(profile);
    ASSERT_TRUE(real.ok()) << real.status();
    real_ = *std::move(real);
    scorer_ = *scorer_client::ScorerClient::Create({.target = real_->target()});
    for (const char* name : {"node-1", "node-2"}) {
      pb::Node node;
      node.set_name(name);
      (*node.mutable_labels())["kubernetes.io/hostname"] = name;
      node.mutable_allocatable()->set_milli_cpu(4000);
      node.mutable_allocatable()->set_memory(int64_t{16} << 30);
      node.mutable_allocatable()->set_pods(110);
      cache_.UpsertNode(node);
    }
    objects::StorageClassInfo sc;
    sc.sc.set_name("local");
    sc.sc.set_provisioner("kubernetes.io/no-provisioner");
    sc.sc.set_volume_binding_mode("WaitForFirstConsumer");
    cache_.volumes().UpsertClass(
        std::make_shared<objects::StorageClassInfo>(sc));
    cache_.volumes().UpsertVolume(LocalVolume("1", ""));
    cache_.volumes().UpsertClaim(ClaimOf("c1", "1", ""));
    cache_.volumes().UpsertClaim(ClaimOf("c2", "1", ""));
    Profiles::Options profile_options;
    profile_options.served = {"concentrate-scheduler"};
    profiles_ = std::make_unique<Profiles>(
        profile_options, [this] { return scorer_->ListProfiles(); });
    scheduler_ = std::make_unique<Scheduler>(
        Scheduler::Options(), profiles_.get(), &cache_, &queue_, scorer_.get(),
        &writer_, &feedback_, &metrics_);
  }
  void TearDown() override {
    client_.AnswerAll();
    if (scheduler_ != nullptr) scheduler_->Stop();
  }
  void Schedule(const std::string& pod, const std::string& claim) {
    queue_.AddOrUpdate(
        std::make_shared<const objects::PodInfo>(PodWithClaim(pod, claim)));
    auto qp = queue_.Pop(absl::Seconds(5));
    ASSERT_TRUE(qp.has_value());
    scheduler_->ScheduleOne(*std::move(qp));
  }
  // The last PATCH of pv1 written, or "".
  std::string VolumePatch() {
    std::string patch;
    for (const std::string& w : client_.Written()) {
      if (absl::StartsWith(w, "PATCH /api/v1/persistentvolumes/pv1 "))
        patch = w;
    }
    return patch;
  }
  // Polls `done` until it holds or 10 s pass.
  static bool Eventually(const std::function<bool()>& done) {
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (!done()) {
      if (absl::Now() > deadline) return false;
      absl::SleepFor(absl::Milliseconds(10));
    }
    return true;
  }
  // Eventually a write containing `text`.
  bool WaitForWrite(const std::string& text) {
    return Eventually([&] {
      for (const std::string& w : client_.Written()) {
        if (absl::StrContains(w, text)) return true;
      }
      return false;
    });
  }

  std::unique_ptr<testing::InProcessScorer> real_;
  std::unique_ptr<scorer_client::ScorerClient> scorer_;
  cache::Cache cache_;
  // A failed pod backs off for longer than a test runs.
  queue::SchedulingQueue queue_{{absl::Seconds(60), absl::Seconds(60),
                                 absl::Minutes(5), [] { return absl::Now(); },
                                 nullptr, nullptr}};
  HoldingClient client_;
  Writer writer_{&client_, Writer::Options()};
  Feedback feedback_{&writer_, "test-host"};
  Metrics metrics_;
  std::unique_ptr<Profiles> profiles_;
  std::unique_ptr<Scheduler> scheduler_;
};

// VolumeBinding's Reserve and PreBind: the chosen node's volume gets its
// claimRef (a merge patch over the resourceVersion assumed); the pod is
// bound only once the PV controller has bound its claim; meanwhile another
// pod whose claim only that volume could take is not promised it.
TEST_F(SchedulerVolumeTest, PreBindWritesTheClaimRefThenBindsOnceBound) {
  ASSERT_NO_FATAL_FAILURE(Start(kProfile));
  Schedule("a", "c1");
  Schedule("b", "c2");
  // a is assumed on node-2 and its volume's claimRef written; b gets none.
  EXPECT_EQ(cache_.NodeOf("default/a"), "node-2");
  EXPECT_EQ(cache_.NodeOf("default/b"), "");
  const std::string patch = VolumePatch();
  EXPECT_THAT(patch, ::testing::HasSubstr(R"("resourceVersion":"1")"));
  EXPECT_THAT(patch, ::testing::HasSubstr(R"("uid":"claim-c1")"));
  EXPECT_EQ(client_.Binds(), 0u) << "bound before its claim";
  // The PV controller binds the claim: then, and only then, the pod.
  cache_.volumes().UpsertVolume(LocalVolume("2", "c1"));
  cache_.volumes().UpsertClaim(ClaimOf("c1", "2", "pv1"));
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (client_.Binds() == 0 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  ASSERT_EQ(client_.Binds(), 1u);
  EXPECT_THAT(client_.Body(0), ::testing::HasSubstr("node-2"));
}

// The claimRef write refused (the volume changed since it was assumed):
// the pod is not bound, its reservation is forgotten (the volume can be
// promised to another claim) and it waits to be retried, with upstream's
// words in its condition.
TEST_F(SchedulerVolumeTest, RefusedWriteForgetsTheReservationAndRetries) {
  ASSERT_NO_FATAL_FAILURE(Start(kProfile));
  client_.Refuse(
      "/api/v1/persistentvolumes/",
      kube::Response{409, R"({"kind":"Status","message":"Operation cannot )"
                          R"(be fulfilled on persistentvolumes \"pv1\": )"
                          R"(the object has been modified"})"});
  Schedule("a", "c1");
  ASSERT_TRUE(WaitForWrite(
      R"(running PreBind plugin \"VolumeBinding\": Operation cannot be )"
      R"(fulfilled on persistentvolumes)"));
  EXPECT_EQ(client_.Binds(), 0u);
  EXPECT_EQ(cache_.NodeOf("default/a"), "");
  EXPECT_TRUE(Eventually([&] { return queue_.Contains("default/a"); }));
  // pv1 is free again: b's claim gets it.
  client_.Refuse("", kube::Response{});
  Schedule("b", "c2");
  EXPECT_EQ(cache_.NodeOf("default/b"), "node-2");
  EXPECT_THAT(VolumePatch(), ::testing::HasSubstr(R"("uid":"claim-c2")"));
}

// The PV controller never binds: PreBind gives up after the profile's
// bindTimeoutSeconds with upstream's error, and the pod is retried.
TEST_F(SchedulerVolumeTest, UnboundClaimTimesOutAfterBindTimeoutSeconds) {
  ASSERT_NO_FATAL_FAILURE(Start(absl::StrCat(kProfile, R"(  pluginConfig:
  - name: VolumeBinding
    args:
      bindTimeoutSeconds: 1
)")));
  const absl::Time start = absl::Now();
  Schedule("a", "c1");
  EXPECT_THAT(VolumePatch(), ::testing::HasSubstr(R"("uid":"claim-c1")"));
  ASSERT_TRUE(WaitForWrite(
      R"(running PreBind plugin \"VolumeBinding\": binding volumes: )"
      R"(context deadline exceeded)"));
  EXPECT_GE(absl::Now() - start, absl::Seconds(1));
  EXPECT_EQ(client_.Binds(), 0u);
  EXPECT_EQ(cache_.NodeOf("default/a"), "");
  EXPECT_TRUE(Eventually([&] { return queue_.Contains("default/a"); }));
}

// A failed cycle's kind decides the condition's reason and where the pod
// waits: a plugin's Error or an unreachable scorer is a SchedulerError (the
// pod backs off), no fitting node is Unschedulable (it waits for an event).
TEST(SchedulerFailTest, KindGivesReasonAndQueue) {
  struct {
    std::string name;
    std::function<void(testing::FakeScorer&)> setup;
    std::string want_patch;  // in the condition's patch
    size_t want_unschedulable;
    std::string invalid = "";  // PodInfo::invalid
  } cases[] = {
      {"plugin error",
       [](testing::FakeScorer& s) {
         s.evaluate_status =
             absl::InvalidArgumentError("scorer: plugin \"Boom\": on fire");
       },
       R"("message":"scorer: plugin \"Boom\": on fire","reason":"SchedulerError")",
       0},
      {"scorer down",
       [](testing::FakeScorer& s) {
         s.evaluate_status = absl::UnavailableError("scorer: down");
       },
       R"("message":"scorer unavailable: scorer: down","reason":"SchedulerError")",
       0},
      {"no node fits",
       [](testing::FakeScorer& s) {
         s.rejected[testing::NodeName(0)] = "node(s) were unschedulable";
       },
       R"("message":"0/1 nodes are available: 1 node(s) were unschedulable.","reason":"Unschedulable")",
       1},
      // A quantity the shim could not read: the pod stays pending, told why.
      {"invalid pod", [](testing::FakeScorer&) {},
       R"("message":"invalid pod: spec.containers[0].resources.requests.cpu: must not be negative, got \"-1\"","reason":"Unschedulable")",
       1,
       R"(spec.containers[0].resources.requests.cpu: must not be negative, got "-1")"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    testing::FakeScorer scorer;
    c.setup(scorer);
    cache::Cache cache;
    pb::Node node;
    node.set_name(testing::NodeName(0));
    cache.UpsertNode(node);
    queue::SchedulingQueue queue({absl::Seconds(1), absl::Seconds(10),
                                  absl::Minutes(5), [] { return absl::Now(); },
                                  nullptr, nullptr});
    HoldingClient client;
    Writer writer(&client, Writer::Options());
    Feedback feedback(&writer, "test-host");
    Metrics metrics;
    Scheduler::Options options;
    options.schedule_workers = 0;  // the test runs the cycle itself
    Profiles::Options profile_options;
    profile_options.served = {"concentrate-scheduler"};
    Profiles profiles(profile_options, [] {
      pb::ListProfilesResponse r;
      r.add_profiles()->set_scheduler_name("concentrate-scheduler");
      return r;
    });
    Scheduler scheduler(options, &profiles, &cache, &queue, &scorer, &writer,
                        &feedback, &metrics);
    scheduler.Start();
    objects::PodInfo pod = Pod(0);
    pod.invalid = c.invalid;
    queue.AddOrUpdate(std::make_shared<const objects::PodInfo>(std::move(pod)));
    auto qp = queue.Pop(absl::Seconds(5));
    ASSERT_TRUE(qp.has_value());
    scheduler.ScheduleOne(*std::move(qp));
    scheduler.Stop();
    EXPECT_EQ(cache.NodeOf("default/p-0"), "");
    EXPECT_EQ(queue.sizes().unschedulable, c.want_unschedulable);
    // Both sent at once through the writer (the client answers at once).
    std::vector<std::string> written = client.Written();
    ASSERT_EQ(written.size(), 2u);  // the event, then the condition
    EXPECT_THAT(written[0], ::testing::HasSubstr("FailedScheduling"));
    EXPECT_THAT(written[1], ::testing::HasSubstr(c.want_patch));
  }
}

// The binding is kube-scheduler's Bind extension point: one observation per
// binding, Success or Error (a conflict too, as DefaultBinder's), labelled
// with the pod's profile, in upstream's buckets.
TEST(SchedulerBindTest, BindingsAreTimedAsTheBindExtensionPoint) {
  testing::FakeScorer scorer;
  cache::Cache cache;
  pb::Node node;
  node.set_name(testing::NodeName(0));
  cache.UpsertNode(node);
  queue::SchedulingQueue queue({absl::Seconds(1), absl::Seconds(10),
                                absl::Minutes(5), [] { return absl::Now(); },
                                nullptr, nullptr});
  HoldingClient client;
  Writer writer(&client, Writer::Options());
  Feedback feedback(&writer, "test-host");
  Metrics metrics;
  Scheduler::Options options;
  options.schedule_workers = 0;  // the test runs the cycles itself
  Profiles::Options profile_options;
  profile_options.served = {"concentrate-scheduler"};
  Profiles profiles(profile_options, [] {
    pb::ListProfilesResponse r;
    r.add_profiles()->set_scheduler_name("concentrate-scheduler");
    return r;
  });
  Scheduler scheduler(options, &profiles, &cache, &queue, &scorer, &writer,
                      &feedback, &metrics);
  scheduler.Start();
  for (int i = 0; i < 3; ++i) {
    queue.AddOrUpdate(std::make_shared<const objects::PodInfo>(Pod(i)));
    auto qp = queue.Pop(absl::Seconds(5));
    ASSERT_TRUE(qp.has_value());
    scheduler.ScheduleOne(*std::move(qp));
  }
  ASSERT_EQ(client.Binds(), 3u);
  client.Answer(0);
  client.AnswerWith(1, kube::Response{500, "{}"});
  client.AnswerWith(2, kube::Response{409, "{}"});
  scheduler.Stop();

  std::map<std::string, uint64_t> counts;  // "point/status/profile"
  for (const prometheus::MetricFamily& f : metrics.registry->Collect()) {
    if (f.name != "scheduler_framework_extension_point_duration_seconds") {
      continue;
    }
    for (const prometheus::ClientMetric& m : f.metric) {
      std::map<std::string, std::string> labels;
      for (const prometheus::ClientMetric::Label& l : m.label) {
        labels[l.name] = l.value;
      }
      ASSERT_EQ(labels.size(), 3u);
      counts[absl::StrCat(labels["extension_point"], "/", labels["status"], "/",
                          labels["profile"])] += m.histogram.sample_count;
      // ExponentialBuckets(0.0001, 2, 12) and +Inf.
      ASSERT_EQ(m.histogram.bucket.size(), 13u);
      EXPECT_DOUBLE_EQ(m.histogram.bucket[0].upper_bound, 0.0001);
      EXPECT_DOUBLE_EQ(m.histogram.bucket[11].upper_bound, 0.2048);
    }
  }
  EXPECT_THAT(counts,
              ::testing::UnorderedElementsAre(
                  ::testing::Pair("Bind/Success/concentrate-scheduler", 1u),
                  ::testing::Pair("Bind/Error/concentrate-scheduler", 2u)));
}

TEST(WriterTest, FeedbackTwoInFlightTheRestInOrder) {
  HoldingClient client(/*hold_all=*/true);
  auto writer = std::make_unique<Writer>(&client, Writer::Options());
  auto feedback = std::make_unique<Feedback>(writer.get(), "test-host");
  absl::Cleanup answer_all = [&] { client.AnswerAll(); };
  for (int i = 0; i < 5; ++i) feedback->Scheduled(Pod(i), "node-1");
  ASSERT_EQ(client.Binds(), 2u);  // held: two in flight, three queued
  for (size_t i = 0; i < 3; ++i) {
    client.Answer(i);
    ASSERT_EQ(client.Binds(), i + 3);
  }
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_THAT(client.Body(i),
                ::testing::HasSubstr(absl::StrCat("default/p-", i, " to")));
    // kube-scheduler's action for Scheduled (FailedScheduling's is
    // "Scheduling").
    EXPECT_THAT(client.Body(i), ::testing::HasSubstr("Binding"));
    EXPECT_THAT(client.Body(i),
                ::testing::Not(::testing::HasSubstr("Scheduling")));
  }
  client.Answer(3);
  client.Answer(4);

  // Going away waits for the events in flight.
  for (int i = 5; i < 7; ++i) feedback->Scheduled(Pod(i), "node-1");
  ASSERT_EQ(client.Binds(), 7u);
  feedback.reset();
  std::atomic<bool> gone{false};
  std::thread destroyer([&] {
    writer.reset();
    gone = true;
  });
  client.Answer(5);
  // The destructor must still be waiting for event 6: give a destructor
  // that does not wait time to return.
  const absl::Time deadline = absl::Now() + absl::Milliseconds(300);
  while (!gone.load() && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  EXPECT_FALSE(gone.load()) << "destroyed with an event in flight";
  client.Answer(6);
  destroyer.join();
  std::move(answer_all).Cancel();
  EXPECT_EQ(client.Binds(), 7u);
}

// A pending pod's status patches (its condition, its nominated node) go
// ahead of the events waiting in the feedback lane, in their own order.
TEST(WriterTest, StatusPatchesGoAheadOfWaitingEvents) {
  HoldingClient client(/*hold_all=*/true);
  Writer writer(&client, Writer::Options());
  Feedback feedback(&writer, "test-host");
  absl::Cleanup answer_all = [&] { client.AnswerAll(); };
  for (int i = 0; i < 4; ++i) feedback.Scheduled(Pod(i), "node-1");
  feedback.SetNominatedNode("default", "p-9", "node-2", nullptr);
  feedback.MarkUnschedulable(Pod(8), "Unschedulable", "0/1 nodes are available",
                             std::nullopt, nullptr);
  ASSERT_EQ(client.Binds(), 2u);  // two events in flight, four waiting
  for (size_t i = 0; i < 4; ++i) {
    client.Answer(i);
    ASSERT_EQ(client.Binds(), i + 3);
  }
  EXPECT_THAT(client.Body(0), ::testing::HasSubstr("default/p-0 to"));
  EXPECT_THAT(client.Body(1), ::testing::HasSubstr("default/p-1 to"));
  EXPECT_THAT(client.Body(2), ::testing::HasSubstr("\"nominatedNodeName\""));
  EXPECT_THAT(client.Body(3), ::testing::HasSubstr("\"PodScheduled\""));
  EXPECT_THAT(client.Body(4), ::testing::HasSubstr("default/p-2 to"));
  EXPECT_THAT(client.Body(5), ::testing::HasSubstr("default/p-3 to"));
}

// A request no longer wanted when its turn comes is not sent: its `done`
// gets CANCELLED and its slot goes on, however many such wait in a row.
TEST(WriterTest, RequestsNoLongerWantedAreSkippedInTheirTurn) {
  HoldingClient client(/*hold_all=*/true);
  Writer writer(&client, Writer::Options());
  absl::Cleanup answer_all = [&] { client.AnswerAll(); };
  auto request = [](bool wanted) {
    Writer::Request r;
    r.method = "PATCH";
    r.path = wanted ? "/wanted" : "/gone";
    r.body = {"{}", "application/json"};
    r.wanted = [wanted] { return wanted; };
    return r;
  };
  int sent = 0, cancelled = 0;
  auto done = [&](const absl::StatusOr<kube::Response>& r) {
    if (absl::IsCancelled(r.status())) {
      ++cancelled;
    } else {
      ++sent;
    }
  };
  ASSERT_TRUE(writer.Send(Writer::Lane::kFeedback, request(true), done));
  ASSERT_TRUE(writer.Send(Writer::Lane::kFeedback, request(true), done));
  constexpr int kGone = 50000;
  for (int i = 0; i < kGone; ++i) {
    ASSERT_TRUE(writer.Send(Writer::Lane::kFeedback, request(false), done));
  }
  ASSERT_TRUE(writer.Send(Writer::Lane::kFeedback, request(true), done));
  ASSERT_EQ(client.Binds(), 2u);
  client.Answer(0);
  EXPECT_EQ(cancelled, kGone);
  ASSERT_EQ(client.Binds(), 3u);
  client.Answer(1);
  client.Answer(2);
  EXPECT_EQ(sent, 3);
}

// kube-scheduler's buckets and labels: attempt duration in 15 exponential
// buckets from 1 ms, attempts in 1..16, the SLI by attempts capped at 15+.
// The plugins that rejected the pod, as the scorer names them, stay with it
// in the queue with what they register: only those events move it.
TEST(SchedulerFailTest, RejectorsAndTheirEventsReachTheQueue) {
  namespace action = model::action;
  testing::FakeScorer scorer;
  scorer.rejected[testing::NodeName(0)] = "node(s) were unschedulable";
  scorer.tamper = [](pb::EvaluateResponse& r) {
    r.add_unschedulable_plugins("NodeUnschedulable");
  };
  cache::Cache cache;
  pb::Node node;
  node.set_name(testing::NodeName(0));
  cache.UpsertNode(node);
  queue::SchedulingQueue queue({absl::Seconds(1), absl::Seconds(10),
                                absl::Minutes(5), [] { return absl::Now(); },
                                nullptr, nullptr});
  HoldingClient client;
  Writer writer(&client, Writer::Options());
  Feedback feedback(&writer, "test-host");
  Metrics metrics;
  Scheduler::Options options;
  options.schedule_workers = 0;
  Profiles::Options profile_options;
  profile_options.served = {"concentrate-scheduler"};
  Profiles profiles(profile_options, [] {
    pb::ListProfilesResponse r;
    pb::Profile* p = r.add_profiles();
    p->set_scheduler_name("concentrate-scheduler");
    pb::PluginInfo* plugin = p->add_plugins();
    plugin->set_name("NodeUnschedulable");
    plugin->add_extension_points("Filter");
    *plugin->add_events() = model::MakeEvent(
        pb::EVENT_RESOURCE_NODE, action::kAdd | action::kUpdateNodeTaint);
    return r;
  });
  Scheduler scheduler(options, &profiles, &cache, &queue, &scorer, &writer,
                      &feedback, &metrics);
  queue.AddOrUpdate(std::make_shared<const objects::PodInfo>(Pod(0)));
  auto qp = queue.Pop(absl::Seconds(5));
  ASSERT_TRUE(qp.has_value());
  scheduler.ScheduleOne(*std::move(qp));
  using Key = std::pair<std::string, std::string>;
  EXPECT_THAT(queue.UnschedulableByPlugin(),
              ::testing::ElementsAre(::testing::Pair(
                  Key{"concentrate-scheduler", "NodeUnschedulable"}, 1)));
  queue.MoveAllToActiveOrBackoff(
      model::MakeEvent(pb::EVENT_RESOURCE_NODE, action::kUpdateNodeLabel));
  EXPECT_EQ(queue.sizes().unschedulable, 1u);
  queue.MoveAllToActiveOrBackoff(
      model::MakeEvent(pb::EVENT_RESOURCE_NODE, action::kUpdateNodeTaint));
  EXPECT_EQ(queue.sizes().unschedulable, 0u);
}

// One QueueingHint call per event and profile, one query per template and
// plugins; the answers go back to the right pods; a failed call moves all.
TEST(HintAskerTest, OneQueryPerTemplateAndFailuresMoveEveryPod) {
  namespace action = model::action;
  testing::FakeScorer scorer;
  queue::SchedulingQueue queue({absl::Seconds(1), absl::Seconds(10),
                                absl::Minutes(5), [] { return absl::Now(); },
                                nullptr, nullptr});
  Profiles::Options profile_options;
  profile_options.served = {"concentrate-scheduler"};
  Profiles profiles(profile_options, [] {
    pb::ListProfilesResponse r;
    r.set_config_hash("h1");
    r.add_profiles()->set_scheduler_name("concentrate-scheduler");
    return r;
  });
  HintAsker asker(&profiles, &scorer, &queue);
  // Three pods waiting: two of one template (cpu 2), one of another (cpu 9).
  queue::SchedulingQueue::HintJob job;
  job.event = model::MakeEvent(pb::EVENT_RESOURCE_NODE, action::kAdd);
  job.objects.new_node = std::make_shared<objects::NodeInfo>();
  for (int i = 0; i < 3; ++i) {
    objects::PodInfo pod = Pod(i);
    pod.pod.add_containers()->mutable_requests()->set_milli_cpu(i == 2 ? 9000
                                                                       : 2000);
    queue.AddOrUpdate(std::make_shared<const objects::PodInfo>(pod));
    auto qp = queue.Pop(absl::ZeroDuration());
    ASSERT_TRUE(qp.has_value());
    qp->unschedulable_plugins = {"NodeResourcesFit"};
    queue.Requeue(*qp, true);
    job.pods.push_back(*qp);
    job.pods.back().attempts = 1;
  }
  scorer.hint = [](const pb::HintQuery& q) {
    const auto& c = q.pod().containers();
    return c[c.size() - 1].requests().milli_cpu() < 4000;
  };
  asker.Answer(job);
  ASSERT_EQ(scorer.hinted.size(), 1u);
  const pb::QueueingHintRequest& req = scorer.hinted[0];
  EXPECT_EQ(req.profile(), "concentrate-scheduler");
  EXPECT_EQ(req.config_hash(), "h1");
  EXPECT_TRUE(req.has_new_node());
  EXPECT_FALSE(req.has_old_node());
  ASSERT_EQ(req.queries_size(), 2);
  EXPECT_THAT(req.queries(0).plugins(),
              ::testing::ElementsAre("NodeResourcesFit"));
  EXPECT_EQ(queue.sizes().unschedulable, 1u);  // the cpu-9 pod stays

  scorer.hint_status = absl::UnavailableError("down");
  asker.Answer(job);
  EXPECT_EQ(queue.sizes().unschedulable, 0u);
}

// scheduler_unschedulable_pods{plugin,profile}: a series no pod holds any
// more reads 0.
TEST(MetricsTest, UnschedulablePodsPerPlugin) {
  Metrics m;
  m.SetUnschedulable({{{"p", "NodeResourcesFit"}, 2}, {{"p", "Other"}, 1}});
  m.SetUnschedulable({{{"p", "NodeResourcesFit"}, 3}});
  std::map<std::string, double> got;
  for (const auto& f : m.registry->Collect()) {
    if (f.name != "scheduler_unschedulable_pods") continue;
    for (const auto& metric : f.metric) {
      std::string key;
      for (const auto& l : metric.label) key += l.name + "=" + l.value + ",";
      got[key] = metric.gauge.value;
    }
  }
  EXPECT_THAT(got, ::testing::ElementsAre(
                       ::testing::Pair("plugin=NodeResourcesFit,profile=p,", 3),
                       ::testing::Pair("plugin=Other,profile=p,", 0)));
}

TEST(MetricsTest, UpstreamBucketsAndLabels) {
  Metrics m;
  m.Attempt("scheduled", "p", 0.003);
  m.Scheduled(3, 1.5);
  m.Scheduled(20, 30);
  std::map<std::string, const prometheus::MetricFamily*> by_name;
  std::vector<prometheus::MetricFamily> families = m.registry->Collect();
  for (const auto& f : families) by_name[f.name] = &f;
  const auto* attempt =
      by_name.at("scheduler_scheduling_attempt_duration_seconds");
  ASSERT_EQ(attempt->metric.size(), 1u);
  // 15 bounds and +Inf; the last bound is 0.001 * 2^14.
  const auto& buckets = attempt->metric[0].histogram.bucket;
  ASSERT_EQ(buckets.size(), 16u);
  EXPECT_DOUBLE_EQ(buckets[14].upper_bound, 16.384);
  const auto* tries = by_name.at("scheduler_pod_scheduling_attempts");
  EXPECT_EQ(tries->metric[0].histogram.sample_count, 2u);
  EXPECT_EQ(tries->metric[0].histogram.bucket.size(), 6u);  // 1..16, +Inf
  const auto* sli = by_name.at("scheduler_pod_scheduling_sli_duration_seconds");
  std::vector<std::string> labels;
  for (const auto& metric : sli->metric) {
    ASSERT_EQ(metric.label.size(), 1u);
    labels.push_back(metric.label[0].value);
    EXPECT_EQ(metric.histogram.bucket.size(), 21u);  // 20 bounds, +Inf
  }
  EXPECT_THAT(labels, ::testing::UnorderedElementsAre("3", "15+"));
}

// A full feedback lane drops feedback and holds back no binding; bindings
// wait for room but are never dropped.
TEST(WriterTest, LanesAreIndependentAndOnlyFeedbackDrops) {
  HoldingClient client(/*hold_all=*/true);
  Writer::Options options;
  options.max_bindings_in_flight = 1;
  options.max_feedback_in_flight = 1;
  options.max_feedback_queued = 1;
  auto writer = std::make_unique<Writer>(&client, options);
  absl::Cleanup answer_all = [&] { client.AnswerAll(); };
  auto request = [](const char* path) {
    Writer::Request r;
    r.method = "POST";
    r.path = path;
    r.body = {"{}", "application/json"};
    return r;
  };
  int feedback_done = 0;
  auto count = [&](const absl::StatusOr<kube::Response>&) { ++feedback_done; };
  EXPECT_TRUE(writer->Send(Writer::Lane::kFeedback, request("/e1"), count));
  EXPECT_TRUE(writer->Send(Writer::Lane::kFeedback, request("/e2"), count));
  EXPECT_FALSE(writer->Send(Writer::Lane::kFeedback, request("/e3"), count));
  EXPECT_EQ(writer->dropped(), 1u);
  EXPECT_EQ(client.Binds(), 1u);  // e1 in flight
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(writer->Send(Writer::Lane::kBindings, request("/binding"),
                             [](const absl::StatusOr<kube::Response>&) {}));
  }
  EXPECT_EQ(client.Binds(), 2u);  // e1 and the first binding
  client.Answer(1);               // the binding: the next one goes
  EXPECT_EQ(client.Binds(), 3u);
  client.Answer(0);  // e1: e2 goes
  EXPECT_EQ(client.Binds(), 4u);
  client.AnswerAll();
  writer.reset();
  std::move(answer_all).Cancel();
  EXPECT_EQ(feedback_done, 2);
  EXPECT_EQ(client.Binds(), 5u);  // two events and three bindings
}

// InterPodAffinity through the whole path: pods decoded from JSON, the
// cluster index answering the scorer's plan (namespace labels, existing
// terms, node labels asked for by the plan), a real scorer over gRPC.
class InterPodAffinityEndToEndTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto real = testing::InProcessScorer::Start(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        "profiles:\n"
        "- schedulerName: ipa-scheduler\n");
    ASSERT_TRUE(real.ok()) << real.status();
    real_ = *std::move(real);
    scorer_ = *scorer_client::ScorerClient::Create({.target = real_->target()});
    Profiles::Options o;
    o.served = {"ipa-scheduler"};
    known_ = std::make_unique<Profiles>(
        o, [this] { return scorer_->ListProfiles(); });
    auto info = known_->Lookup("ipa-scheduler");
    ASSERT_TRUE(info.ok()) << info.status();
    profile_ = *info;
  }

  void AddNode(const std::string& name, const std::string& zone) {
    pb::Node node;
    node.set_name(name);
    (*node.mutable_labels())["kubernetes.io/hostname"] = name;
    if (!zone.empty()) (*node.mutable_labels())["zone"] = zone;
    node.mutable_allocatable()->set_milli_cpu(4000);
    node.mutable_allocatable()->set_memory(int64_t{16} << 30);
    node.mutable_allocatable()->set_pods(110);
    cache_.UpsertNode(node);
  }
  // A pod from its JSON; `node` set places it.
  static objects::PodInfo MakePod(const std::string& ns,
                                  const std::string& name,
                                  nlohmann::json labels,
                                  nlohmann::json affinity,
                                  const std::string& node = "") {
    nlohmann::json spec = {{"schedulerName", "ipa-scheduler"},
                           {"containers", {{{"name", "c"}}}}};
    if (!affinity.is_null()) spec["affinity"] = affinity;
    if (!node.empty()) spec["nodeName"] = node;
    absl::StatusOr<objects::PodInfo> p = objects::PodFromJson(nlohmann::json{
        {"metadata",
         {{"name", name},
          {"namespace", ns},
          {"uid", "u-" + name},
          {"labels", labels}}},
        {"spec", spec},
        {"status", {{"phase", node.empty() ? "Pending" : "Running"}}}});
    EXPECT_TRUE(p.ok()) << p.status();
    return *p;
  }
  static nlohmann::json Term(const std::string& app,
                             nlohmann::json extra = nlohmann::json::object()) {
    nlohmann::json t = {{"topologyKey", "zone"},
                        {"labelSelector", {{"matchLabels", {{"app", app}}}}}};
    for (auto& [k, v] : extra.items()) t[k] = v;
    return t;
  }
  static nlohmann::json Required(const char* kind, nlohmann::json term) {
    return {
        {kind, {{"requiredDuringSchedulingIgnoredDuringExecution", {term}}}}};
  }
  CycleResult Run(const objects::PodInfo& pod) {
    std::mt19937_64 rng(1);
    return RunCycle({.pod = &pod,
                     .profile = profile_.get(),
                     .cache = &cache_,
                     .batch_size = 2,  // several calls, normalised together
                     .start = 0,
                     .rng = &rng,
                     .plans = nullptr},
                    *scorer_);
  }

  std::unique_ptr<testing::InProcessScorer> real_;
  std::unique_ptr<scorer_client::ScorerClient> scorer_;
  std::unique_ptr<Profiles> known_;
  std::shared_ptr<const ProfileInfo> profile_;
  cache::Cache cache_;
};

TEST_F(InterPodAffinityEndToEndTest, RequiredTermsDecideTheNode) {
  AddNode("n1", "a");
  AddNode("n2", "a");
  AddNode("n3", "b");
  model::LabelMap team;
  team["team"] = "x";
  cache_.UpsertNamespace("web-ns", team);
  cache_.UpsertAssignedPod(
      MakePod("web-ns", "web-0", {{"app", "web"}}, nullptr, "n1"));

  // Anti-affinity to web by zone: only zone b.
  CycleResult r = Run(MakePod("web-ns", "p1", {{"app", "api"}},
                              Required("podAntiAffinity", Term("web"))));
  ASSERT_TRUE(r.ok()) << r.failure->message;
  EXPECT_EQ(r.node, "n3");
  // Affinity to web pods of the namespaces labelled team=x: zone a.
  r = Run(
      MakePod("default", "p2", {{"app", "api"}},
              Required("podAffinity",
                       Term("web", {{"namespaceSelector",
                                     {{"matchLabels", {{"team", "x"}}}}}}))));
  ASSERT_TRUE(r.ok()) << r.failure->message;
  EXPECT_TRUE(r.node == "n1" || r.node == "n2") << r.node;
  // store-0's anti-affinity keeps cache pods out of zone b; with their own
  // anti-affinity to web, out of zone a too.
  cache_.UpsertAssignedPod(MakePod("web-ns", "store-0", {{"app", "store"}},
                                   Required("podAntiAffinity", Term("cache")),
                                   "n3"));
  r = Run(MakePod("web-ns", "p3", {{"app", "cache"}}, nullptr));
  ASSERT_TRUE(r.ok()) << r.failure->message;
  EXPECT_TRUE(r.node == "n1" || r.node == "n2") << r.node;
  r = Run(MakePod("web-ns", "p4", {{"app", "cache"}},
                  Required("podAntiAffinity", Term("web"))));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.failure->message,
            "0/3 nodes are available: 1 node(s) didn't satisfy existing pods "
            "anti-affinity rules, 2 node(s) didn't match pod anti-affinity "
            "rules. preemption: 0/3 nodes are available: 3 No preemption "
            "victims found for incoming pod.");
}

// Preferred affinity decides among nodes the other plugins score alike,
// even when the nodes come in several calls.
TEST_F(InterPodAffinityEndToEndTest, PreferredTermsScore) {
  for (const char* n : {"n1", "n2", "n3", "n4", "n5"}) AddNode(n, "");
  AddNode("n6", "b");
  cache_.UpsertAssignedPod(
      MakePod("default", "web-0", {{"app", "web"}}, nullptr, "n6"));
  nlohmann::json preferred = {
      {"podAffinity",
       {{"preferredDuringSchedulingIgnoredDuringExecution",
         {{{"weight", 50}, {"podAffinityTerm", Term("web")}}}}}}};
  CycleResult r = Run(MakePod("default", "p", {{"app", "api"}}, preferred));
  ASSERT_TRUE(r.ok()) << r.failure->message;
  EXPECT_EQ(r.node, "n6");
}

}  // namespace
}  // namespace kscore::scheduler
