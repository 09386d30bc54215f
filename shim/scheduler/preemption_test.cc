#include "shim/scheduler/preemption.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "shim/scheduler/testing/fake_scorer.h"

namespace kscore::scheduler {
namespace {

using ::testing::ElementsAre;
using testing::FakeScorer;
using testing::NodeName;
using ::testing::UnorderedElementsAre;

constexpr char kFull[] = "Insufficient cpu";
constexpr char kAway[] = "node(s) didn't match Pod's node affinity/selector";

// A pod of priority `priority`; bound to `node` (running) when given.
objects::PodInfo Pod(const std::string& name, int32_t priority,
                     const std::string& node = "") {
  nlohmann::json spec = {
      {"schedulerName", "test-scheduler"},
      {"priority", priority},
      {"containers",
       {{{"name", "c"}, {"resources", {{"requests", {{"cpu", "500m"}}}}}}}}};
  nlohmann::json status = {{"phase", node.empty() ? "Pending" : "Running"}};
  if (!node.empty()) {
    spec["nodeName"] = node;
    status["startTime"] = "2026-12-02T10:00:00Z";
  }
  absl::StatusOr<objects::PodInfo> p = objects::PodFromJson(nlohmann::json{
      {"metadata",
       {{"name", name}, {"namespace", "default"}, {"uid", "u-" + name}}},
      {"spec", spec},
      {"status", status}});
  EXPECT_TRUE(p.ok()) << p.status();
  return *p;
}

struct Fixture {
  explicit Fixture(int nodes) {
    for (int i = 0; i < nodes; ++i) {
      pb::Node node;
      node.set_name(NodeName(i));
      node.mutable_allocatable()->set_milli_cpu(1000);
      node.mutable_allocatable()->set_pods(110);
      cache.UpsertNode(node);
    }
    profile.scheduler_name = "test-scheduler";
    profile.percentage_of_nodes_to_score = 100;
    profile.config_hash = "h1";
    profile.post_filter = true;
  }
  void Run(const std::string& name, int32_t priority, const std::string& node) {
    cache.UpsertAssignedPod(Pod(name, priority, node));
  }
  CycleResult Cycle(size_t max_victim_pods = 20000) {
    return RunCycle({.pod = &pod,
                     .profile = &profile,
                     .cache = &cache,
                     .rng = &rng,
                     .max_victim_pods = max_victim_pods},
                    scorer);
  }
  // Every node rejected; `away` ones as unresolvable.
  void RejectAll(int nodes, std::set<int> away = {}) {
    for (int i = 0; i < nodes; ++i) {
      scorer.rejected[NodeName(i)] = away.contains(i) ? kAway : kFull;
      if (away.contains(i)) {
        scorer.rejected_code[NodeName(i)] =
            pb::CODE_UNSCHEDULABLE_AND_UNRESOLVABLE;
      }
    }
  }

  cache::Cache cache;
  FakeScorer scorer;
  ProfileInfo profile;
  std::mt19937_64 rng{1};
  objects::PodInfo pod = Pod("preemptor", 100);
};

pb::PreemptResponse NoCandidate() {
  pb::PreemptResponse resp;
  resp.mutable_status()->set_code(pb::CODE_UNSCHEDULABLE);
  resp.set_chosen(-1);
  return resp;
}

std::vector<std::string> Names(const pb::PreemptRequest& req) {
  std::vector<std::string> out;
  for (const pb::PreemptionNode& n : req.nodes()) {
    out.push_back(n.node().name());
  }
  return out;
}

// Upstream's evaluateNominatedNode: a nominated pod tries its node first,
// alone and unscored, and takes it when it fits; otherwise the cycle goes
// on as usual.
TEST(NominatedNodeTest, TriedFirstAloneAndTakenWhenItFits) {
  Fixture f(4);
  f.scorer.raw[NodeName(0)] = 10;  // the best scored node
  f.cache.Nominate(f.pod, NodeName(2));
  CycleResult r = f.Cycle();
  ASSERT_TRUE(r.ok()) << r.failure->message;
  EXPECT_EQ(r.node, NodeName(2));
  ASSERT_EQ(f.scorer.evaluated.size(), 1u);
  EXPECT_TRUE(f.scorer.evaluated[0].filter_only());
  ASSERT_EQ(f.scorer.evaluated[0].nodes_size(), 1);
  EXPECT_EQ(f.scorer.evaluated[0].nodes(0).name(), NodeName(2));

  f.scorer.rejected[NodeName(2)] = kFull;  // no room there (yet)
  r = f.Cycle();
  ASSERT_TRUE(r.ok()) << r.failure->message;
  EXPECT_EQ(r.node, NodeName(0));
  EXPECT_EQ(f.scorer.evaluated.size(), 3u);  // then every node

  f.cache.RemoveNode(NodeName(2));  // gone: no call for it
  f.scorer.evaluated.clear();
  r = f.Cycle();
  EXPECT_EQ(r.node, NodeName(0));
  EXPECT_EQ(f.scorer.evaluated.size(), 1u);
  EXPECT_FALSE(f.scorer.evaluated[0].filter_only());
}

// The request: the nodes Filter found Unschedulable, from a random offset,
// each with its pods of lower priority; the nominated node's lower-priority
// pods; the counts. A SUCCESS answer becomes the preemption, the nominated
// node and FailedScheduling's PostFilter message.
TEST(PostFilterTest, PotentialNodesAndTheirLowerPriorityPods) {
  Fixture f(4);
  f.RejectAll(4, {1});
  f.Run("low", 1, NodeName(0));
  f.Run("high", 200, NodeName(0));
  f.Run("equal", 100, NodeName(0));
  f.Run("away", 1, NodeName(1));
  f.Run("low2", 5, NodeName(2));
  f.cache.Nominate(f.pod, NodeName(2));
  pb::PreemptRequest got;
  f.scorer.preempt = [&](const pb::PreemptRequest& req) {
    got = req;
    pb::PreemptResponse resp;
    resp.set_message(
        "preemption: found a potential placement for pod on node node-002, "
        "preempting 1 victims");
    const std::vector<std::string> names = Names(req);
    pb::PreemptionCandidate* c = resp.add_candidates();
    c->set_node(static_cast<int32_t>(
        std::find(names.begin(), names.end(), NodeName(2)) - names.begin()));
    c->add_victims(0);
    resp.set_chosen(0);
    return resp;
  };
  CycleResult r = f.Cycle();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.failure->kind, Failure::Kind::kUnschedulable);
  EXPECT_EQ(r.failure->message,
            "0/4 nodes are available: 1 node(s) didn't match Pod's node "
            "affinity/selector, 3 Insufficient cpu. preemption: found a "
            "potential placement for pod on node node-002, preempting 1 "
            "victims");
  EXPECT_EQ(r.nominating, Nominating::kSet);
  ASSERT_TRUE(r.preemption.has_value());
  EXPECT_EQ(r.preemption->node, NodeName(2));
  ASSERT_EQ(r.preemption->victims.size(), 1u);
  EXPECT_EQ(r.preemption->victims[0].name, "low2");
  EXPECT_EQ(r.preemption->victims[0].uid, "u-low2");

  // First without nodes (the nominated node holds a lower-priority pod).
  ASSERT_EQ(f.scorer.preempted.size(), 2u);
  EXPECT_EQ(f.scorer.preempted[0].nodes_size(), 0);
  EXPECT_EQ(got.profile(), "test-scheduler");
  EXPECT_EQ(got.config_hash(), "h1");
  EXPECT_EQ(got.pod().name(), "preemptor");
  EXPECT_EQ(got.pod().priority(), 100);
  EXPECT_EQ(got.num_nodes(), 4);
  EXPECT_EQ(got.num_potential_nodes(), 3);
  EXPECT_THAT(Names(got),
              UnorderedElementsAre(NodeName(0), NodeName(2), NodeName(3)));
  for (const pb::PreemptionNode& n : got.nodes()) {
    std::vector<std::string> pods;
    for (const pb::VictimPod& v : n.pods()) pods.push_back(v.name());
    if (n.node().name() == NodeName(0)) {
      EXPECT_THAT(pods, ElementsAre("low"));
      EXPECT_EQ(n.node().requested().milli_cpu(), 1500);  // as Evaluate's
      EXPECT_EQ(n.pods(0).requests().milli_cpu(), 500);
      EXPECT_TRUE(n.pods(0).has_start_time_unix_nanos());
    } else if (n.node().name() == NodeName(2)) {
      EXPECT_THAT(pods, ElementsAre("low2"));
    } else {
      EXPECT_THAT(pods, ElementsAre());
    }
  }
  EXPECT_EQ(got.nominated_node_name(), NodeName(2));
  ASSERT_EQ(got.nominated_node_pods_size(), 1);
  EXPECT_EQ(got.nominated_node_pods(0).name(), "low2");
  EXPECT_EQ(got.pdbs_size(), 0);

  // Upstream sends the nominated node's pods only when Filter did not find
  // it unresolvable.
  f.cache.Nominate(f.pod, NodeName(1));
  f.Cycle();
  EXPECT_EQ(got.nominated_node_name(), NodeName(1));
  EXPECT_EQ(got.nominated_node_pods_size(), 0);
}

// The order starts at a random node of the potential ones, and wraps.
TEST(PostFilterTest, PotentialNodesStartAtARandomOffset) {
  Fixture f(5);
  f.RejectAll(5);
  std::set<std::string> firsts;
  f.scorer.preempt = [&](const pb::PreemptRequest& req) {
    std::vector<std::string> names = Names(req);
    firsts.insert(names.front());
    auto first = std::find(names.begin(), names.end(), NodeName(0));
    std::rotate(names.begin(), first, names.end());
    EXPECT_THAT(names, ElementsAre(NodeName(0), NodeName(1), NodeName(2),
                                   NodeName(3), NodeName(4)));
    return NoCandidate();
  };
  for (int i = 0; i < 40; ++i) f.Cycle();
  EXPECT_GT(firsts.size(), 1u);
}

// The first call sends the nodes the dry run usually stops within; an
// answer that says it passed them all without stopping (partial) is asked
// again with twice the nodes, from the same offset, up to every node.
TEST(PostFilterTest, APartialAnswerIsAskedAgainWithTwiceTheNodes) {
  Fixture f(300);
  f.RejectAll(300);
  bool partial = true;
  f.scorer.preempt = [&](const pb::PreemptRequest& req) {
    pb::PreemptResponse resp = NoCandidate();
    resp.set_partial(partial && req.nodes_size() < 300);
    return resp;
  };
  f.Cycle();
  ASSERT_EQ(f.scorer.preempted.size(), 3u);
  EXPECT_EQ(f.scorer.preempted[0].nodes_size(), 125);
  EXPECT_EQ(f.scorer.preempted[0].num_potential_nodes(), 300);
  EXPECT_EQ(f.scorer.preempted[1].nodes_size(), 250);
  EXPECT_EQ(f.scorer.preempted[2].nodes_size(), 300);
  EXPECT_EQ(f.scorer.preempted[0].nodes(0).node().name(),
            f.scorer.preempted[2].nodes(0).node().name());
  EXPECT_EQ(f.scorer.preempted[1].nodes(249).node().name(),
            f.scorer.preempted[2].nodes(249).node().name());

  f.scorer.preempted.clear();
  partial = false;
  f.Cycle();
  ASSERT_EQ(f.scorer.preempted.size(), 1u);
  EXPECT_EQ(f.scorer.preempted[0].nodes_size(), 125);
  EXPECT_EQ(FirstPreemptNodes(5000), 625u);
  EXPECT_EQ(FirstPreemptNodes(50), 50u);

  // With other pods nominated to 100 of the 300 nodes, the first call
  // sends half as many again.
  for (int i = 0; i < 100; ++i) {
    objects::PodInfo other = Pod(absl::StrCat("other-", i), 0, "");
    f.cache.Nominate(other, NodeName(i));
  }
  f.scorer.preempted.clear();
  f.Cycle();
  ASSERT_EQ(f.scorer.preempted.size(), 1u);
  EXPECT_EQ(f.scorer.preempted[0].nodes_size(), 187);
  // Half the nodes hold nominations: twice as many, at most all.
  EXPECT_EQ(FirstPreemptNodes(1000, 500, 1000), 250u);
  EXPECT_EQ(FirstPreemptNodes(5000, 2500, 5000), 1250u);
  EXPECT_EQ(FirstPreemptNodes(1000, 900, 1000), 1000u);
  EXPECT_EQ(FirstPreemptNodes(1000, 1000, 1000), 1000u);
}

// A pod nominated to a node with lower-priority pods is asked about its
// eligibility first, with no nodes: one still waiting for its victims is
// answered so, and an eligible one is asked again with the nodes.
TEST(PostFilterTest, ANominatedPodIsAskedWithoutNodesFirst) {
  const std::string waiting =
      "preemption: not eligible due to a terminating pod on the nominated "
      "node.";
  Fixture f(300);
  f.RejectAll(300);
  f.Run("low", 0, NodeName(7));
  f.cache.Nominate(f.pod, NodeName(7));
  bool eligible = false;
  f.scorer.preempt = [&](const pb::PreemptRequest& req) {
    pb::PreemptResponse resp = NoCandidate();
    if (!eligible) resp.set_message(waiting);
    resp.set_partial(req.nodes_size() < 300);
    return resp;
  };
  CycleResult r = f.Cycle();
  ASSERT_EQ(f.scorer.preempted.size(), 1u);
  EXPECT_EQ(f.scorer.preempted[0].nodes_size(), 0);
  EXPECT_EQ(f.scorer.preempted[0].nominated_node_name(), NodeName(7));
  ASSERT_EQ(f.scorer.preempted[0].nominated_node_pods_size(), 1);
  EXPECT_EQ(f.scorer.preempted[0].nominated_node_pods(0).name(), "low");
  EXPECT_EQ(r.nominating, Nominating::kKeep);
  EXPECT_THAT(r.failure->message, ::testing::EndsWith(waiting));

  f.scorer.preempted.clear();
  eligible = true;
  f.Cycle();
  ASSERT_EQ(f.scorer.preempted.size(), 4u);
  EXPECT_EQ(f.scorer.preempted[0].nodes_size(), 0);
  EXPECT_EQ(f.scorer.preempted[1].nodes_size(), 125);
  EXPECT_EQ(f.scorer.preempted[2].nodes_size(), 250);
  EXPECT_EQ(f.scorer.preempted[3].nodes_size(), 300);

  // Without lower-priority pods on the nominated node: no first question.
  Fixture g(300);
  g.RejectAll(300);
  g.cache.Nominate(g.pod, NodeName(7));
  g.scorer.preempt = [](const pb::PreemptRequest&) { return NoCandidate(); };
  g.Cycle();
  ASSERT_EQ(g.scorer.preempted.size(), 1u);
  EXPECT_EQ(g.scorer.preempted[0].nodes_size(), 125);
}

// A PreFilter rejection gives every node the same status: Unschedulable
// makes them all potential, unresolvable none (the scorer still words the
// answer).
TEST(PostFilterTest, PreFilterRejectionsDecideForEveryNode) {
  for (pb::Code code :
       {pb::CODE_UNSCHEDULABLE, pb::CODE_UNSCHEDULABLE_AND_UNRESOLVABLE}) {
    SCOPED_TRACE(pb::Code_Name(code));
    Fixture f(3);
    f.scorer.pre_filter_reject = "pod has unbound immediate claims";
    f.scorer.pre_filter_code = code;
    f.scorer.preempt = [](const pb::PreemptRequest&) {
      pb::PreemptResponse resp;
      resp.mutable_status()->set_code(pb::CODE_UNSCHEDULABLE);
      resp.set_message("preemption: 0/3 nodes are available: ...");
      return resp;
    };
    CycleResult r = f.Cycle();
    ASSERT_EQ(f.scorer.preempted.size(), 1u);
    const bool all = code == pb::CODE_UNSCHEDULABLE;
    EXPECT_EQ(f.scorer.preempted[0].num_potential_nodes(), all ? 3 : 0);
    EXPECT_EQ(f.scorer.preempted[0].nodes_size(), all ? 3 : 0);
    EXPECT_EQ(r.failure->message,
              "0/3 nodes are available: pod has unbound immediate claims. "
              "preemption: 0/3 nodes are available: ...");
  }
}

// --preemption-max-victim-pods: nodes stop once their pods would pass it.
TEST(PostFilterTest, RequestIsBoundedByVictimPods) {
  Fixture f(3);
  f.RejectAll(3);
  for (int i = 0; i < 3; ++i) {
    f.Run(absl::StrCat("a", i), 0, NodeName(i));
    f.Run(absl::StrCat("b", i), 0, NodeName(i));
  }
  f.scorer.preempt = [](const pb::PreemptRequest&) { return NoCandidate(); };
  f.Cycle(/*max_victim_pods=*/5);
  ASSERT_EQ(f.scorer.preempted.size(), 1u);
  EXPECT_EQ(f.scorer.preempted[0].num_potential_nodes(), 3);
  EXPECT_EQ(f.scorer.preempted[0].nodes_size(), 2);
}

// What each answer does to the pod's nomination and its event's message.
TEST(PostFilterTest, AnswersDecideTheNomination) {
  struct Case {
    std::string name;
    std::function<absl::StatusOr<pb::PreemptResponse>(
        const pb::PreemptRequest&)>
        preempt;
    bool post_filter = true;
    Nominating want;
    std::string want_suffix;
  };
  auto unschedulable = [](std::string message, bool candidates) {
    return [message, candidates](const pb::PreemptRequest&) {
      pb::PreemptResponse resp;
      resp.mutable_status()->set_code(pb::CODE_UNSCHEDULABLE);
      resp.mutable_status()->set_plugin("DefaultPreemption");
      resp.set_message(message);
      resp.set_chosen(-1);
      if (candidates) resp.add_candidates();
      return absl::StatusOr<pb::PreemptResponse>(resp);
    };
  };
  const std::string none =
      "preemption: 0/2 nodes are available: 2 No preemption victims found "
      "for incoming pod.";
  const std::string never =
      "preemption: not eligible due to preemptionPolicy=Never.";
  const std::string waiting =
      "preemption: not eligible due to a terminating pod on the nominated "
      "node.";
  Case cases[] = {
      {"no PostFilter plugin", nullptr, false, Nominating::kClear, ""},
      {"scorer without Preempt", nullptr, true, Nominating::kClear, ""},
      {"no candidate", unschedulable(none, false), true, Nominating::kClear,
       " " + none},
      {"policy Never", unschedulable(never, false), true, Nominating::kKeep,
       " " + never},
      {"victims still terminating", unschedulable(waiting, false), true,
       Nominating::kKeep, " " + waiting},
      {"scorer down",
       [](const pb::PreemptRequest&) -> absl::StatusOr<pb::PreemptResponse> {
         return absl::UnavailableError("scorer: down");
       },
       true, Nominating::kKeep, ""},
      {"chosen out of range",
       [](const pb::PreemptRequest&) -> absl::StatusOr<pb::PreemptResponse> {
         pb::PreemptResponse resp;
         resp.set_chosen(3);
         resp.set_message("preemption: found ...");
         return resp;
       },
       true, Nominating::kKeep, ""},
      {"victim out of range",
       [](const pb::PreemptRequest&) -> absl::StatusOr<pb::PreemptResponse> {
         pb::PreemptResponse resp;
         resp.add_candidates()->add_victims(7);
         resp.set_chosen(0);
         return resp;
       },
       true, Nominating::kKeep, ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Fixture f(2);
    f.RejectAll(2);
    f.profile.post_filter = c.post_filter;
    f.scorer.preempt = c.preempt;
    CycleResult r = f.Cycle();
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(f.scorer.preempted.size(), c.post_filter ? 1u : 0u);
    EXPECT_EQ(r.nominating, c.want);
    EXPECT_FALSE(r.preemption.has_value());
    EXPECT_EQ(r.failure->message,
              "0/2 nodes are available: 2 Insufficient cpu." + c.want_suffix);
  }
}

// What a request costs per victim pod on the wire: a Deployment's pod with
// its two labels, cpu and memory requests, a start time and one query.
TEST(PostFilterTest, BytesPerVictimPod) {
  auto victim = [](int i) {
    pb::VictimPod v;
    v.set_namespace_("default");
    v.set_name(absl::StrCat("web-7d4b9c8f5-", 10000 + i));
    v.set_uid("3f0c1f2e-8a4b-4c5d-9e6f-0a1b2c3d4e5f");
    v.set_priority(0);
    v.mutable_requests()->set_milli_cpu(100);
    v.mutable_requests()->set_memory(int64_t{128} << 20);
    *v.mutable_non_zero_requests() = v.requests();
    (*v.mutable_labels())["app"] = "web";
    (*v.mutable_labels())["pod-template-hash"] = "7d4b9c8f5";
    v.set_start_time_unix_nanos(int64_t{1796205600} * 1000000000);
    v.add_matched_queries(0);
    return v;
  };
  pb::PreemptRequest req;
  pb::PreemptionNode* n = req.add_nodes();
  n->mutable_node()->set_name(NodeName(0));
  const size_t empty = req.ByteSizeLong();
  constexpr int kPods = 110;
  for (int i = 0; i < kPods; ++i) *n->add_pods() = victim(i);
  const double per_pod =
      static_cast<double>(req.ByteSizeLong() - empty) / kPods;
  std::cout << "PreemptRequest: " << per_pod << " bytes per victim pod\n";
  EXPECT_GT(per_pod, 100);
  EXPECT_LT(per_pod, 200);  // README: about 160 B, 3.2 MB at 20000 pods
}

}  // namespace
}  // namespace kscore::scheduler
