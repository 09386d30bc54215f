#include "shim/scheduler/batching.h"

#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "shim/scorer_client/scorer_client.h"
#include "tests/support/in_process_scorer.h"

namespace kscore::scheduler {
namespace {

// The seed's profile with `percentage` of the nodes scored: 100, every
// node; below, kube-scheduler's share (at least minFeasibleNodesToFind, 100).
std::string ProfileScoring(int percentage) {
  return absl::StrCat(R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
percentageOfNodesToScore: )",
                      percentage, R"(
profiles:
- schedulerName: concentrate-scheduler
  plugins:
    score:
      enabled:
      - name: Concentrate
        weight: 10
  pluginConfig:
  - name: Concentrate
    args:
      labelKey: app
)");
}
objects::PodInfo MakePod(const std::string& name, const std::string& app,
                         int milli_cpu, const std::string& node = "",
                         const nlohmann::json& affinity = nullptr,
                         const std::string& memory = "256Mi") {
  nlohmann::json spec = {
      {"schedulerName", "concentrate-scheduler"},
      {"containers",
       {{{"name", "c"},
         {"resources",
          {{"requests",
            {{"cpu", absl::StrCat(milli_cpu, "m")}, {"memory", memory}}}}}}}}};
  if (!node.empty()) spec["nodeName"] = node;
  if (!affinity.is_null()) spec["affinity"] = affinity;
  absl::StatusOr<objects::PodInfo> pod = objects::PodFromJson(
      {{"metadata",
        {{"name", name},
         {"namespace", "default"},
         {"uid", "uid-" + name},
         {"labels", {{"app", app}}}}},
       {"spec", spec},
       {"status", {{"phase", node.empty() ? "Pending" : "Running"}}}});
  EXPECT_TRUE(pod.ok()) << pod.status();
  return *std::move(pod);
}

// A pod (anti-)affinity term selecting app=`app` over `key`.
nlohmann::json Term(const std::string& app, const std::string& key) {
  return {{"labelSelector", {{"matchLabels", {{"app", app}}}}},
          {"topologyKey", key}};
}

// The pod affinity of group `group` of the affinity sequences: required
// anti-affinity to its own group, preferred affinity to the next group's
// pods, or preferred anti-affinity to the group before, all per node.
nlohmann::json AffinityOf(int group) {
  const std::string self = absl::StrCat("g", group);
  const std::string next = absl::StrCat("g", (group + 1) % 4);
  const std::string before = absl::StrCat("g", (group + 3) % 4);
  const char* host = "kubernetes.io/hostname";
  switch (group % 4) {
    case 0:
      return {{"podAntiAffinity",
               {{"requiredDuringSchedulingIgnoredDuringExecution",
                 {Term(self, host)}}}}};
    case 1:
      return {{"podAffinity",
               {{"preferredDuringSchedulingIgnoredDuringExecution",
                 {{{"weight", 50}, {"podAffinityTerm", Term(next, host)}}}}}}};
    case 2:
      return {
          {"podAntiAffinity",
           {{"preferredDuringSchedulingIgnoredDuringExecution",
             {{{"weight", 30}, {"podAffinityTerm", Term(before, host)}}}}}}};
    default:
      return nullptr;
  }
}

// What the other pods bound meanwhile carry in the affinity sequences: now
// and then a required anti-affinity to a group, per node, and in the last
// round always one over the zone, where a binding changes the counts of
// every node of its zone.
nlohmann::json OthersTerm(int round, std::mt19937_64& rng) {
  const bool zone = round == 5;
  if (!zone && rng() % 2 == 0) return nullptr;
  const char* key =
      zone ? "topology.kubernetes.io/zone" : "kubernetes.io/hostname";
  return {{"podAntiAffinity",
           {{"requiredDuringSchedulingIgnoredDuringExecution",
             {Term(absl::StrCat("g", rng() % 4), key)}}}}};
}

pb::Node MakeNode(int i, std::mt19937_64& rng) {
  pb::Node n;
  n.set_name(absl::StrCat("node-", i));
  (*n.mutable_labels())["kubernetes.io/hostname"] = n.name();
  (*n.mutable_labels())["topology.kubernetes.io/zone"] =
      absl::StrCat("zone-", i % 3);
  n.mutable_allocatable()->set_milli_cpu(
      1000 * std::uniform_int_distribution<int>(2, 8)(rng));
  n.mutable_allocatable()->set_memory(int64_t{8} << 30);
  n.mutable_allocatable()->set_pods(110);
  if (rng() % 12 == 0) {
    pb::Taint* t = n.add_taints();
    t->set_key("soft");
    t->set_effect("PreferNoSchedule");
  }
  if (rng() % 25 == 0) n.set_unschedulable(true);
  return n;
}

// The profile as the shim learns it from the scorer (ListProfiles).
absl::StatusOr<std::shared_ptr<const ProfileInfo>> Learnt(
    scorer_client::ScorerClient& scorer) {
  Profiles::Options options;
  options.served = {"concentrate-scheduler"};
  Profiles profiles(options, [&] { return scorer.ListProfiles(); });
  return profiles.Lookup("concentrate-scheduler");
}

// Two caches in the same state: one schedules with batching, the other
// with a whole cycle every time.
struct Twin {
  cache::Cache batched, whole;
  void UpsertNode(const pb::Node& n) {
    batched.UpsertNode(n);
    whole.UpsertNode(n);
  }
  void Assume(const objects::PodInfo& p, const std::string& node) {
    ASSERT_TRUE(batched.AssumePod(p, node));
    ASSERT_TRUE(whole.AssumePod(p, node));
  }
  void AddBound(const objects::PodInfo& p) {
    batched.UpsertAssignedPod(p);
    whole.UpsertAssignedPod(p);
  }
  void Remove(const std::string& key) {
    batched.RemovePod(key);
    whole.RemovePod(key);
  }
};

// Random sequences of pods of a few families (pods that differ in their
// app label only) and templates, in runs and interleaved, with other pods
// coming and going and nodes changing between them: each pod is scheduled
// both ways on the same snapshot, from the same round-robin start. The
// batched cycle's node must be one the whole cycle ranks best, with the
// same total, among as many feasible nodes, and the next start the same;
// then both caches take the pod there. Two scorer replicas, so sessions
// must be found on the replica that keeps them.
struct Sequences {
  std::string profile_yaml;
  int min_nodes, max_nodes;
  // Pods carry AffinityOf their group, and the other pods bound meanwhile
  // now and then a required anti-affinity to a group.
  bool affinity = false;
  // Pods come out of order by up to this many places (parallel creates),
  // so that runs of a template interleave.
  int jitter = 0;
  int compared = 0, batched = 0, ahead = 0;

  void Run(uint64_t seed) {
    auto a = testing::InProcessScorer::Start(profile_yaml);
    auto b = testing::InProcessScorer::Start(profile_yaml);
    ASSERT_TRUE(a.ok() && b.ok());
    auto scorer = *scorer_client::ScorerClient::Create(
        {.target = absl::StrCat((*a)->target(), ",", (*b)->target())});
    absl::StatusOr<std::shared_ptr<const ProfileInfo>> known = Learnt(*scorer);
    ASSERT_TRUE(known.ok()) << known.status();
    ASSERT_TRUE((*known)->batches);
    std::mt19937_64 rng(seed);
    for (int round = 0; round < 6; ++round) {
      RunRound(round, **known, *scorer, rng);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }

  void RunRound(int round, const ProfileInfo& profile,
                scorer_client::Scorer& scorer, std::mt19937_64& rng) {
    Twin twin;
    const int n_nodes =
        std::uniform_int_distribution<int>(min_nodes, max_nodes)(rng);
    for (int i = 0; i < n_nodes; ++i) twin.UpsertNode(MakeNode(i, rng));
    Batches batches;
    PlanCache plans;
    std::vector<std::string> placed;
    const size_t batch_size = round % 2 == 0 ? 500 : 7;  // one call or many
    size_t start = 0;
    // Mostly runs of one template; now and then another, or churn. Groups
    // 0 and 2 (and 1 and 3) are one family.
    constexpr int kPods = 80;
    std::vector<int> groups(kPods);
    for (int k = 0; k < kPods; ++k)
      groups[k] = jitter > 0
                      ? ((k + static_cast<int>(rng() % (jitter + 1))) / 10) % 4
                      : (k / 10) % 4 + (rng() % 6 == 0 ? 1 : 0);
    for (int k = 0; k < kPods; ++k) {
      const int group = groups[k];
      const objects::PodInfo pod = MakePod(
          absl::StrCat("p", round, "-", k), absl::StrCat("g", group),
          100 * (1 + group % 2), "", affinity ? AffinityOf(group) : nullptr);
      if (rng() % 5 == 0 && !placed.empty()) {
        twin.Remove(placed[rng() % placed.size()]);
      }
      if (rng() % 7 == 0) {
        twin.AddBound(MakePod(absl::StrCat("x", round, "-", k),
                              absl::StrCat("g", rng() % 4), 200,
                              absl::StrCat("node-", rng() % n_nodes),
                              affinity ? OthersTerm(round, rng) : nullptr));
      }
      if (rng() % 15 == 0) twin.UpsertNode(MakeNode(rng() % n_nodes, rng));
      CycleInput in{.pod = &pod,
                    .profile = &profile,
                    .cache = &twin.batched,
                    .batch_size = batch_size,
                    .start = start,
                    .rng = &rng,
                    .plans = &plans,
                    .explain_top = 1,
                    .batches = &batches};
      // The queue's hint: which of the next pods are of this one's group.
      std::vector<bool> upcoming;
      for (int j = k + 1; j < kPods && j <= k + 24; ++j)
        upcoming.push_back(groups[j] == group);
      in.upcoming = [upcoming] { return upcoming; };
      CycleResult got = RunCycle(in, scorer);
      CycleInput all = in;
      all.cache = &twin.whole;
      all.batches = nullptr;
      all.explain_top = -1;  // every feasible node's total
      all.upcoming = nullptr;
      CycleResult want = RunCycle(all, scorer);
      ASSERT_EQ(got.ok(), want.ok())
          << k << ": " << got.node << " / "
          << (want.ok() ? "" : want.failure->message);
      if (!want.ok()) continue;
      Compare(round, k, got, want);
      ++compared;
      if (got.batched) ++batched;
      if (got.ahead) ++ahead;
      if (want.next_start.has_value()) start = *want.next_start;
      twin.Assume(pod, got.node);
      placed.push_back(pod.key);
    }
  }

  static void Compare(int round, int k, const CycleResult& got,
                      const CycleResult& want) {
    ASSERT_NE(got.explanation, nullptr);
    ASSERT_FALSE(want.explanation->top.empty());
    const int64_t best = want.explanation->top.front().total;
    std::set<std::string> tied;
    for (const Explanation::NodeScore& n : want.explanation->top)
      if (n.total == best) tied.insert(n.node);
    EXPECT_TRUE(tied.contains(got.node))
        << "round " << round << " pod " << k << ": " << got.node
        << (got.batched ? " (batched)" : "") << " is not among the best";
    EXPECT_EQ(got.explanation->top.front().total, best)
        << "round " << round << " pod " << k;
    EXPECT_EQ(got.explanation->feasible, want.explanation->feasible)
        << "round " << round << " pod " << k;
    EXPECT_EQ(got.next_start, want.next_start)
        << "round " << round << " pod " << k;
  }
};

TEST(BatchingTest, DecidesAsWholeCyclesOnRandomSequences) {
  Sequences t{ProfileScoring(100), 10, 60};
  t.Run(11);
  EXPECT_GT(t.compared, 400);
  // Most pods follow one of their family: most cycles are batched.
  EXPECT_GT(t.batched, t.compared * 3 / 4) << t.batched << " of " << t.compared;
}

// The same with a share of the nodes scored: the batched cycle walks the
// window from the round-robin start as the whole cycle's rounds do.
TEST(BatchingTest, DecidesAsWholeCyclesOverAShareOfTheNodes) {
  Sequences t{ProfileScoring(30), 120, 260};
  t.Run(12);
  EXPECT_GT(t.compared, 400);
  EXPECT_GT(t.batched, t.compared / 2) << t.batched << " of " << t.compared;
}

// With a tenth of the nodes scored, each window a share of the cluster:
// the call of a pod in a run of its template also answers the windows of
// the next pods, which take them without a call when nothing they walk
// past changed.
TEST(BatchingTest, DecidesAsWholeCyclesWithAnswersAhead) {
  Sequences t{ProfileScoring(10), 400, 900};
  t.Run(13);
  EXPECT_GT(t.compared, 400);
  EXPECT_GT(t.batched, t.compared / 2) << t.batched << " of " << t.compared;
  EXPECT_GT(t.ahead, t.compared / 4) << t.ahead << " of " << t.compared;
  // Runs of templates interleaved: each call asks for the windows of the
  // pods of its template among the next ones.
  Sequences mixed{ProfileScoring(10), 400, 900, false, 24};
  mixed.Run(14);
  EXPECT_GT(mixed.compared, 400);
  EXPECT_GT(mixed.ahead, mixed.compared / 4)
      << mixed.ahead << " of " << mixed.compared;
}

// Pods with pod (anti-)affinity over the hostname, among other pods' terms
// over the hostname and, in the last round, over the zone: a binding
// changes the counts of its node, or of every node of its zone, and a
// session re-sends those. Four seeds: the zone's rounds differ most.
TEST(BatchingTest, DecidesAsWholeCyclesWithPodAffinity) {
  Sequences t{ProfileScoring(30), 120, 260, true};
  for (uint64_t seed = 1; seed <= 4; ++seed) t.Run(seed);
  EXPECT_GT(t.compared, 1600);
  EXPECT_GT(t.batched, t.compared / 2) << t.batched << " of " << t.compared;
}

// A pod of `milli_cpu`, `memory_gib` and `priority` that preempts (the stock
// profile's DefaultPreemption runs for it).
objects::PodInfo Preemptor(const std::string& name, const std::string& app,
                           int milli_cpu, int memory_gib, int priority) {
  nlohmann::json spec = {
      {"schedulerName", "default-scheduler"},
      {"priority", priority},
      {"containers",
       {{{"name", "c"},
         {"resources",
          {{"requests",
            {{"cpu", absl::StrCat(milli_cpu, "m")},
             {"memory", absl::StrCat(memory_gib, "Gi")}}}}}}}}};
  absl::StatusOr<objects::PodInfo> pod =
      objects::PodFromJson({{"metadata",
                             {{"name", name},
                              {"namespace", "default"},
                              {"uid", "uid-" + name},
                              {"labels", {{"app", app}}}}},
                            {"spec", spec},
                            {"status", {{"phase", "Pending"}}}});
  EXPECT_TRUE(pod.ok()) << pod.status();
  return *std::move(pod);
}

// A node of 2 to 8 CPUs; now and then tainted NoSchedule or unschedulable
// (UnschedulableAndUnresolvable: not for PostFilter).
pb::Node RejectingNode(int i, std::mt19937_64& rng) {
  pb::Node n = MakeNode(i, rng);
  n.clear_taints();
  if (rng() % 10 == 0) {
    pb::Taint* t = n.add_taints();
    t->set_key("dedicated");
    t->set_effect("NoSchedule");
  }
  return n;
}

// One step of the failing sequences: `pod` scheduled both ways on the same
// snapshot with the same random numbers; a failure must read the same
// (message with PostFilter's, plugins) and preempt the same victims on the
// same node; then both caches take the pod, or its nomination.
// What the failing sequences went through.
struct FailCounts {
  int failures = 0;
  int reused = 0;     // failures read from a RejectedNodes memo
  int preempted = 0;  // failures that preempt
};

// True when the pod failed.
bool FailBothWays(const objects::PodInfo& pod, const ProfileInfo& profile,
                  scorer_client::Scorer& scorer, Twin& twin, Batches& batches,
                  std::mt19937_64& rng, int k, FailCounts& counts) {
  std::mt19937_64 r1 = rng, r2 = rng;
  rng.discard(1);
  CycleInput in{.pod = &pod,
                .profile = &profile,
                .cache = &twin.batched,
                .batch_size = 40,
                .start = static_cast<size_t>(rng() % 1000),
                .rng = &r1,
                .batches = &batches};
  CycleResult got = RunCycle(in, scorer);
  CycleInput all = in;
  all.cache = &twin.whole;
  all.rng = &r2;
  all.batches = nullptr;
  CycleResult want = RunCycle(all, scorer);
  EXPECT_EQ(got.ok(), want.ok()) << k;
  if (got.reused_rejections) ++counts.reused;
  if (want.ok()) {
    twin.Assume(pod, want.node);
    return false;
  }
  if (got.ok()) return false;
  EXPECT_EQ(got.failure->message, want.failure->message) << k;
  EXPECT_EQ(got.failure->plugins, want.failure->plugins) << k;
  EXPECT_EQ(got.nominating, want.nominating) << k;
  EXPECT_EQ(got.preemption.has_value(), want.preemption.has_value()) << k;
  if (!want.preemption.has_value() || !got.preemption.has_value()) return true;
  EXPECT_EQ(got.preemption->node, want.preemption->node) << k;
  EXPECT_EQ(got.preemption->victims.size(), want.preemption->victims.size());
  for (size_t v = 0; v < want.preemption->victims.size() &&
                     v < got.preemption->victims.size();
       ++v) {
    EXPECT_EQ(got.preemption->victims[v].name, want.preemption->victims[v].name)
        << k;
  }
  ++counts.preempted;
  twin.batched.Nominate(pod, want.preemption->node);
  twin.whole.Nominate(pod, want.preemption->node);
  return true;
}

// Pods that mostly fit nowhere (more CPU than most nodes have left), of a
// few templates, new and retried, nominated where they would preempt,
// among bindings, removals, node changes and dropped nominations: the
// failures read from the template's RejectedNodes and the nodes changed
// since say what whole cycles say, and PostFilter, which reads the nodes
// Filter found Unschedulable in the cycle's order, preempts the same.
TEST(BatchingTest, FailsAsWholeCyclesOnRandomSequences) {
  auto real = testing::InProcessScorer::Start(
      "apiVersion: kubescheduler.config.k8s.io/v1\n"
      "kind: KubeSchedulerConfiguration\n"
      "profiles:\n- schedulerName: default-scheduler\n");
  ASSERT_TRUE(real.ok());
  auto scorer =
      *scorer_client::ScorerClient::Create({.target = (*real)->target()});
  Profiles::Options options;
  options.served = {"default-scheduler"};
  Profiles profiles(options, [&] { return scorer->ListProfiles(); });
  absl::StatusOr<std::shared_ptr<const ProfileInfo>> known =
      profiles.Lookup("default-scheduler");
  ASSERT_TRUE(known.ok()) << known.status();
  ASSERT_TRUE((*known)->post_filter);
  std::mt19937_64 rng(7);
  Twin twin;
  const int n_nodes = 90;
  for (int i = 0; i < n_nodes; ++i) twin.UpsertNode(RejectingNode(i, rng));
  Batches batches;
  std::vector<objects::PodInfo> failed;
  std::vector<std::string> others;
  FailCounts counts;
  for (int k = 0; k < 400; ++k) {
    const int t = (k / 12) % 6;  // runs of one template, a few templates
    if (rng() % 2 == 0) {
      const std::string name = absl::StrCat("x", k);
      twin.AddBound(MakePod(name, "low",
                            1000 + 500 * static_cast<int>(rng() % 5),
                            absl::StrCat("node-", rng() % n_nodes), nullptr,
                            absl::StrCat(1 + rng() % 3, "Gi")));
      others.push_back("default/" + name);
    }
    if (rng() % 5 == 0 && !others.empty()) {
      twin.Remove(others[rng() % others.size()]);
    }
    if (rng() % 20 == 0) twin.UpsertNode(RejectingNode(rng() % n_nodes, rng));
    if (rng() % 9 == 0 && !failed.empty()) {
      const std::string key = failed[rng() % failed.size()].key;
      twin.batched.DropNomination(key);
      twin.whole.DropNomination(key);
    }
    const bool retry = !failed.empty() && rng() % 3 == 0;
    const size_t which = retry ? rng() % failed.size() : failed.size();
    const objects::PodInfo pod =
        retry ? failed[which]
              : Preemptor(absl::StrCat("p", k), absl::StrCat("a", t % 2),
                          2000 + 1500 * (t / 2), 2 + t % 3, 100);
    const bool fails =
        FailBothWays(pod, **known, *scorer, twin, batches, rng, k, counts);
    if (::testing::Test::HasFailure()) return;
    if (fails) {
      ++counts.failures;
      if (!retry) failed.push_back(pod);
    } else if (retry) {
      failed.erase(failed.begin() + static_cast<std::ptrdiff_t>(which));
    }
  }
  EXPECT_GT(counts.failures, 250);
  EXPECT_GT(counts.reused, counts.failures * 2 / 3)
      << counts.reused << " of " << counts.failures;
  EXPECT_GT(counts.preempted, 40);
}

// A replica keeps the nodes it was sent whole: the next pod of another
// template (a whole cycle) sends them by key, a small part of the bytes.
TEST(BatchingTest, NodesGoByKeyOnceAReplicaHoldsThem) {
  auto real = testing::InProcessScorer::Start(ProfileScoring(100));
  ASSERT_TRUE(real.ok());
  auto scorer =
      *scorer_client::ScorerClient::Create({.target = (*real)->target()});
  absl::StatusOr<std::shared_ptr<const ProfileInfo>> known = Learnt(*scorer);
  ASSERT_TRUE(known.ok()) << known.status();
  ASSERT_TRUE((*known)->content_keys);
  cache::Cache cache;
  std::mt19937_64 rng(3);
  for (int i = 0; i < 300; ++i) {
    pb::Node n = MakeNode(i, rng);
    n.set_unschedulable(false);
    cache.UpsertNode(n);
  }
  std::vector<uint64_t> sent;
  for (int k = 0; k < 3; ++k) {
    const objects::PodInfo pod =
        MakePod(absl::StrCat("p", k), absl::StrCat("g", k), 100);
    const uint64_t before = scorer->stats().request_bytes.load();
    CycleInput in{.pod = &pod,
                  .profile = known->get(),
                  .cache = &cache,
                  .batch_size = 100,
                  .rng = &rng};
    CycleResult r = RunCycle(in, *scorer);
    ASSERT_TRUE(r.ok()) << r.failure->message;
    sent.push_back(scorer->stats().request_bytes.load() - before);
    ASSERT_TRUE(cache.AssumePod(pod, r.node));
  }
  // The first cycle sends every node by key, is told the replica lacks
  // them, and sends them whole: more than whole alone. Then keys.
  EXPECT_LT(sent[1] * 3, sent[0]) << sent[0] << " then " << sent[1];
  EXPECT_LT(sent[2] * 3, sent[0]) << sent[0] << " then " << sent[2];
}

}  // namespace
}  // namespace kscore::scheduler
