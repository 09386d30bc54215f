#include "shim/scheduler/cycle.h"

#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "shim/scheduler/testing/fake_scorer.h"

namespace kscore::scheduler {
namespace {

using testing::FakeScorer;
using testing::NodeName;

using ::testing::ElementsAre;

objects::PodInfo Pod() {
  objects::PodInfo pod = *objects::PodFromJson(nlohmann::json{
      {"metadata", {{"name", "p"}, {"namespace", "default"}, {"uid", "u"}}},
      {"spec",
       {{"schedulerName", "test-scheduler"},
        {"containers", {{{"name", "c"}}}}}},
      {"status", {{"phase", "Pending"}}}});
  return pod;
}

void AddNodes(cache::Cache& cache, int n) {
  for (int i = 0; i < n; ++i) {
    pb::Node node;
    node.set_name(NodeName(i));
    node.mutable_allocatable()->set_milli_cpu(4000);
    node.mutable_allocatable()->set_pods(110);
    cache.UpsertNode(node);
  }
}

struct CycleCase {
  std::string name{};
  int nodes = 4;
  int32_t percentage = 0;
  size_t batch = 500;
  size_t start = 0;
  std::function<void(FakeScorer&)> setup{};
  // Expected: a node among want_nodes, or a failure.
  std::set<std::string> want_nodes{};
  std::optional<Failure::Kind> want_kind{};
  std::string want_message{};
  bool want_stale = false;       // the failure says the profiles are stale
  size_t want_evaluate = 1;      // Evaluate requests
  size_t want_normalize = 0;     // NormalizeScore calls
  int want_normalized_raw = -1;  // raw values in it, when >= 0
  // Per Evaluate request, whether it asked the scorer not to normalise.
  std::vector<bool> want_skip_normalize{};
  std::optional<size_t> want_next_start{};
};

void PrintTo(const CycleCase& c, std::ostream* os) { *os << c.name; }

class RunCycleTest : public ::testing::TestWithParam<CycleCase> {};

TEST_P(RunCycleTest, Outcome) {
  const CycleCase& c = GetParam();
  cache::Cache cache;
  AddNodes(cache, c.nodes);
  FakeScorer scorer;
  if (c.setup) c.setup(scorer);
  const objects::PodInfo pod = Pod();
  ProfileInfo profile;
  profile.percentage_of_nodes_to_score = c.percentage;
  profile.config_hash = "h1";
  std::mt19937_64 rng(1);
  CycleResult r = RunCycle({.pod = &pod,
                            .profile = &profile,
                            .cache = &cache,
                            .batch_size = c.batch,
                            .start = c.start,
                            .rng = &rng},
                           scorer);
  if (c.want_kind.has_value()) {
    ASSERT_FALSE(r.ok()) << "scheduled on " << r.node;
    EXPECT_EQ(r.failure->kind, *c.want_kind);
    EXPECT_EQ(r.failure->message, c.want_message);
    EXPECT_EQ(r.failure->stale_profiles, c.want_stale);
  } else {
    ASSERT_TRUE(r.ok()) << r.failure->message;
    EXPECT_TRUE(c.want_nodes.contains(r.node)) << r.node;
  }
  EXPECT_EQ(scorer.evaluated.size(), c.want_evaluate);
  EXPECT_EQ(scorer.normalized.size(), c.want_normalize);
  if (c.want_normalized_raw >= 0 && !scorer.normalized.empty()) {
    EXPECT_EQ(scorer.normalized[0].raw_size(), c.want_normalized_raw);
  }
  std::vector<bool> skip;
  for (const pb::EvaluateRequest& req : scorer.evaluated) {
    skip.push_back(req.skip_normalize());
    EXPECT_EQ(req.detail(), pb::DETAIL_TOTALS);
    EXPECT_EQ(req.profile(), "test-scheduler");
    EXPECT_EQ(req.config_hash(), "h1");  // planned with the profile's hash
  }
  if (!c.want_skip_normalize.empty()) {
    EXPECT_EQ(skip, c.want_skip_normalize);
  }
  if (c.want_next_start.has_value()) {
    EXPECT_EQ(r.next_start, c.want_next_start);
  }
}

constexpr auto kError = Failure::Kind::kError;
constexpr auto kUnschedulable = Failure::Kind::kUnschedulable;

INSTANTIATE_TEST_SUITE_P(
    Cases, RunCycleTest,
    ::testing::Values(
        CycleCase{.name = "OneCallUsesItsOwnTotals",
                  .setup =
                      [](FakeScorer& s) {
                        s.raw = {{NodeName(1), 10}};
                        s.call_totals = {{NodeName(2), 99}};
                      },
                  .want_nodes = {NodeName(2)},
                  .want_skip_normalize = {false},
                  .want_next_start = 0},
        CycleCase{.name = "SeveralBatchesOneNormalizeScore",
                  .nodes = 6,
                  .batch = 2,
                  .setup =
                      [](FakeScorer& s) {
                        s.raw = {{NodeName(0), 5},
                                 {NodeName(3), 50},
                                 {NodeName(5), 40}};
                      },
                  .want_nodes = {NodeName(3)},
                  .want_evaluate = 3,
                  .want_normalize = 1,
                  .want_normalized_raw = 6,
                  .want_skip_normalize = {true, true, true}},
        CycleCase{
            // 200 nodes at 50%: 100 to find; 10 of the first 100 rejected,
            // so a second call asks for 10 more and the first call's totals
            // (which favour node-050) give way to NormalizeScore's.
            .name = "RejectedNodesNeedASecondRoundThenNormalizeScore",
            .nodes = 200,
            .percentage = 50,
            .setup =
                [](FakeScorer& s) {
                  for (int i = 0; i < 10; ++i) {
                    s.rejected[NodeName(i)] = "node(s) were unschedulable";
                  }
                  s.raw = {{NodeName(50), 80}, {NodeName(105), 90}};
                  s.call_totals = {{NodeName(50), 1000}};
                },
            .want_nodes = {NodeName(105)},
            .want_evaluate = 2,
            .want_normalize = 1,
            .want_normalized_raw = 100,
            .want_skip_normalize = {false, true},
            .want_next_start = 110},
        CycleCase{
            .name = "NoScorePluginTotalsZeroNoNormalizeScore",
            .nodes = 3,
            .batch = 2,
            .setup =
                [](FakeScorer& s) {
                  s.plugins.clear();
                  s.rejected = {{NodeName(1), "node(s) were unschedulable"}};
                },
            .want_nodes = {NodeName(0), NodeName(2)},
            .want_evaluate = 2},
        CycleCase{
            .name = "RejectedIndexOutOfOrder",
            .setup =
                [](FakeScorer& s) {
                  s.tamper = [](pb::EvaluateResponse& r) {
                    r.add_rejected()->set_index(2);
                    r.add_rejected()->set_index(1);
                  };
                },
            .want_kind = kError,
            .want_message =
                "scorer error: rejected node index 1 out of order or range"},
        CycleCase{
            .name = "RejectedIndexOutOfRange",
            .setup =
                [](FakeScorer& s) {
                  s.tamper = [](pb::EvaluateResponse& r) {
                    r.add_rejected()->set_index(4);
                  };
                },
            .want_kind = kError,
            .want_message =
                "scorer error: rejected node index 4 out of order or range"},
        CycleCase{
            .name = "ScorerUnavailable",
            .setup =
                [](FakeScorer& s) {
                  s.evaluate_status =
                      absl::UnavailableError("scorer: connection refused");
                },
            .want_kind = kError,
            .want_message = "scorer unavailable: scorer: connection refused"},
        CycleCase{
            .name = "ScorerDeadlineExceeded",
            .setup =
                [](FakeScorer& s) {
                  s.evaluate_status =
                      absl::DeadlineExceededError("scorer: Deadline Exceeded");
                },
            .want_kind = kError,
            .want_message = "scorer unavailable: scorer: Deadline Exceeded"},
        CycleCase{// What the scorer answers today when a plugin returns Error.
                  .name = "PluginErrorAnsweredByTheScorer",
                  .setup =
                      [](FakeScorer& s) {
                        s.evaluate_status = absl::InvalidArgumentError(
                            "scorer: plugin \"Boom\": disk on fire");
                      },
                  .want_kind = kError,
                  .want_message = "scorer: plugin \"Boom\": disk on fire"},
        CycleCase{
            .name = "PluginErrorInARejectedNodesStatus",
            .setup =
                [](FakeScorer& s) {
                  s.tamper = [](pb::EvaluateResponse& r) {
                    pb::RejectedNode* n = r.add_rejected();
                    n->set_index(3);
                    n->mutable_status()->set_code(pb::CODE_ERROR);
                    n->mutable_status()->set_plugin("Boom");
                    n->mutable_status()->add_reasons("disk on fire");
                  };
                },
            .want_kind = kError,
            .want_message = "running \"Boom\" filter plugin: disk on fire"},
        CycleCase{
            .name = "PluginErrorAtPreFilter",
            .setup =
                [](FakeScorer& s) {
                  s.tamper = [](pb::EvaluateResponse& r) {
                    r.mutable_status()->set_code(pb::CODE_ERROR);
                    r.mutable_status()->set_plugin("Boom");
                    r.mutable_status()->add_reasons("disk on fire");
                  };
                },
            .want_kind = kError,
            .want_message = "running PreFilter plugin \"Boom\": disk on fire"},
        CycleCase{.name = "NormalizeScoreUnavailable",
                  .batch = 2,
                  .setup =
                      [](FakeScorer& s) {
                        s.normalize_status =
                            absl::UnavailableError("scorer: down");
                      },
                  .want_kind = kError,
                  .want_message = "scorer unavailable: scorer: down",
                  .want_evaluate = 2,
                  .want_normalize = 1,
                  .want_next_start = 0},
        CycleCase{.name = "NormalizeScorePluginError",
                  .batch = 2,
                  .setup =
                      [](FakeScorer& s) {
                        s.normalize_status = absl::InvalidArgumentError(
                            "scorer: plugin \"Fake\": bad scores");
                      },
                  .want_kind = kError,
                  .want_message = "scorer: plugin \"Fake\": bad scores",
                  .want_evaluate = 2,
                  .want_normalize = 1},
        CycleCase{.name = "AllNodesRejected",
                  .nodes = 3,
                  .setup =
                      [](FakeScorer& s) {
                        s.rejected = {
                            {NodeName(0), "node(s) were unschedulable"},
                            {NodeName(1), "Insufficient cpu"},
                            {NodeName(2), "Insufficient cpu"}};
                      },
                  .want_kind = kUnschedulable,
                  .want_message = "0/3 nodes are available: 1 node(s) were "
                                  "unschedulable, 2 Insufficient cpu.",
                  .want_next_start = 0},
        CycleCase{
            .name = "PreFilterRejects",
            .nodes = 3,
            .setup =
                [](FakeScorer& s) {
                  s.pre_filter_reject =
                      "node(s) didn't match Pod's node affinity/selector";
                },
            .want_kind = kUnschedulable,
            .want_message = "0/3 nodes are available: node(s) didn't match "
                            "Pod's node affinity/selector."},
        CycleCase{.name = "NoNodes",
                  .nodes = 0,
                  .want_kind = kUnschedulable,
                  .want_message = "no nodes available to schedule pods",
                  .want_evaluate = 0},
        // A replica with another configuration refuses: an error that
        // marks the profiles stale, in the scorer's words.
        CycleCase{.name = "ConfigurationHashMismatch",
                  .setup =
                      [](FakeScorer& s) {
                        s.evaluate_status = absl::FailedPreconditionError(
                            "scorer: configuration hash mismatch");
                      },
                  .want_kind = kError,
                  .want_message = "scorer: configuration hash mismatch",
                  .want_stale = true}),
    [](const ::testing::TestParamInfo<CycleCase>& info) {
      return info.param.name;
    });

// A pod whose quantities could not be read fails its cycle, unschedulable,
// with the field in its message, and without asking the scorer.
TEST(RunCycleInvalidPodTest, FailsNamingTheFieldWithoutTheScorer) {
  cache::Cache cache;
  AddNodes(cache, 3);
  FakeScorer scorer;
  absl::StatusOr<objects::PodInfo> pod = objects::PodFromJson(nlohmann::json{
      {"metadata", {{"name", "p"}, {"namespace", "default"}, {"uid", "u"}}},
      {"spec",
       {{"schedulerName", "test-scheduler"},
        {"containers",
         {{{"name", "c"},
           {"resources", {{"requests", {{"cpu", "-500m"}}}}}}}}}},
      {"status", {{"phase", "Pending"}}}});
  ASSERT_TRUE(pod.ok()) << pod.status();
  ProfileInfo profile;
  std::mt19937_64 rng(1);
  CycleResult r = RunCycle(
      {.pod = &*pod, .profile = &profile, .cache = &cache, .rng = &rng},
      scorer);
  ASSERT_FALSE(r.ok()) << "scheduled on " << r.node;
  EXPECT_EQ(r.failure->kind, Failure::Kind::kUnschedulable);
  EXPECT_EQ(r.failure->message,
            "invalid pod: spec.containers[0].resources.requests.cpu: must not "
            "be negative, got \"-500m\"");
  EXPECT_TRUE(scorer.evaluated.empty());
  EXPECT_TRUE(scorer.planned.empty());
}

TEST(NumFeasibleNodesToFindTest, MatchesKubeScheduler) {
  EXPECT_EQ(NumFeasibleNodesToFind(0, 3), 3u);
  EXPECT_EQ(NumFeasibleNodesToFind(0, 99), 99u);
  EXPECT_EQ(NumFeasibleNodesToFind(0, 100), 100u);    // 50% < 100 -> 100
  EXPECT_EQ(NumFeasibleNodesToFind(0, 1000), 420u);   // 50 - 1000/125 = 42%
  EXPECT_EQ(NumFeasibleNodesToFind(0, 5000), 500u);   // 10%
  EXPECT_EQ(NumFeasibleNodesToFind(0, 10000), 500u);  // floor of 5%
  EXPECT_EQ(NumFeasibleNodesToFind(30, 1000), 300u);
  EXPECT_EQ(NumFeasibleNodesToFind(100, 5000), 5000u);
}

TEST(PlanWindowTest, StartsWhereTheLastCycleStopped) {
  struct {
    int32_t percentage;
    size_t all_nodes, start;
    size_t want_to_find, want_first;
  } cases[] = {
      {0, 0, 7, 0, 0},     // no nodes: nothing to find
      {0, 10, 3, 10, 3},   // small clusters: every node
      {0, 10, 13, 10, 3},  // start wraps
      {0, 5000, 4999, 500, 4999},
      {50, 200, 400, 100, 0},
  };
  for (const auto& c : cases) {
    Window w = PlanWindow(c.percentage, c.all_nodes, c.start);
    EXPECT_EQ(w.all_nodes, c.all_nodes);
    EXPECT_EQ(w.to_find, c.want_to_find) << c.all_nodes;
    EXPECT_EQ(w.first, c.want_first) << c.all_nodes << " " << c.start;
  }
}

TEST(SelectHostTest, HighestTotalTiesUniformlyAtRandom) {
  std::mt19937_64 rng(7);
  EXPECT_EQ(SelectHost(std::vector<int64_t>{1, 9, 3}, rng), 1u);
  EXPECT_EQ(SelectHost(std::vector<int64_t>{0}, rng), 0u);
  // Ties between indices 1, 3 and 4: each about a third of the time.
  std::map<size_t, int> picked;
  for (int i = 0; i < 3000; ++i) {
    ++picked[SelectHost(std::vector<int64_t>{5, 8, 2, 8, 8}, rng)];
  }
  ASSERT_EQ(picked.size(), 3u);
  for (size_t i : {1, 3, 4}) {
    EXPECT_GT(picked[i], 850) << i;
    EXPECT_LT(picked[i], 1150) << i;
  }
}

TEST(ExplainChoiceTest, TopThreeWithRawScores) {
  CandidateVerdicts ev(4);
  ev.names = {"a", "b", "c", "d"};
  ev.feasible = {0, 1, 3};
  ev.plugins = {"P", "Q"};
  ev.raw = {1, 2, 3, 4, 5, 6};
  ev.totals = {10, 30, 20};
  EXPECT_EQ(ExplainChoice(ev),
            "b total=30 (raw P=3 Q=4); d total=20 (raw P=5 Q=6); a total=10 "
            "(raw P=1 Q=2)");
}

TEST(ScorerFailureTest, TransportOrAnswer) {
  EXPECT_THAT(
      (std::vector<std::string>{
          ScorerFailure(absl::UnavailableError("x")).message,
          ScorerFailure(absl::InternalError("plugin \"A\": y")).message}),
      ElementsAre("scorer unavailable: x", "plugin \"A\": y"));
}

// A profile with a plan: the plan is asked once per pod template, its
// answers ride on every request, and when the score needs every feasible
// node a cycle of several calls filters first and scores the feasible nodes
// in one last call.
TEST(RunCyclePlanTest, PlannedPodsFilterInBatchesThenScoreAllFeasible) {
  cache::Cache cache;
  AddNodes(cache, 5);
  objects::PodInfo neighbour = Pod();
  neighbour.name = "n";
  neighbour.key = "default/n";
  neighbour.node_name = NodeName(1);
  (*neighbour.pod.mutable_labels())["app"] = "web";
  cache.UpsertAssignedPod(neighbour);
  FakeScorer scorer;
  scorer.rejected[NodeName(3)] = "nope";
  scorer.raw[NodeName(4)] = 9;
  pb::PodQuery* q = scorer.plan.add_queries();
  pb::PodMatcher* m = q->add_all_of();
  m->add_namespaces("default");
  (*m->mutable_selector()->mutable_match_labels())["app"] = "web";
  scorer.plan.set_score_needs_all_feasible(true);
  ProfileInfo profile;
  profile.scheduler_name = "test-scheduler";
  profile.percentage_of_nodes_to_score = 100;
  profile.config_hash = "h1";
  profile.plans = true;
  PlanCache plans;
  std::mt19937_64 rng(1);
  const objects::PodInfo pod = Pod();
  const CycleInput in{.pod = &pod,
                      .profile = &profile,
                      .cache = &cache,
                      .batch_size = 2,
                      .start = 0,
                      .rng = &rng,
                      .plans = &plans};
  CycleResult r = RunCycle(in, scorer);
  ASSERT_TRUE(r.ok()) << r.failure->message;
  EXPECT_EQ(r.node, NodeName(4));
  ASSERT_EQ(scorer.planned.size(), 1u);
  EXPECT_EQ(scorer.planned[0].config_hash(), "h1");
  // Three filter-only calls of at most 2 nodes, then one of the 4 feasible.
  ASSERT_EQ(scorer.evaluated.size(), 4u);
  for (size_t i = 0; i < 3; ++i) {
    const pb::EvaluateRequest& req = scorer.evaluated[i];
    EXPECT_TRUE(req.filter_only()) << i;
    ASSERT_EQ(req.cluster().answers_size(), 1);
    EXPECT_EQ(req.cluster().answers(0).total(), 1);
    for (const pb::Node& n : req.nodes()) {
      EXPECT_EQ(n.query_counts_size(), 1) << n.name();
    }
  }
  const pb::EvaluateRequest& last = scorer.evaluated[3];
  EXPECT_FALSE(last.filter_only());
  EXPECT_FALSE(last.skip_normalize());
  std::vector<std::string> names;
  for (const pb::Node& n : last.nodes()) names.push_back(n.name());
  EXPECT_THAT(names,
              ElementsAre(NodeName(0), NodeName(1), NodeName(2), NodeName(4)));
  EXPECT_THAT(last.nodes(1).query_counts(), ElementsAre(1));
  EXPECT_TRUE(scorer.normalized.empty());

  // The next pod of the same template reuses the plan.
  objects::PodInfo twin = Pod();
  twin.name = "p2";
  twin.pod.set_name("p2");
  twin.uid = "u2";
  twin.pod.set_uid("u2");
  const CycleInput in2{.pod = &twin,
                       .profile = &profile,
                       .cache = &cache,
                       .batch_size = 500,
                       .start = 0,
                       .rng = &rng,
                       .plans = &plans};
  r = RunCycle(in2, scorer);
  ASSERT_TRUE(r.ok()) << r.failure->message;
  EXPECT_EQ(scorer.planned.size(), 1u);
  EXPECT_EQ(plans.size(), 1u);
  // One batch: one call that scores, no filter-only pass.
  EXPECT_EQ(scorer.evaluated.size(), 5u);
  EXPECT_FALSE(scorer.evaluated[4].filter_only());
}

// A plan may ask for node labels for its pod alone (the profile never
// sends them): every request of the cycle carries them, the batches and the
// last call over the feasible nodes alike.
TEST(RunCyclePlanTest, PlanAsksForNodeLabels) {
  for (const bool want : {false, true}) {
    SCOPED_TRACE(want);
    cache::Cache cache;
    for (int i = 0; i < 3; ++i) {
      pb::Node node;
      node.set_name(NodeName(i));
      (*node.mutable_labels())["zone"] = "z";
      node.mutable_allocatable()->set_milli_cpu(4000);
      node.mutable_allocatable()->set_pods(110);
      cache.UpsertNode(node);
    }
    FakeScorer scorer;
    scorer.plan.set_score_needs_all_feasible(true);
    scorer.plan.set_node_labels(want);
    ProfileInfo profile;
    profile.scheduler_name = "test-scheduler";
    profile.percentage_of_nodes_to_score = 100;
    profile.config_hash = "h1";
    profile.plans = true;
    profile.node_labels = pb::NODE_LABELS_NEVER;
    std::mt19937_64 rng(1);
    const objects::PodInfo pod = Pod();
    CycleResult r = RunCycle({.pod = &pod,
                              .profile = &profile,
                              .cache = &cache,
                              .batch_size = 2,
                              .start = 0,
                              .rng = &rng,
                              .plans = nullptr},
                             scorer);
    ASSERT_TRUE(r.ok()) << r.failure->message;
    // Two filter-only batches, then one call with the 3 feasible nodes.
    ASSERT_EQ(scorer.evaluated.size(), 3u);
    for (const pb::EvaluateRequest& req : scorer.evaluated) {
      for (const pb::Node& n : req.nodes()) {
        EXPECT_EQ(n.labels().contains("zone"), want) << n.name();
      }
    }
  }
}

// The explanation takes the scorer's breakdown of the best nodes, puts the
// chosen node first and sums the filter reasons; without explain_top the
// cycle asks for none and explains nothing.
TEST(RunCycleExplainTest, ScorerBreakdownChosenNodeFirst) {
  cache::Cache cache;
  AddNodes(cache, 4);
  FakeScorer scorer;
  scorer.plugins = {"A", "B"};
  scorer.rejected = {{NodeName(0), "node(s) were too small"}};
  scorer.raw = {{NodeName(1), 3}, {NodeName(2), 7}, {NodeName(3), 7}};
  scorer.tamper = [](pb::EvaluateResponse& resp) {
    resp.add_weights(1);
    resp.add_weights(2);
    resp.set_replica("scorer-a:50051");
    for (int index : {2, 3}) {  // the two best, as the scorer sorts them
      pb::NodeScore* ns = resp.add_scores();
      ns->set_index(index);
      ns->set_total(14);
      ns->add_raw(7);
      ns->add_raw(7);
      ns->add_normalized(index == 2 ? 5 : 1);
      ns->add_normalized(index == 2 ? 1 : 3);
    }
  };
  const objects::PodInfo pod = Pod();
  ProfileInfo profile;
  profile.filter_plugins = {"F1", "F2"};
  std::mt19937_64 rng(7);
  CycleResult plain = RunCycle(
      {.pod = &pod, .profile = &profile, .cache = &cache, .rng = &rng}, scorer);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain.explanation, nullptr);
  EXPECT_EQ(scorer.evaluated.back().explain_top(), 0);

  for (int run = 0; run < 8; ++run) {  // either tied node may be chosen
    CycleResult r = RunCycle({.pod = &pod,
                              .profile = &profile,
                              .cache = &cache,
                              .rng = &rng,
                              .explain_top = 2},
                             scorer);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(scorer.evaluated.back().explain_top(), 2);
    ASSERT_NE(r.explanation, nullptr);
    const Explanation& e = *r.explanation;
    EXPECT_EQ(e.name, "p");
    EXPECT_EQ(e.node, r.node);
    EXPECT_EQ(e.all_nodes, 4u);
    EXPECT_EQ(e.evaluated, 4u);
    EXPECT_EQ(e.feasible, 3u);
    EXPECT_THAT(e.plugins, ElementsAre("A", "B"));
    EXPECT_THAT(e.weights, ElementsAre(1, 2));
    EXPECT_THAT(e.replicas, ElementsAre("scorer-a:50051"));
    EXPECT_THAT(e.reasons, ElementsAre(std::make_pair(
                               std::string("node(s) were too small"), 1)));
    EXPECT_EQ(e.tied_best, 2u);
    EXPECT_TRUE(e.rejections.empty());  // not asked for
    ASSERT_EQ(e.top.size(), 2u);
    EXPECT_EQ(e.top[0].node, r.node);
    const bool second = r.node == NodeName(2);
    EXPECT_THAT(e.top[0].normalized,
                second ? ElementsAre(5, 1) : ElementsAre(1, 3));
    EXPECT_EQ(e.top[1].node, second ? NodeName(3) : NodeName(2));
  }
}

// A scorer that does not explain (older than explain_top): the top nodes
// from the totals, raw scores only; explain_rejections keeps each rejected
// node's plugin and message.
TEST(RunCycleExplainTest, WithoutTheScorersBreakdownTotalsAndRaw) {
  cache::Cache cache;
  AddNodes(cache, 4);
  FakeScorer scorer;
  scorer.rejected = {{NodeName(1), "node(s) had untolerated taint"}};
  scorer.raw = {{NodeName(0), 1}, {NodeName(2), 9}, {NodeName(3), 4}};
  const objects::PodInfo pod = Pod();
  ProfileInfo profile;
  std::mt19937_64 rng(7);
  CycleResult r = RunCycle({.pod = &pod,
                            .profile = &profile,
                            .cache = &cache,
                            .rng = &rng,
                            .explain_top = -1,
                            .explain_rejections = true},
                           scorer);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.node, NodeName(2));
  const Explanation& e = *r.explanation;
  ASSERT_EQ(e.top.size(), 3u);
  EXPECT_EQ(e.top[0].node, NodeName(2));
  EXPECT_EQ(e.top[0].total, 9);
  EXPECT_THAT(e.top[0].raw, ElementsAre(9));
  EXPECT_TRUE(e.top[0].normalized.empty());
  EXPECT_EQ(e.top[1].node, NodeName(3));
  EXPECT_EQ(e.top[2].node, NodeName(0));
  EXPECT_EQ(e.tied_best, 0u);
  ASSERT_EQ(e.rejections.size(), 1u);
  EXPECT_EQ(e.rejections[0].node, NodeName(1));
  EXPECT_EQ(e.rejections[0].message, "node(s) had untolerated taint");
}

// A pod no node takes: pending, with FitError's message and its reasons.
TEST(RunCycleExplainTest, PendingWithTheReasonHistogram) {
  cache::Cache cache;
  AddNodes(cache, 3);
  FakeScorer scorer;
  scorer.rejected = {{NodeName(0), "Insufficient cpu"},
                     {NodeName(1), "Insufficient cpu"},
                     {NodeName(2), "node(s) were unschedulable"}};
  const objects::PodInfo pod = Pod();
  ProfileInfo profile;
  std::mt19937_64 rng(7);
  CycleResult r = RunCycle({.pod = &pod,
                            .profile = &profile,
                            .cache = &cache,
                            .rng = &rng,
                            .explain_top = 5},
                           scorer);
  ASSERT_FALSE(r.ok());
  const Explanation& e = *r.explanation;
  EXPECT_EQ(e.node, "");
  EXPECT_FALSE(e.error);
  EXPECT_EQ(e.message, r.failure->message);
  EXPECT_THAT(e.message, ::testing::StartsWith("0/3 nodes are available"));
  EXPECT_THAT(e.reasons,
              ElementsAre(std::make_pair(std::string("Insufficient cpu"), 2),
                          std::make_pair(
                              std::string("node(s) were unschedulable"), 1)));
  EXPECT_TRUE(e.top.empty());
}

}  // namespace
}  // namespace kscore::scheduler
