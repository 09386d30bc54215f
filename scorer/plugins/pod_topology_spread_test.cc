#include "scorer/plugins/pod_topology_spread.h"

#include <limits>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/config.h"
#include "scorer/framework/profile.h"
#include "scorer/plugins/registry.h"
#include "scorer/testing/spread_cluster.h"
#include "scorer/testing/wrappers.h"
#include "yaml-cpp/yaml.h"

namespace kscore::plugins {
namespace {

using framework::Code;
using framework::CycleState;
using framework::PluginStatus;
using ::kscore::testing::ExistingPod;
using ::kscore::testing::ExistsSelector;
using ::kscore::testing::MakeNode;
using ::kscore::testing::MakePod;
using ::kscore::testing::Req;
using ::kscore::testing::Spread;
using ::kscore::testing::SpreadCluster;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
namespace pb = framework::pb;

constexpr char kHostname[] = "kubernetes.io/hostname";
constexpr char kZone[] = "topology.kubernetes.io/zone";
const pb::LabelSelector kFoo = ExistsSelector("foo");
const pb::LabelSelector kBar = ExistsSelector("bar");
const pb::LabelSelector kEmpty;

using Labels = std::vector<std::pair<std::string, std::string>>;

pb::Node N(std::string name, const Labels& labels) {
  auto n = MakeNode().Name(std::move(name));
  for (const auto& [k, v] : labels) n.Label(k, v);
  return n.Obj();
}

// A node labelled zone=<zone> and node=<name>, as upstream's filter cases.
pb::Node ZoneNode(const std::string& name, const std::string& zone) {
  return N(name, {{"zone", zone}, {"node", name}});
}

// `count` pods labelled `labels` on `node`.
std::vector<ExistingPod> Pods(const std::string& node, int count,
                              const Labels& labels = {{"foo", ""}}) {
  std::vector<ExistingPod> out;
  for (int i = 0; i < count; ++i) {
    ExistingPod p(node + "-" + std::to_string(i));
    p.On(node);
    for (const auto& [k, v] : labels) p.Label(k, v);
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<ExistingPod> Concat(std::vector<std::vector<ExistingPod>> lists) {
  std::vector<ExistingPod> out;
  for (auto& l : lists) {
    for (auto& p : l) out.push_back(std::move(p));
  }
  return out;
}

pb::Pod WithConstraints(pb::Pod pod,
                        std::vector<pb::TopologySpreadConstraint> cs) {
  for (auto& c : cs) *pod.add_topology_spread_constraints() = std::move(c);
  return pod;
}

pb::TopologySpreadConstraint Hard(int32_t skew, std::string key,
                                  const pb::LabelSelector* sel) {
  return Spread(skew, std::move(key), "DoNotSchedule", sel);
}
pb::TopologySpreadConstraint Soft(int32_t skew, std::string key,
                                  const pb::LabelSelector* sel) {
  return Spread(skew, std::move(key), "ScheduleAnyway", sel);
}

PodTopologySpread ListDefaulting() {
  PodTopologySpread::Args a;
  a.system_defaulting = false;
  return PodTopologySpread(a);
}

// A pod's cycle against a cluster: its plan, the answers, and the state
// bound to them, as the framework sets it up.
struct Cycle {
  pb::PlanResponse plan;
  SpreadCluster::Answered answered;
  CycleState state;

  Cycle(const PodTopologySpread& pl, const SpreadCluster& cluster,
        const pb::Pod& pod) {
    pl.AddToPlan(pod, plan);
    answered = cluster.Answer(pod, plan);
    absl::flat_hash_map<std::string, int> bases;
    if (plan.queries_size() > 0) bases["PodTopologySpread"] = 0;
    state.BindCluster(&answered.cluster, std::move(bases));
  }
};

SpreadCluster ClusterOf(const std::vector<pb::Node>& nodes,
                        const std::vector<ExistingPod>& pods) {
  SpreadCluster c;
  for (const pb::Node& n : nodes) c.AddNode(n);
  for (const ExistingPod& p : pods) c.AddPod(p);
  return c;
}

// ------------------------------------------------------------ filter

// kube-scheduler's TestSingleConstraint and TestMultipleConstraints
// (filtering_test.go): PreFilter over every node, then Filter per node.
TEST(PodTopologySpreadTest, FilterAsUpstream) {
  const std::vector<pb::Node> four = {
      ZoneNode("node-a", "zone1"), ZoneNode("node-b", "zone1"),
      ZoneNode("node-x", "zone2"), ZoneNode("node-y", "zone2")};
  const std::vector<ExistingPod> spread_2103 =
      Concat({Pods("node-a", 2), Pods("node-b", 1), Pods("node-y", 3)});
  const pb::Pod foo = MakePod().Name("p").Label("foo", "").Obj();
  pb::Taint unschedulable;
  unschedulable.set_key("node.kubernetes.io/unschedulable");
  unschedulable.set_effect("NoSchedule");
  auto with_min_domains = [](pb::TopologySpreadConstraint c, int32_t m) {
    c.set_min_domains(m);
    return c;
  };
  auto with_policies = [](pb::TopologySpreadConstraint c, std::string aff,
                          std::string taints) {
    c.set_node_affinity_policy(std::move(aff));
    c.set_node_taints_policy(std::move(taints));
    return c;
  };
  const std::vector<pb::Node> foo_nodes = {
      N("node-a", {{"node", "node-a"}, {"foo", ""}}),
      N("node-b", {{"node", "node-b"}, {"foo", ""}}),
      N("node-x", {{"node", "node-x"}, {"foo", ""}}),
      N("node-y", {{"node", "node-y"}})};
  std::vector<pb::Node> tainted_y = foo_nodes;
  *tainted_y[3].add_taints() = unschedulable;
  const std::vector<ExistingPod> one_each_aby =
      Concat({Pods("node-a", 1), Pods("node-b", 1), Pods("node-y", 1)});
  const Code S = Code::kSuccess;
  const Code U = Code::kUnschedulable;
  const Code UU = Code::kUnschedulableAndUnresolvable;

  struct Case {
    std::string name;
    pb::Pod pod;
    std::vector<pb::Node> nodes;
    std::vector<ExistingPod> pods;
    std::vector<Code> want;  // per node, in order
  };
  std::vector<Case> cases = {
      {"no existing pods",
       WithConstraints(foo, {Hard(1, "zone", &kFoo)}),
       four,
       {},
       {S, S, S, S}},
      {"no existing pods, incoming pod doesn't match itself",
       WithConstraints(foo, {Hard(1, "zone", &kBar)}),
       four,
       {},
       {S, S, S, S}},
      {"existing pods in a different namespace do not count",
       WithConstraints(foo, {Hard(1, "zone", &kFoo)}),
       four,
       Concat({{testing::Existing("a1").On("node-a").Namespace("ns1").Label(
                    "foo", ""),
                testing::Existing("b1").On("node-a").Namespace("ns2").Label(
                    "foo", "")},
               Pods("node-x", 1),
               Pods("node-y", 1)}),
       {S, S, U, U}},
      {"existing pods do not match null selector",
       WithConstraints(foo, {Hard(1, "zone", nullptr)}),
       four,
       Concat({Pods("node-x", 1), Pods("node-y", 1)}),
       {S, S, S, S}},
      {"pods spread across zones as 3/3, all nodes fit",
       WithConstraints(foo, {Hard(1, "zone", &kFoo)}),
       four,
       spread_2103,
       {S, S, S, S}},
      {"pods spread across zones as 1/2 due to absence of label 'zone' on "
       "node-b",
       WithConstraints(foo, {Hard(1, "zone", &kFoo)}),
       {ZoneNode("node-a", "zone1"),
        N("node-b", {{"zon", "zone1"}, {"node", "node-b"}}),
        ZoneNode("node-x", "zone2"), ZoneNode("node-y", "zone2")},
       Concat({Pods("node-a", 1), Pods("node-b", 1), Pods("node-x", 1),
               Pods("node-y", 1)}),
       {S, UU, U, U}},
      {"pod cannot be scheduled as all nodes don't have label 'rack'",
       WithConstraints(foo, {Hard(1, "rack", &kFoo)}),
       {ZoneNode("node-a", "zone1"), ZoneNode("node-x", "zone2")},
       {},
       {UU, UU}},
      {"pods spread across nodes as 2/1/0/3, only node-x fits",
       WithConstraints(foo, {Hard(1, "node", &kFoo)}),
       four,
       spread_2103,
       {U, U, S, U}},
      {"pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x "
       "fit",
       WithConstraints(foo, {Hard(2, "node", &kFoo)}),
       four,
       spread_2103,
       {U, S, S, U}},
      {"pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
       WithConstraints(MakePod().Name("p").Label("bar", "").Obj(),
                       {Hard(1, "node", &kFoo)}),
       four,
       spread_2103,
       {U, S, S, U}},
      {"incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence "
       "node-a fits",
       WithConstraints(
           MakePod()
               .Name("p")
               .Label("foo", "")
               .RequiredTerm({Req("node", "In", {"node-a", "node-y"})})
               .Obj(),
           {Hard(1, "node", &kFoo)}),
       four,
       spread_2103,
       {S, S, S, U}},
      {"terminating Pods should be excluded",
       WithConstraints(foo, {Hard(1, "node", &kFoo)}),
       {N("node-a", {{"node", "node-a"}}), N("node-b", {{"node", "node-b"}})},
       {testing::Existing("p-a").On("node-a").Label("foo", "").Terminating(),
        testing::Existing("p-b").On("node-b").Label("foo", "")},
       {S, U}},
      {"incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence "
       "node-a fits",
       WithConstraints(MakePod()
                           .Name("p")
                           .Label("foo", "")
                           .RequiredTerm({Req("node", "NotIn", {"node-b"})})
                           .Obj(),
                       {Hard(1, "zone", &kFoo)}),
       four,
       Concat({Pods("node-b", 2), Pods("node-y", 1)}),
       {S, S, U, U}},
      {"pods spread across nodes as 2/2/1, maxSkew is 2, and the number of "
       "domains < minDomains, then the third node fits",
       WithConstraints(foo, {with_min_domains(Hard(2, "node", &kFoo), 4)}),
       {N("node-a", {{"node", "node-a"}}), N("node-b", {{"node", "node-b"}}),
        N("node-c", {{"node", "node-c"}})},
       Concat({Pods("node-a", 2), Pods("node-b", 2), Pods("node-c", 1)}),
       {U, U, S}},
      {"pods spread across nodes as 2/2/1, maxSkew is 2, and the number of "
       "domains > minDomains, then the all nodes fit",
       WithConstraints(foo, {with_min_domains(Hard(2, "node", &kFoo), 2)}),
       {N("node-a", {{"node", "node-a"}}), N("node-b", {{"node", "node-b"}}),
        N("node-c", {{"node", "node-c"}})},
       Concat({Pods("node-a", 2), Pods("node-b", 2), Pods("node-c", 1)}),
       {S, S, S}},
      {"pods spread across zone as 2/1, maxSkew is 2 and the number of "
       "domains < minDomains, then the third and fourth nodes fit",
       WithConstraints(foo, {with_min_domains(Hard(2, "zone", &kFoo), 3)}),
       four,
       Concat({Pods("node-a", 1), Pods("node-b", 1), Pods("node-y", 1)}),
       {U, U, S, S}},
      {"pods spread across zone as 2/1, maxSkew is 2 and the number of "
       "domains > minDomains, then the all nodes fit",
       WithConstraints(foo, {with_min_domains(Hard(2, "zone", &kFoo), 1)}),
       four,
       Concat({Pods("node-a", 1), Pods("node-b", 1), Pods("node-y", 1)}),
       {S, S, S, S}},
      {"NodeAffinityPolicy honored with labelSelectors",
       WithConstraints(
           MakePod().Name("p").Label("foo", "").NodeSelector("foo", "").Obj(),
           {Hard(1, "node", &kFoo)}),
       foo_nodes,
       one_each_aby,
       {U, U, S, S}},
      {"NodeAffinityPolicy ignored with labelSelectors",
       WithConstraints(
           MakePod().Name("p").Label("foo", "").NodeSelector("foo", "").Obj(),
           {with_policies(Hard(1, "node", &kFoo), "Ignore", "")}),
       foo_nodes,
       one_each_aby,
       {U, U, S, U}},
      {"NodeAffinityPolicy honored with nodeAffinity",
       WithConstraints(MakePod()
                           .Name("p")
                           .Label("foo", "")
                           .RequiredTerm({Req("foo", "In", {""})})
                           .Obj(),
                       {Hard(1, "node", &kFoo)}),
       foo_nodes,
       one_each_aby,
       {U, U, S, S}},
      {"NodeAffinityPolicy ignored with nodeAffinity",
       WithConstraints(MakePod()
                           .Name("p")
                           .Label("foo", "")
                           .RequiredTerm({Req("foo", "In", {""})})
                           .Obj(),
                       {with_policies(Hard(1, "node", &kFoo), "Ignore", "")}),
       foo_nodes,
       one_each_aby,
       {U, U, S, U}},
      {"NodeTaintsPolicy honored",
       WithConstraints(foo,
                       {with_policies(Hard(1, "node", &kFoo), "", "Honor")}),
       tainted_y,
       one_each_aby,
       {U, U, S, S}},
      {"NodeTaintsPolicy ignored",
       WithConstraints(foo, {Hard(1, "node", &kFoo)}),
       tainted_y,
       one_each_aby,
       {U, U, S, U}},
      // TestMultipleConstraints.
      {"two Constraints on zone and node, spreads = [3/3, 2/1/0/3]",
       WithConstraints(foo, {Hard(1, "zone", &kFoo), Hard(1, "node", &kFoo)}),
       four,
       spread_2103,
       {U, U, S, U}},
      {"two Constraints on zone and node, spreads = [3/4, 2/1/0/4]",
       WithConstraints(foo, {Hard(1, "zone", &kFoo), Hard(1, "node", &kFoo)}),
       four,
       Concat({Pods("node-a", 2), Pods("node-b", 1), Pods("node-y", 4)}),
       {U, U, U, U}},
      {"Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]",
       WithConstraints(
           MakePod().Name("p").Label("foo", "").Label("bar", "").Obj(),
           {Hard(1, "zone", &kFoo), Hard(1, "node", &kBar)}),
       four,
       Concat({Pods("node-a", 1), Pods("node-y", 1, {{"bar", ""}})}),
       {U, U, S, U}},
      {"a node missing the second constraint's key only fails its label "
       "check after passing the first constraint",
       WithConstraints(foo, {Hard(1, "zone", &kFoo), Hard(1, "node", &kFoo)}),
       {ZoneNode("node-a", "zone1"), N("node-b", {{"zone", "zone1"}}),
        ZoneNode("node-x", "zone2")},
       Pods("node-x", 2),
       {S, UU, U}},
  };
  const PodTopologySpread pl = ListDefaulting();
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Cycle cycle(pl, ClusterOf(c.nodes, c.pods), c.pod);
    PluginStatus pre = pl.PreFilter(cycle.state, c.pod);
    ASSERT_EQ(pre.code, Code::kSuccess)
        << ::testing::PrintToString(pre.reasons);
    ASSERT_EQ(c.want.size(), cycle.answered.nodes.size());
    for (size_t i = 0; i < c.want.size(); ++i) {
      const pb::Node& node = cycle.answered.nodes[i];
      PluginStatus s = pl.Filter(cycle.state, c.pod, node);
      EXPECT_EQ(s.code, c.want[i])
          << node.name() << " " << ::testing::PrintToString(s.reasons);
      if (s.code == Code::kUnschedulable) {
        EXPECT_THAT(s.reasons,
                    ElementsAre("node(s) didn't match pod topology spread "
                                "constraints"));
      } else if (s.code == Code::kUnschedulableAndUnresolvable) {
        EXPECT_THAT(s.reasons,
                    ElementsAre("node(s) didn't match pod topology spread "
                                "constraints (missing required label)"));
      }
    }
  }
}

TEST(PodTopologySpreadTest, PreFilterSkipsPodsWithoutHardConstraints) {
  const PodTopologySpread pl = ListDefaulting();
  SpreadCluster cluster;
  cluster.AddNode(ZoneNode("node-a", "zone1"));
  for (const pb::Pod& pod :
       {MakePod().Name("p").Label("foo", "").Obj(),
        WithConstraints(MakePod().Name("p").Label("foo", "").Obj(),
                        {Soft(1, "zone", &kFoo)})}) {
    Cycle cycle(pl, cluster, pod);
    EXPECT_EQ(pl.PreFilter(cycle.state, pod).code, Code::kSkip);
  }
}

// The scheduler still merges matchLabelKeys (MatchLabelKeysInPodTopology-
// Spread is beta and on): the pod's own value of the key joins the
// selector, for counting and for matching itself.
TEST(PodTopologySpreadTest, MatchLabelKeysJoinTheSelector) {
  pb::TopologySpreadConstraint c = Hard(1, "node", &kFoo);
  c.add_match_label_keys("rev");
  c.add_match_label_keys("absent");
  const pb::Pod pod = WithConstraints(
      MakePod().Name("p").Label("foo", "").Label("rev", "2").Obj(), {c});
  // Two foo pods on node-a of another revision, one of this one on node-b.
  SpreadCluster cluster = ClusterOf(
      {N("node-a", {{"node", "node-a"}}), N("node-b", {{"node", "node-b"}}),
       N("node-c", {{"node", "node-c"}})},
      Concat({Pods("node-a", 2, {{"foo", ""}, {"rev", "1"}}),
              Pods("node-b", 1, {{"foo", ""}, {"rev", "2"}})}));
  const PodTopologySpread pl = ListDefaulting();
  Cycle cycle(pl, cluster, pod);
  ASSERT_TRUE(pl.PreFilter(cycle.state, pod).ok());
  std::vector<Code> got;
  for (const pb::Node& n : cycle.answered.nodes) {
    got.push_back(pl.Filter(cycle.state, pod, n).code);
  }
  // Without the merge, node-a (2 pods of the other revision) would fail
  // too.
  EXPECT_THAT(
      got, ElementsAre(Code::kSuccess, Code::kUnschedulable, Code::kSuccess));
}

TEST(PodTopologySpreadTest, PlanAsksOneQueryPerConstraint) {
  pb::TopologySpreadConstraint zone = Hard(1, "zone", &kFoo);
  zone.set_node_taints_policy("Honor");
  const pb::Pod pod =
      WithConstraints(MakePod().Name("p").Namespace("ns").Obj(),
                      {zone, Hard(2, "node", nullptr),
                       Soft(1, kHostname, &kFoo), Soft(1, "rack", &kEmpty)});
  pb::PlanResponse plan;
  ListDefaulting().AddToPlan(pod, plan);
  ASSERT_EQ(plan.queries_size(), 4);
  EXPECT_TRUE(plan.score_needs_all_feasible());
  // DoNotSchedule: by domain over the nodes with every hard key, with the
  // domains and their minimum.
  const pb::PodQuery& q0 = plan.queries(0);
  EXPECT_EQ(q0.topology_key(), "zone");
  EXPECT_TRUE(q0.want_domains());
  EXPECT_FALSE(q0.include_terminating());
  EXPECT_THAT(q0.nodes().required_keys(), ElementsAre("zone", "node"));
  EXPECT_TRUE(q0.nodes().pod_node_affinity());
  EXPECT_TRUE(q0.nodes().pod_taints());
  ASSERT_EQ(q0.all_of_size(), 1);
  EXPECT_THAT(q0.all_of(0).namespaces(), ElementsAre("ns"));
  EXPECT_EQ(q0.all_of(0).selector().DebugString(), kFoo.DebugString());
  // An unset selector counts no pod: nothing to match.
  EXPECT_EQ(plan.queries(1).all_of_size(), 0);
  EXPECT_FALSE(plan.queries(1).nodes().pod_taints());
  // ScheduleAnyway: hostname per node, other keys over the nodes with
  // every soft key; an empty selector counts no pod either.
  EXPECT_EQ(plan.queries(2).topology_key(), "");
  EXPECT_FALSE(plan.queries(2).want_domains());
  EXPECT_EQ(plan.queries(3).topology_key(), "rack");
  EXPECT_THAT(plan.queries(3).nodes().required_keys(),
              ElementsAre(kHostname, "rack"));
  EXPECT_EQ(plan.queries(3).all_of_size(), 0);

  // Only hard constraints: the score does not need every feasible node.
  pb::PlanResponse hard_only;
  ListDefaulting().AddToPlan(
      WithConstraints(MakePod().Obj(), {Hard(1, "zone", &kFoo)}), hard_only);
  EXPECT_EQ(hard_only.queries_size(), 1);
  EXPECT_FALSE(hard_only.score_needs_all_feasible());
}

TEST(PodTopologySpreadTest, MalformedSelectorIsAnError) {
  pb::LabelSelector bad;
  bad.add_match_expressions()->set_key("foo");  // no operator
  const pb::Pod pod = WithConstraints(MakePod().Obj(), {Hard(1, "zone", &bad)});
  const PodTopologySpread pl = ListDefaulting();
  pb::PlanResponse plan;
  pl.AddToPlan(pod, plan);
  EXPECT_EQ(plan.queries_size(), 0);
  CycleState state;
  PluginStatus s = pl.PreFilter(state, pod);
  EXPECT_EQ(s.code, Code::kError);
  EXPECT_THAT(s.reasons,
              ElementsAre(HasSubstr(
                  "get constraints from pod: obtaining pod's hard topology "
                  "spread constraints: topologySpreadConstraints[0]."
                  "labelSelector.matchExpressions[0]")));
}

// ------------------------------------------------------------ score

struct ScoreCase {
  std::string name;
  pb::Pod pod;
  std::vector<pb::Node> nodes;   // feasible
  std::vector<pb::Node> failed;  // in the cluster, not feasible
  std::vector<ExistingPod> pods;
  std::vector<int64_t> want;      // normalised, per feasible node
  std::vector<int64_t> raw = {};  // checked when given
};

void RunScoreCases(const PodTopologySpread& pl,
                   const std::vector<ScoreCase>& cases) {
  for (const ScoreCase& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<pb::Node> all = c.nodes;
    all.insert(all.end(), c.failed.begin(), c.failed.end());
    Cycle cycle(pl, ClusterOf(all, c.pods), c.pod);
    std::vector<std::string> names;
    for (const pb::Node& n : c.nodes) names.push_back(n.name());
    const std::vector<const pb::Node*> feasible = cycle.answered.Only(names);
    PluginStatus pre = pl.PreScore(cycle.state, c.pod, feasible);
    ASSERT_TRUE(pre.ok()) << ::testing::PrintToString(pre.reasons);
    std::vector<int64_t> scores(feasible.size());
    PluginStatus s =
        pl.Score(cycle.state, c.pod, feasible, absl::MakeSpan(scores));
    ASSERT_TRUE(s.ok()) << ::testing::PrintToString(s.reasons);
    if (!c.raw.empty()) {
      EXPECT_EQ(scores, c.raw);
    }
    std::vector<absl::string_view> views(names.begin(), names.end());
    s = pl.NormalizeScoreByNode(cycle.state, c.pod, views,
                                absl::MakeSpan(scores));
    ASSERT_TRUE(s.ok()) << ::testing::PrintToString(s.reasons);
    EXPECT_EQ(scores, c.want);
  }
}

pb::Node HostNode(const std::string& name) {
  return N(name, {{kHostname, name}});
}
pb::Node ZoneHostNode(const std::string& name, const std::string& zone) {
  return N(name, {{"zone", zone}, {kHostname, name}});
}

// kube-scheduler's TestPodTopologySpreadScore (scoring_test.go), with
// system defaulting as there.
TEST(PodTopologySpreadTest, ScoreAsUpstream) {
  const pb::Pod foo = MakePod().Name("p").Label("foo", "").Obj();
  const pb::Pod foobar =
      MakePod().Name("p").Label("foo", "").Label("bar", "").Obj();
  const std::vector<pb::Node> abcd = {HostNode("node-a"), HostNode("node-b"),
                                      HostNode("node-c"), HostNode("node-d")};
  const std::vector<pb::Node> zoned = {
      ZoneHostNode("node-a", "zone1"), ZoneHostNode("node-b", "zone1"),
      ZoneHostNode("node-x", "zone2"), ZoneHostNode("node-y", "zone2")};
  const std::vector<ExistingPod> spread_4321 =
      Concat({Pods("node-a", 4), Pods("node-b", 3), Pods("node-c", 2),
              Pods("node-d", 1)});
  const std::vector<ExistingPod> spread_4213 =
      Concat({Pods("node-a", 4), Pods("node-b", 2), Pods("node-x", 1),
              Pods("node-y", 3)});
  pb::Pod in_service = foo;
  (*in_service.mutable_workload_selectors()
        ->add_services()
        ->mutable_match_labels())["foo"] = "";
  auto policies = [](pb::TopologySpreadConstraint c, std::string aff,
                     std::string taints) {
    c.set_node_affinity_policy(std::move(aff));
    c.set_node_taints_policy(std::move(taints));
    return c;
  };
  auto min_domains = [](pb::TopologySpreadConstraint c, int32_t m) {
    c.set_min_domains(m);
    return c;
  };
  const std::vector<pb::Node> node_abc_foo = {
      N("node-a", {{"node", "node-a"}, {"foo", ""}}),
      N("node-b", {{"node", "node-b"}, {"foo", ""}}),
      N("node-c", {{"node", "node-c"}})};
  const std::vector<ExistingPod> spread_211 =
      Concat({Pods("node-a", 2), Pods("node-b", 1), Pods("node-c", 1)});
  std::vector<pb::Node> tainted_c = {N("node-a", {{"node", "node-a"}}),
                                     N("node-b", {{"node", "node-b"}}),
                                     N("node-c", {{"node", "node-c"}})};
  pb::Taint* t = tainted_c[2].add_taints();
  t->set_key("node.kubernetes.io/unschedulable");
  t->set_effect("NoSchedule");
  pb::TopologySpreadConstraint keyed_zone = Soft(1, "zone", &kEmpty);
  keyed_zone.add_match_label_keys("foo");
  pb::TopologySpreadConstraint keyed_host = Soft(1, kHostname, &kEmpty);
  keyed_host.add_match_label_keys("bar");
  pb::TopologySpreadConstraint bar_baz = Soft(1, kHostname, &kBar);
  bar_baz.add_match_label_keys("baz");
  const std::vector<pb::Node> zoned_abcd = {
      ZoneHostNode("node-a", "zone1"), ZoneHostNode("node-b", "zone1"),
      ZoneHostNode("node-c", "zone2"), ZoneHostNode("node-d", "zone2")};

  std::vector<ScoreCase> cases = {
      {"one constraint on node, no existing pods",
       WithConstraints(foo, {Soft(1, kHostname, &kFoo)}),
       {HostNode("node-a"), HostNode("node-b")},
       {},
       {},
       {100, 100}},
      {"one constraint on node, only one node is candidate",
       WithConstraints(foo, {Soft(1, kHostname, &kFoo)}),
       {HostNode("node-a")},
       {HostNode("node-b")},
       Concat({Pods("node-a", 2), Pods("node-b", 1)}),
       {100}},
      {"one constraint on node, all nodes have the same number of matching "
       "pods",
       WithConstraints(foo, {Soft(1, kHostname, &kFoo)}),
       {HostNode("node-a"), HostNode("node-b")},
       {},
       Concat({Pods("node-a", 1), Pods("node-b", 1)}),
       {100, 100}},
      // 2/1/0/3 by hostname: weight log(6); raw round(2w), round(w), 0,
      // round(3w).
      {"one constraint on node, all 4 nodes are candidates",
       WithConstraints(foo, {Soft(1, kHostname, &kFoo)}),
       abcd,
       {},
       Concat({Pods("node-a", 2), Pods("node-b", 1), Pods("node-d", 3)}),
       {20, 60, 100, 0},
       {4, 2, 0, 5}},
      {"one constraint on node, null selector",
       WithConstraints(foo, {Soft(1, kHostname, nullptr)}),
       abcd,
       {},
       Concat({Pods("node-a", 2), Pods("node-b", 1), Pods("node-d", 3)}),
       {100, 100, 100, 100}},
      {"one constraint on node, all 4 nodes are candidates, maxSkew=2",
       WithConstraints(foo, {Soft(2, kHostname, &kFoo)}),
       abcd,
       {},
       Concat({Pods("node-a", 2), Pods("node-b", 1), Pods("node-d", 3)}),
       {33, 66, 100, 16}},
      {"one constraint on node, all 4 nodes are candidates, maxSkew=3",
       WithConstraints(foo, {Soft(3, kHostname, &kFoo)}),
       abcd,
       {},
       spread_4321,
       {44, 66, 77, 100}},
      {"system defaulting, nodes don't have zone, pods match service",
       in_service,
       abcd,
       {},
       spread_4321,
       {44, 66, 77, 100}},
      {"one constraint on node, 3 out of 4 nodes are candidates",
       WithConstraints(foo, {Soft(1, kHostname, &kFoo)}),
       {HostNode("node-a"), HostNode("node-b"), HostNode("node-x")},
       {HostNode("node-y")},
       spread_4213,
       {33, 83, 100}},
      {"one constraint on node, 3 out of 4 nodes are candidates, one node "
       "doesn't match topology key",
       WithConstraints(foo, {Soft(1, kHostname, &kFoo)}),
       {HostNode("node-a"), N("node-b", {{"n", "node-b"}}), HostNode("node-x")},
       {HostNode("node-y")},
       spread_4213,
       {16, 0, 100},
       {6, 0, 1}},
      {"one constraint on zone, 3 out of 4 nodes are candidates",
       WithConstraints(foo, {Soft(1, "zone", &kFoo)}),
       {zoned[0], zoned[1], zoned[2]},
       {zoned[3]},
       spread_4213,
       {75, 75, 100}},
      {"two Constraints on zone and node, 2 out of 4 nodes are candidates",
       WithConstraints(foo,
                       {Soft(1, "zone", &kFoo), Soft(1, kHostname, &kFoo)}),
       {zoned[0], zoned[2]},
       {zoned[1], zoned[3]},
       Concat({Pods("node-a", 2), Pods("node-b", 1), Pods("node-x", 2),
               Pods("node-y", 4)}),
       {100, 63}},
      {"two Constraints on zone, 2 out of 4 nodes are candidates",
       WithConstraints(foobar,
                       {Soft(1, "zone", &kFoo), Soft(1, "zone", &kBar)}),
       {N("node-a", {{"zone", "zone1"}}), N("node-x", {{"zone", "zone2"}})},
       {N("node-b", {{"zone", "zone1"}}), N("node-y", {{"zone", "zone2"}})},
       Concat({Pods("node-a", 1, {{"foo", ""}, {"bar", ""}}),
               Pods("node-a", 1, {{"foo", ""}}),
               Pods("node-b", 1, {{"foo", ""}, {"bar", ""}}),
               Pods("node-y", 2, {{"foo", ""}}),
               Pods("node-y", 1, {{"foo", ""}, {"bar", ""}})}),
       {85, 100}},
      {"two Constraints on zone and node, with different labelSelectors",
       WithConstraints(foobar,
                       {Soft(1, "zone", &kFoo), Soft(1, kHostname, &kBar)}),
       zoned,
       {},
       Concat({Pods("node-a", 1, {{"foo", ""}}),
               Pods("node-b", 1, {{"foo", ""}, {"bar", ""}}),
               Pods("node-y", 1, {{"foo", ""}}),
               Pods("node-y", 1, {{"bar", ""}})}),
       {60, 20, 100, 60}},
      {"two Constraints on zone and node, with different labelSelectors, "
       "some nodes have 0 pods",
       WithConstraints(foobar,
                       {Soft(1, "zone", &kFoo), Soft(1, kHostname, &kBar)}),
       zoned,
       {},
       Concat({Pods("node-b", 1, {{"bar", ""}}),
               Pods("node-x", 1, {{"foo", ""}}),
               Pods("node-y", 1, {{"foo", ""}, {"bar", ""}})}),
       {100, 60, 40, 0}},
      {"two Constraints on zone and node, with different labelSelectors, 3 "
       "out of 4 nodes are candidates",
       WithConstraints(foobar,
                       {Soft(1, "zone", &kFoo), Soft(1, kHostname, &kBar)}),
       {zoned[0], zoned[1], zoned[2]},
       {zoned[3]},
       Concat({Pods("node-a", 1, {{"foo", ""}}),
               Pods("node-b", 1, {{"foo", ""}, {"bar", ""}}),
               Pods("node-y", 1, {{"foo", ""}}),
               Pods("node-y", 1, {{"bar", ""}})}),
       {50, 25, 100}},
      {"existing pods in a different namespace do not count",
       WithConstraints(foo, {Soft(1, kHostname, &kFoo)}),
       {HostNode("node-a"), HostNode("node-b")},
       {},
       Concat({{testing::Existing("a1").On("node-a").Namespace("ns1").Label(
                   "foo", "")},
               Pods("node-a", 1),
               Pods("node-b", 2)}),
       {100, 33}},
      {"terminating Pods should be excluded",
       WithConstraints(foo, {Soft(1, kHostname, &kFoo)}),
       {HostNode("node-a"), HostNode("node-b")},
       {},
       {testing::Existing("p-a").On("node-a").Label("foo", "").Terminating(),
        testing::Existing("p-b").On("node-b").Label("foo", "")},
       {100, 0}},
      {"minDomains has no effect when ScheduleAnyway",
       WithConstraints(foo, {min_domains(Soft(2, "node", &kFoo), 10)}),
       {N("node-a", {{"node", "node-a"}}), N("node-b", {{"node", "node-b"}}),
        N("node-c", {{"node", "node-c"}})},
       {},
       Concat({Pods("node-a", 2), Pods("node-b", 2), Pods("node-c", 1)}),
       {75, 75, 100}},
      {"NodeAffinityPolicy honoed with labelSelectors",
       WithConstraints(
           MakePod().Name("p").Label("foo", "").NodeSelector("foo", "").Obj(),
           {Soft(1, "node", &kFoo)}),
       node_abc_foo,
       {},
       spread_211,
       {0, 33, 100}},
      {"NodeAffinityPolicy ignored with labelSelectors",
       WithConstraints(
           MakePod().Name("p").Label("foo", "").NodeSelector("foo", "").Obj(),
           {policies(Soft(1, "node", &kFoo), "Ignore", "")}),
       node_abc_foo,
       {},
       spread_211,
       {66, 100, 100}},
      {"NodeAffinityPolicy honoed with nodeAffinity",
       WithConstraints(MakePod()
                           .Name("p")
                           .Label("foo", "")
                           .RequiredTerm({Req("foo", "In", {""})})
                           .Obj(),
                       {Soft(1, "node", &kFoo)}),
       node_abc_foo,
       {},
       spread_211,
       {0, 33, 100}},
      {"NodeAffinityPolicy ignored with nodeAffinity",
       WithConstraints(MakePod()
                           .Name("p")
                           .Label("foo", "")
                           .RequiredTerm({Req("foo", "In", {""})})
                           .Obj(),
                       {policies(Soft(1, "node", &kFoo), "Ignore", "")}),
       node_abc_foo,
       {},
       spread_211,
       {66, 100, 100}},
      {"NodeTaintsPolicy honored",
       WithConstraints(foo, {policies(Soft(1, "node", &kFoo), "", "Honor")}),
       tainted_c,
       {},
       spread_211,
       {0, 33, 100}},
      {"NodeTaintsPolicy ignored",
       WithConstraints(foo, {Soft(1, "node", &kFoo)}),
       tainted_c,
       {},
       spread_211,
       {66, 100, 100}},
      {"matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
       WithConstraints(foobar, {keyed_zone, keyed_host}),
       zoned_abcd,
       {},
       Concat({Pods("node-a", 1, {{"foo", ""}}),
               Pods("node-b", 1, {{"foo", ""}, {"bar", ""}}),
               Pods("node-c", 1, {{"foo", ""}}),
               Pods("node-c", 1, {{"bar", ""}})}),
       {60, 20, 60, 100}},
      {"matchLabelKeys ANDed with LabelSelector when LabelSelector isn't "
       "empty",
       WithConstraints(MakePod()
                           .Name("p")
                           .Label("foo", "")
                           .Label("bar", "")
                           .Label("baz", "")
                           .Obj(),
                       {Soft(1, "zone", &kFoo), bar_baz}),
       zoned_abcd,
       {},
       Concat({Pods("node-a", 1, {{"foo", ""}}),
               Pods("node-b", 1, {{"foo", ""}, {"bar", ""}, {"baz", ""}}),
               Pods("node-c", 1, {{"foo", ""}}),
               Pods("node-c", 1, {{"bar", ""}}),
               Pods("node-c", 1, {{"bar", ""}, {"baz", ""}})}),
       {60, 20, 60, 100}},
  };
  RunScoreCases(PodTopologySpread(PodTopologySpread::Args()), cases);
}

// kube-scheduler's TestPreScoreStateEmptyNodes cases that score: the
// system defaults spread a pod of a Service by hostname and zone; a node
// without a zone still spreads by hostname, and a List default constraint
// needs every key.
TEST(PodTopologySpreadTest, DefaultConstraintsScore) {
  pb::Pod pod = MakePod().Name("p").Label("foo", "").Obj();
  (*pod.mutable_workload_selectors()
        ->add_services()
        ->mutable_match_labels())["foo"] = "";
  const std::vector<pb::Node> nodes = {
      N("node-a", {{kZone, "z1"}, {kHostname, "node-a"}}),
      N("node-b", {{kZone, "z1"}, {kHostname, "node-b"}}),
      N("node-c", {{kHostname, "node-c"}})};
  const std::vector<ExistingPod> pods =
      Concat({Pods("node-a", 3), Pods("node-b", 1), Pods("node-c", 2)});
  // System: hostname weight log(3+2), zone weight log(2+2) (z1 and the
  // zoneless ""). node-a: 3*log5+2 + 4*log4+4 = 16.37; node-b: 1*log5+2 +
  // 4*log4+4 = 13.16; node-c (no zone label): 2*log5+2 = 5.22.
  RunScoreCases(
      PodTopologySpread(PodTopologySpread::Args()),
      {{"system defaults", pod, nodes, {}, pods, {31, 50, 100}, {16, 13, 5}}});
  // List with the same constraints: node-c, without a zone, is ignored.
  // Hostname weight log(2+2), zone weight log(1+2): node-a 3*log4+2 +
  // 4*log3+4 = 14.55, node-b 1*log4+2 + 4*log3+4 = 11.78.
  PodTopologySpread::Args list;
  list.system_defaulting = false;
  list.default_constraints = {Soft(3, kHostname, nullptr),
                              Soft(5, kZone, nullptr)};
  RunScoreCases(
      PodTopologySpread(list),
      {{"list defaults", pod, nodes, {}, pods, {80, 100, 0}, {15, 12, 0}}});
  // No Service, no controller: no default constraint, PreScore skips.
  const PodTopologySpread pl{PodTopologySpread::Args()};
  pb::Pod alone = MakePod().Name("p").Label("foo", "").Obj();
  Cycle cycle(pl, ClusterOf(nodes, pods), alone);
  EXPECT_EQ(cycle.plan.queries_size(), 0);
  EXPECT_EQ(pl.PreScore(cycle.state, alone, cycle.answered.All()).code,
            Code::kSkip);
}

TEST(PodTopologySpreadTest, DefaultSelectorMergesServicesAndController) {
  pb::WorkloadSelectors w;
  (*w.add_services()->mutable_match_labels())["app"] = "web";
  (*w.add_services()->mutable_match_labels())["tier"] = "front";
  w.set_controller_kind("ReplicaSet");
  pb::LabelSelectorRequirement* r =
      w.mutable_controller()->add_match_expressions();
  r->set_key("rev");
  r->set_operator_("In");
  r->add_values("1");
  (*w.mutable_controller()->mutable_match_labels())["app"] = "web";
  pb::LabelSelector s = DefaultSelector(w);
  model::LabelMap labels;
  labels["app"] = "web";
  labels["tier"] = "front";
  labels["rev"] = "1";
  EXPECT_TRUE(model::LabelSelectorMatches(s, labels));
  labels["rev"] = "2";
  EXPECT_FALSE(model::LabelSelectorMatches(s, labels));
  // A ReplicationController's selector is a label set merged in.
  w.set_controller_kind("ReplicationController");
  s = DefaultSelector(w);
  EXPECT_TRUE(model::LabelSelectorMatches(s, labels));
  EXPECT_EQ(s.match_labels_size(), 2);
  // Nothing selects the pod: no requirement.
  EXPECT_TRUE(model::IsEmptySelector(DefaultSelector({})));
  // A controller of another kind adds nothing.
  pb::WorkloadSelectors other;
  other.set_controller_kind("Job");
  (*other.mutable_controller()->mutable_match_labels())["a"] = "b";
  EXPECT_TRUE(model::IsEmptySelector(DefaultSelector(other)));
}

// NormalizeScore gives the nodes PreScore ignored 0 and leaves them out of
// the min and max, which needs their names.
TEST(PodTopologySpreadTest, NormalizeNeedsNamesOnlyWhenNodesAreIgnored) {
  const PodTopologySpread pl = ListDefaulting();
  CycleState state;
  PodTopologySpread::PreScoreState s;
  s.constraints.push_back({1, 1.0, "zone"});
  s.ignored.insert("b");
  state.Write(PodTopologySpread::kPreScoreStateKey, s);
  const pb::Pod pod = MakePod().Obj();
  std::vector<int64_t> scores = {4, 0, 2};
  std::vector<absl::string_view> names = {"a", "b", "c"};
  ASSERT_TRUE(
      pl.NormalizeScoreByNode(state, pod, names, absl::MakeSpan(scores)).ok());
  EXPECT_THAT(scores, ElementsAre(50, 0, 100));
  scores = {4, 0, 2};
  PluginStatus no_names =
      pl.NormalizeScoreByNode(state, pod, {}, absl::MakeSpan(scores));
  EXPECT_EQ(no_names.code, Code::kError);
  s.ignored.clear();
  state.Write(PodTopologySpread::kPreScoreStateKey, s);
  scores = {4, 0, 2};
  ASSERT_TRUE(
      pl.NormalizeScoreByNode(state, pod, {}, absl::MakeSpan(scores)).ok());
  EXPECT_THAT(scores, ElementsAre(0, 100, 50));
}

// Counts near the int64 limit: the skew and the weighted score saturate
// (in int64 the skew wraps to a fit; the score's conversion from float64
// was undefined), and normalising takes score * 100 in 128 bits.
TEST(PodTopologySpreadTest, HugeCountsSaturate) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const PodTopologySpread pl = ListDefaulting();
  const pb::Pod pod = MakePod().Obj();
  pb::ClusterData data;
  data.add_answers();
  pb::Node node = N("a", {{"zone", "z1"}});
  node.add_query_counts(kMax);
  const std::vector<const pb::Node*> ptrs = {&node};
  CycleState state;
  state.BindCluster(&data, {{std::string(PodTopologySpread::kName), 0}});

  PodTopologySpread::PreFilterState f;
  f.constraints.push_back({1, 0, true, "zone"});
  state.Write(PodTopologySpread::kPreFilterStateKey, f);
  EXPECT_EQ(pl.Filter(state, pod, node).code, Code::kUnschedulable);

  PodTopologySpread::PreScoreState s;
  s.constraints.push_back({1, 10.0, "zone"});
  state.Write(PodTopologySpread::kPreScoreStateKey, s);
  std::vector<int64_t> scores(1);
  ASSERT_TRUE(pl.Score(state, pod, ptrs, absl::MakeSpan(scores)).ok());
  EXPECT_THAT(scores, ElementsAre(kMax));

  scores = {kMax, kMax / 2, 0};
  ASSERT_TRUE(
      pl.NormalizeScoreByNode(state, pod, {}, absl::MakeSpan(scores)).ok());
  EXPECT_THAT(scores, ElementsAre(0, 50, 100));
}

// maxSkew - 1 is added to scores: state with a maxSkew below 1 comes from
// no pod the API server accepted.
TEST(PodTopologySpreadTest, StatesRefuseMaxSkewBelowOne) {
  EXPECT_FALSE(PodTopologySpread::PreFilterState::Decode("0 0 0 zone").ok());
  EXPECT_FALSE(PodTopologySpread::PreScoreState::Decode(
                   "1\n-2147483648 3ff0000000000000 zone")
                   .ok());
  EXPECT_TRUE(
      PodTopologySpread::PreScoreState::Decode("1\n1 3ff0000000000000 zone")
          .ok());
}

TEST(PodTopologySpreadTest, StatesRoundTrip) {
  PodTopologySpread::PreFilterState f;
  f.constraints.push_back({2, 2147483647, true, "zone"});
  f.constraints.push_back({1, 0, false, kHostname});
  absl::StatusOr<PodTopologySpread::PreFilterState> f2 =
      PodTopologySpread::PreFilterState::Decode(f.Encode());
  ASSERT_TRUE(f2.ok()) << f2.status();
  ASSERT_EQ(f2->constraints.size(), 2u);
  EXPECT_EQ(f2->constraints[0].min_match, 2147483647);
  EXPECT_TRUE(f2->constraints[0].self_match);
  EXPECT_EQ(f2->constraints[1].topology_key, kHostname);

  PodTopologySpread::PreScoreState s;
  s.constraints.push_back({3, 1.0986122886681098, "zone"});
  s.ignored = {"n1", "n2"};
  absl::StatusOr<PodTopologySpread::PreScoreState> s2 =
      PodTopologySpread::PreScoreState::Decode(s.Encode());
  ASSERT_TRUE(s2.ok()) << s2.status();
  ASSERT_EQ(s2->constraints.size(), 1u);
  EXPECT_EQ(s2->constraints[0].weight, 1.0986122886681098);
  EXPECT_EQ(s2->ignored, s.ignored);
  EXPECT_FALSE(PodTopologySpread::PreScoreState::Decode("2\n1 x zone").ok());
  EXPECT_FALSE(PodTopologySpread::PreFilterState::Decode("1 2 3").ok());
}

// ------------------------------------------------------------ args

absl::StatusOr<PodTopologySpread::Args> Parse(const std::string& yaml) {
  return PodTopologySpread::ParseArgs(
      model::YamlField(YAML::Load(yaml), "args"));
}

TEST(PodTopologySpreadTest, ArgsDefaultToSystem) {
  absl::StatusOr<PodTopologySpread::Args> a = Parse("{}");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(a->system_defaulting);
  PodTopologySpread pl(*a);
  EXPECT_THAT(pl.PodDataNeeded(), ElementsAre(pb::POD_DATA_WORKLOAD_SELECTORS));
  a = Parse(R"(
defaultingType: List
defaultConstraints:
- {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}
- {maxSkew: 2, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway,
   nodeTaintsPolicy: Honor, minDomains: 2, matchLabelKeys: [rev]}
)");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_FALSE(a->system_defaulting);
  ASSERT_EQ(a->default_constraints.size(), 2u);
  EXPECT_EQ(a->default_constraints[1].node_taints_policy(), "Honor");
  EXPECT_EQ(a->default_constraints[1].min_domains(), 2);
  // List with no constraints: no default spreading, no workload data.
  a = Parse("{defaultingType: List}");
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(PodTopologySpread(*a).PodDataNeeded().empty());
}

// ValidatePodTopologySpreadArgs' errors, naming the field.
TEST(PodTopologySpreadTest, ArgsErrorsAsUpstream) {
  struct Case {
    std::string yaml;
    std::string error;
  } cases[] = {
      {"{defaultingType: Foo}",
       "args.defaultingType: Unsupported value: \"Foo\": supported values: "
       "\"System\", \"List\""},
      {"{defaultConstraints: [{maxSkew: 1, topologyKey: zone, "
       "whenUnsatisfiable: DoNotSchedule}]}",
       "args.defaultingType: Invalid value: \"System\": when "
       ".defaultConstraints are not empty"},
      {"{defaultingType: List, defaultConstraints: [{maxSkew: 0, topologyKey: "
       "zone, whenUnsatisfiable: DoNotSchedule}]}",
       "args.defaultConstraints[0].maxSkew: Invalid value: 0: not in valid "
       "range (0, inf)"},
      {"{defaultingType: List, defaultConstraints: [{maxSkew: 1, "
       "whenUnsatisfiable: DoNotSchedule}]}",
       "args.defaultConstraints[0].topologyKey: Required value: can not be "
       "empty"},
      {"{defaultingType: List, defaultConstraints: [{maxSkew: 1, topologyKey: "
       "\"a b\", whenUnsatisfiable: DoNotSchedule}]}",
       "args.defaultConstraints[0].topologyKey: Invalid value: \"a b\": "},
      {"{defaultingType: List, defaultConstraints: [{maxSkew: 1, topologyKey: "
       "zone}]}",
       "args.defaultConstraints[0].whenUnsatisfiable: Required value: can not "
       "be empty"},
      {"{defaultingType: List, defaultConstraints: [{maxSkew: 1, topologyKey: "
       "zone, whenUnsatisfiable: Later}]}",
       "args.defaultConstraints[0].whenUnsatisfiable: Unsupported value: "
       "\"Later\": supported values: \"DoNotSchedule\", \"ScheduleAnyway\""},
      {"{defaultingType: List, defaultConstraints: [{maxSkew: 1, topologyKey: "
       "zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {}}]}",
       "args.defaultConstraints[0].labelSelector: Forbidden: constraint must "
       "not define a selector, as they deduced for each pod"},
      {"{defaultingType: List, defaultConstraints: [{maxSkew: 1, topologyKey: "
       "zone, whenUnsatisfiable: DoNotSchedule}, {maxSkew: 2, topologyKey: "
       "zone, whenUnsatisfiable: DoNotSchedule}]}",
       "args.defaultConstraints[1]: Duplicate value: \"{zone, "
       "DoNotSchedule}\""},
      {"{defaultConstraints: [{maxSkew: one}]}",
       "args.defaultConstraints[0].maxSkew: expected an integer"},
      {"{defaultConstraints: [{skew: 1}]}",
       "args.defaultConstraints[0].skew: unknown field \"skew\""},
      {"{kind: NodeAffinityArgs}",
       "args.kind: expected PodTopologySpreadArgs, got \"NodeAffinityArgs\""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.yaml);
    absl::StatusOr<PodTopologySpread::Args> a = Parse(c.yaml);
    ASSERT_FALSE(a.ok());
    EXPECT_THAT(std::string(a.status().message()), HasSubstr(c.error));
  }
}

// ------------------------------------------------------------ framework

// Through a profile: the plan says the score needs every feasible node,
// and the framework hands NormalizeScore the node names so that a node
// without the topology key scores 0 (not 100) and stays out of the range.
TEST(PodTopologySpreadTest, ProfileScoresIgnoredNodesZero) {
  absl::StatusOr<model::SchedulerConfig> cfg = model::ParseSchedulerConfig(
      "apiVersion: kubescheduler.config.k8s.io/v1\n"
      "kind: KubeSchedulerConfiguration\n"
      "profiles:\n"
      "- plugins:\n"
      "    multiPoint:\n"
      "      enabled: [{name: PodTopologySpread, weight: 1}]\n"
      "      disabled: [{name: '*'}]\n");
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  absl::StatusOr<std::unique_ptr<framework::Profile>> profile =
      framework::Profile::Create(cfg->profiles[0], *cfg, DefaultRegistry());
  ASSERT_TRUE(profile.ok()) << profile.status();
  const pb::Pod pod = WithConstraints(
      MakePod().Name("p").Label("foo", "").Obj(), {Soft(1, kHostname, &kFoo)});
  const pb::PlanResponse plan = (*profile)->Plan(pod);
  EXPECT_TRUE(plan.score_needs_all_feasible());
  SpreadCluster cluster = ClusterOf(
      {HostNode("node-a"), N("node-b", {{"n", "node-b"}}), HostNode("node-x")},
      Concat({Pods("node-a", 4), Pods("node-b", 2), Pods("node-x", 1)}));
  SpreadCluster::Answered answered = cluster.Answer(pod, plan);
  CycleState state;
  std::vector<const pb::Node*> nodes = answered.All();
  ASSERT_TRUE(
      (*profile)->BindCluster(state, pod, answered.cluster, nodes).ok());
  absl::StatusOr<framework::NodeVerdicts> ev =
      (*profile)->Evaluate(state, pod, nodes, framework::EvaluateMode::kFull);
  ASSERT_TRUE(ev.ok()) << ev.status();
  ASSERT_EQ(ev->scores.plugins.size(), 1u);
  EXPECT_THAT(ev->scores.raw[0], ElementsAre(6, 0, 1));
  EXPECT_THAT(ev->scores.normalized[0], ElementsAre(16, 0, 100));
}

}  // namespace
}  // namespace kscore::plugins
