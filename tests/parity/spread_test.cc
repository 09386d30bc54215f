// PodTopologySpread's plans answered by the shim's ClusterIndex. The plugin
// tests (scorer/plugins/pod_topology_spread_test.cc) answer plans with the
// small SpreadCluster of scorer/testing/spread_cluster.h; here random
// clusters check that it answers exactly as the index does, and one of
// kube-scheduler's cases runs through the index itself.
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scorer/framework/cycle_state.h"
#include "scorer/plugins/pod_topology_spread.h"
#include "scorer/testing/spread_cluster.h"
#include "scorer/testing/wrappers.h"
#include "shim/cache/cluster_index.h"
#include "shim/objects/objects.h"

namespace kscore {
namespace {

namespace pb = framework::pb;
using plugins::PodTopologySpread;
using ::testing::ElementsAre;
using testing::ExistingPod;
using testing::SpreadCluster;

constexpr char kHostname[] = "kubernetes.io/hostname";

// The same cluster in the shim's index.
struct Indexed {
  cache::ClusterIndex index;
  Indexed(const std::vector<pb::Node>& nodes,
          const std::vector<ExistingPod>& pods) {
    for (const pb::Node& n : nodes) index.UpsertNode(n, {});
    for (const ExistingPod& p : pods) {
      objects::PodInfo info;
      info.namespace_ = p.ns();
      info.name = p.name();
      info.key = p.ns() + "/" + p.name();
      info.node_name = p.node();
      info.phase = "Running";
      info.deleting = p.terminating();
      info.pod.set_namespace_(p.ns());
      info.pod.set_name(p.name());
      *info.pod.mutable_labels() = p.labels();
      index.AddPod(info, p.node());
    }
  }
  // The plan's answers and every node with its counts, in `nodes` order.
  SpreadCluster::Answered Answer(const pb::Pod& pod,
                                 const pb::PlanResponse& plan,
                                 const std::vector<pb::Node>& nodes) const {
    cache::ClusterIndex::Prepared prepared = index.Prepare(pod, plan);
    SpreadCluster::Answered out;
    out.cluster = prepared.cluster;
    for (const pb::Node& n : nodes) {
      pb::Node& node = out.nodes.emplace_back(n);
      index.NodeParts(prepared, n.name(), &node);
    }
    return out;
  }
};

pb::LabelSelector RandomSelector(std::mt19937& rng, bool* set) {
  pb::LabelSelector s;
  *set = true;
  switch (rng() % 5) {
    case 0:
      *set = false;  // unset: selects no pod
      break;
    case 1:
      break;  // empty: counts no pod, matches the pod itself
    case 2:
      s = testing::ExistsSelector("foo");
      break;
    case 3:
      (*s.mutable_match_labels())["app"] = "a";
      break;
    default: {
      pb::LabelSelectorRequirement* r = s.add_match_expressions();
      r->set_key("app");
      r->set_operator_("NotIn");
      r->add_values("b");
    }
  }
  return s;
}

TEST(SpreadParityTest, SpreadClusterAnswersAsTheClusterIndex) {
  std::mt19937 rng(20261204);
  const char* keys[] = {"zone", kHostname, "rack"};
  int compared_counts = 0;
  for (int round = 0; round < 300; ++round) {
    SCOPED_TRACE(round);
    std::vector<pb::Node> nodes;
    const int n = 1 + static_cast<int>(rng() % 7);
    for (int i = 0; i < n; ++i) {
      const std::string name = "n" + std::to_string(i);
      auto w = testing::MakeNode().Name(name);
      if (rng() % 4 != 0) w.Label("zone", "z" + std::to_string(rng() % 3));
      if (rng() % 5 != 0) w.Label(kHostname, name);
      if (rng() % 2 == 0) w.Label("rack", rng() % 3 == 0 ? "" : "r1");
      if (rng() % 4 == 0) w.Taint("t", "", "NoSchedule");
      nodes.push_back(w.Obj());
    }
    std::vector<ExistingPod> pods;
    const int m = static_cast<int>(rng() % 12);
    for (int i = 0; i < m; ++i) {
      ExistingPod p("p" + std::to_string(i));
      p.On(nodes[rng() % nodes.size()].name());
      if (rng() % 5 == 0) p.Namespace("other");
      if (rng() % 2 == 0) p.Label("foo", "");
      if (rng() % 3 != 0) p.Label("app", rng() % 2 == 0 ? "a" : "b");
      if (rng() % 6 == 0) p.Terminating();
      if (rng() % 10 == 0) p.On("gone");  // a node the cluster lacks
      pods.push_back(p);
    }
    auto pw = testing::MakePod().Name("in").Label("foo", "").Label("app", "a");
    if (rng() % 3 == 0) pw.NodeSelector("zone", "z1");
    if (rng() % 3 == 0) pw.Toleration("t", "Exists", "", "NoSchedule");
    pb::Pod pod = pw.Obj();
    const int constraints = static_cast<int>(rng() % 4);
    for (int i = 0; i < constraints; ++i) {
      bool has = false;
      pb::LabelSelector sel = RandomSelector(rng, &has);
      pb::TopologySpreadConstraint c =
          testing::Spread(1 + static_cast<int32_t>(rng() % 3), keys[rng() % 3],
                          rng() % 2 == 0 ? "DoNotSchedule" : "ScheduleAnyway",
                          has ? &sel : nullptr);
      if (rng() % 3 == 0) c.set_node_affinity_policy("Ignore");
      if (rng() % 3 == 0) c.set_node_taints_policy("Honor");
      if (rng() % 4 == 0) c.add_match_label_keys("app");
      *pod.add_topology_spread_constraints() = c;
    }
    if (constraints == 0 && rng() % 2 == 0) {
      (*pod.mutable_workload_selectors()
            ->add_services()
            ->mutable_match_labels())["app"] = "a";
    }
    PodTopologySpread::Args args;
    args.system_defaulting = rng() % 2 == 0;
    if (!args.system_defaulting) {
      args.default_constraints = {
          testing::Spread(1, "zone", "DoNotSchedule", nullptr),
          testing::Spread(2, kHostname, "ScheduleAnyway", nullptr)};
    }
    pb::PlanResponse plan;
    PodTopologySpread(args).AddToPlan(pod, plan);

    SpreadCluster fake;
    for (const pb::Node& node : nodes) fake.AddNode(node);
    for (const ExistingPod& p : pods) fake.AddPod(p);
    const SpreadCluster::Answered want = fake.Answer(pod, plan);
    const SpreadCluster::Answered got =
        Indexed(nodes, pods).Answer(pod, plan, nodes);
    ASSERT_EQ(got.cluster.answers_size(), want.cluster.answers_size());
    EXPECT_EQ(got.cluster.node_count(), want.cluster.node_count());
    for (int q = 0; q < plan.queries_size(); ++q) {
      SCOPED_TRACE(plan.queries(q).DebugString());
      EXPECT_EQ(got.cluster.answers(q).DebugString(),
                want.cluster.answers(q).DebugString());
      for (size_t i = 0; i < nodes.size(); ++i) {
        EXPECT_EQ(got.nodes[i].query_counts(q), want.nodes[i].query_counts(q))
            << nodes[i].DebugString();
        ++compared_counts;
      }
    }
  }
  EXPECT_GT(compared_counts, 1000);
}

// kube-scheduler's "two Constraints on zone and node, 2 out of 4 nodes are
// candidates" (scoring_test.go) and "pods spread across nodes as 2/1/0/3,
// only node-x fits" (filtering_test.go), answered by the index.
TEST(SpreadParityTest, UpstreamCasesThroughTheClusterIndex) {
  auto node = [](const std::string& name, const std::string& zone) {
    return testing::MakeNode()
        .Name(name)
        .Label("zone", zone)
        .Label("node", name)
        .Label(kHostname, name)
        .Obj();
  };
  const std::vector<pb::Node> nodes = {
      node("node-a", "zone1"), node("node-b", "zone1"), node("node-x", "zone2"),
      node("node-y", "zone2")};
  auto pods_on = [](const std::string& n, int count,
                    std::vector<ExistingPod>& out) {
    for (int i = 0; i < count; ++i) {
      out.push_back(ExistingPod(n + std::to_string(i)).On(n).Label("foo", ""));
    }
  };
  const pb::LabelSelector foo = testing::ExistsSelector("foo");
  const PodTopologySpread pl{PodTopologySpread::Args()};

  std::vector<ExistingPod> pods;
  pods_on("node-a", 2, pods);
  pods_on("node-b", 1, pods);
  pods_on("node-y", 3, pods);
  pb::Pod hard = testing::MakePod().Name("p").Label("foo", "").Obj();
  *hard.add_topology_spread_constraints() =
      testing::Spread(1, "node", "DoNotSchedule", &foo);
  pb::PlanResponse plan;
  pl.AddToPlan(hard, plan);
  Indexed indexed(nodes, pods);
  SpreadCluster::Answered a = indexed.Answer(hard, plan, nodes);
  framework::CycleState state;
  state.BindCluster(&a.cluster, {{"PodTopologySpread", 0}});
  ASSERT_TRUE(pl.PreFilter(state, hard).ok());
  std::vector<framework::Code> codes;
  for (const pb::Node& n : a.nodes)
    codes.push_back(pl.Filter(state, hard, n).code);
  EXPECT_THAT(codes, ElementsAre(framework::Code::kUnschedulable,
                                 framework::Code::kUnschedulable,
                                 framework::Code::kSuccess,
                                 framework::Code::kUnschedulable));

  pods.clear();
  pods_on("node-a", 2, pods);
  pods_on("node-b", 1, pods);
  pods_on("node-x", 2, pods);
  pods_on("node-y", 4, pods);
  pb::Pod soft = testing::MakePod().Name("p").Label("foo", "").Obj();
  *soft.add_topology_spread_constraints() =
      testing::Spread(1, "zone", "ScheduleAnyway", &foo);
  *soft.add_topology_spread_constraints() =
      testing::Spread(1, kHostname, "ScheduleAnyway", &foo);
  plan.Clear();
  pl.AddToPlan(soft, plan);
  Indexed indexed2(nodes, pods);
  SpreadCluster::Answered b = indexed2.Answer(soft, plan, nodes);
  framework::CycleState state2;
  state2.BindCluster(&b.cluster, {{"PodTopologySpread", 0}});
  std::vector<const pb::Node*> feasible = b.Only({"node-a", "node-x"});
  ASSERT_TRUE(pl.PreScore(state2, soft, feasible).ok());
  std::vector<int64_t> scores(2);
  ASSERT_TRUE(pl.Score(state2, soft, feasible, absl::MakeSpan(scores)).ok());
  std::vector<absl::string_view> names = {"node-a", "node-x"};
  ASSERT_TRUE(
      pl.NormalizeScoreByNode(state2, soft, names, absl::MakeSpan(scores))
          .ok());
  EXPECT_THAT(scores, ElementsAre(100, 63));
}

}  // namespace
}  // namespace kscore
