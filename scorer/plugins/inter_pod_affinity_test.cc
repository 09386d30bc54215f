#include "scorer/plugins/inter_pod_affinity.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scorer/framework/profile.h"
#include "scorer/framework/profile_set.h"
#include "scorer/plugins/registry.h"
#include "scorer/testing/ipa_cluster.h"
#include "yaml-cpp/yaml.h"

namespace kscore::plugins {
namespace {

using framework::Code;
using framework::CycleState;
using framework::PluginStatus;
using ::kscore::testing::AffinityPod;
using ::kscore::testing::IpaCluster;
using ::kscore::testing::Req;
using ::kscore::testing::Selector;
using ::kscore::testing::Term;
using ::kscore::testing::TermExists;
using ::kscore::testing::TermIn;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
namespace pb = framework::pb;

using Labels = std::map<std::string, std::string>;

// One cycle of the plugin for `pod` on `cluster`: the pod's plan, answered
// by the cluster as the shim answers it, bound to the cycle's state.
class Cycle {
 public:
  Cycle(const InterPodAffinity& plugin, const IpaCluster& cluster,
        const pb::Pod& pod)
      : plugin_(plugin), pod_(cluster.Incoming(pod)) {
    plugin_.AddToPlan(pod_, plan_);
    std::tie(data_, nodes_) = cluster.Answer(pod_, plan_);
    absl::flat_hash_map<std::string, int> bases;
    if (plan_.queries_size() > 0)
      bases[std::string(InterPodAffinity::kName)] = 0;
    state_.BindCluster(&data_, std::move(bases));
    for (const pb::Node& n : nodes_) ptrs_.push_back(&n);
  }
  Cycle(const Cycle&) = delete;
  Cycle& operator=(const Cycle&) = delete;

  const pb::PlanResponse& plan() const { return plan_; }
  const std::vector<pb::Node>& nodes() const { return nodes_; }
  CycleState& state() { return state_; }

  PluginStatus PreFilter() { return plugin_.PreFilter(state_, pod_); }
  std::vector<PluginStatus> Filter() {
    std::vector<PluginStatus> out;
    for (const pb::Node& n : nodes_)
      out.push_back(plugin_.Filter(state_, pod_, n));
    return out;
  }
  PluginStatus PreScore() { return plugin_.PreScore(state_, pod_, ptrs_); }
  // Raw scores of every node; empty with a failure added if Score fails.
  std::vector<int64_t> Score() {
    std::vector<int64_t> raw(nodes_.size());
    PluginStatus s = plugin_.Score(state_, pod_, ptrs_, absl::MakeSpan(raw));
    if (!s.ok()) {
      ADD_FAILURE() << "Score: " << ::testing::PrintToString(s.reasons);
      return {};
    }
    return raw;
  }
  std::vector<int64_t> Normalized() {
    std::vector<int64_t> scores = Score();
    EXPECT_TRUE(
        plugin_.NormalizeScore(state_, pod_, absl::MakeSpan(scores)).ok());
    return scores;
  }

 private:
  const InterPodAffinity& plugin_;
  pb::Pod pod_;
  pb::PlanResponse plan_;
  pb::ClusterData data_;
  std::vector<pb::Node> nodes_;
  std::vector<const pb::Node*> ptrs_;
  CycleState state_;
};

// A Filter outcome: code and reason ("" for success).
struct Verdict {
  Code code = Code::kSuccess;
  std::string reason;
  bool operator==(const Verdict&) const = default;
};
void PrintTo(const Verdict& v, std::ostream* os) {
  *os << static_cast<int>(v.code) << " \"" << v.reason << "\"";
}
Verdict Of(const PluginStatus& s) {
  return {s.code, s.reasons.empty() ? "" : s.reasons.front()};
}
std::vector<Verdict> Of(const std::vector<PluginStatus>& statuses) {
  std::vector<Verdict> out;
  for (const PluginStatus& s : statuses) out.push_back(Of(s));
  return out;
}

const Verdict kOk{Code::kSuccess, ""};
const Verdict kAffinity{Code::kUnschedulableAndUnresolvable,
                        std::string(InterPodAffinity::kReasonAffinity)};
const Verdict kAnti{Code::kUnschedulable,
                    std::string(InterPodAffinity::kReasonAntiAffinity)};
const Verdict kExisting{
    Code::kUnschedulable,
    std::string(InterPodAffinity::kReasonExistingAntiAffinity)};

// kube-scheduler's test namespaces (scoring_test.go).
IpaCluster WithTeams() {
  IpaCluster c;
  c.Namespace("subteam1.team1", {{"team", "team1"}})
      .Namespace("subteam2.team1", {{"team", "team1"}})
      .Namespace("subteam1.team2", {{"team", "team2"}})
      .Namespace("subteam2.team2", {{"team", "team2"}});
  return c;
}

// ---------------------------------------------------------------- Filter

struct FilterCase {
  std::string name;
  IpaCluster cluster;
  pb::Pod pod;
  Code pre_filter = Code::kSuccess;
  std::vector<Verdict> want;  // per node, when PreFilter succeeds
};

void PrintTo(const FilterCase& c, std::ostream* os) { *os << c.name; }

class FilterTest : public ::testing::TestWithParam<FilterCase> {};

TEST_P(FilterTest, Verdicts) {
  const FilterCase& c = GetParam();
  InterPodAffinity plugin;
  Cycle cycle(plugin, c.cluster, c.pod);
  PluginStatus pre = cycle.PreFilter();
  ASSERT_EQ(pre.code, c.pre_filter) << ::testing::PrintToString(pre.reasons);
  if (!pre.ok()) return;
  EXPECT_THAT(Of(cycle.Filter()), ElementsAreArray(c.want));
}

// The single node of kube-scheduler's TestRequiredAffinitySingleNode, with
// an existing pod labelled service=securityscan on it. Namespace "" as
// there.
IpaCluster SingleNode(std::vector<pb::Pod> pods) {
  IpaCluster c = WithTeams();
  c.Node("node1", {{"region", "r1"}, {"zone", "z11"}});
  for (pb::Pod& p : pods) c.Place(std::move(p), "node1");
  return c;
}
pb::Pod Securityscan() {
  return AffinityPod("").Label("service", "securityscan").Obj();
}
const Labels kPodLabel{{"service", "securityscan"}};
const Labels kPodLabel2{{"security", "S1"}};

// team in (team1).
pb::LabelSelector Team1() { return Selector({Req("team", "In", {"team1"})}); }

pb::PodAffinityTerm WithNamespaceSelector(pb::PodAffinityTerm t,
                                          pb::LabelSelector ns) {
  *t.mutable_namespace_selector() = std::move(ns);
  return t;
}

std::vector<FilterCase> SingleNodeCases() {
  const pb::PodAffinityTerm securityscan_in_region =
      TermIn("service", "region", {"securityscan", "value2"});
  const pb::PodAffinityTerm antivirus_by_node =
      TermIn("service", "node", {"antivirusscan", "value2"});
  pb::PodAffinityTerm diff_namespace =
      Term("", Selector({Req("service", "In", {"securityscan", "value2"})}));
  diff_namespace.add_namespaces("DiffNameSpace");
  const pb::PodAffinityTerm operators_ok[] = {
      Term("region", Selector({Req("service", "Exists"),
                               Req("wrongkey", "DoesNotExist")})),
      Term("region", Selector({Req("service", "In", {"securityscan"}),
                               Req("service", "NotIn", {"WrongValue"})}))};
  const pb::PodAffinityTerm operators_anded[] = {
      operators_ok[0],
      Term("region", Selector({Req("service", "In", {"securityscan2"}),
                               Req("service", "NotIn", {"WrongValue"})}))};
  const pb::PodAffinityTerm team1_by_region = WithNamespaceSelector(
      TermIn("service", "region", {"securityscan", "value2"}), Team1());
  const pb::PodAffinityTerm team1_by_zone = WithNamespaceSelector(
      TermIn("service", "zone", {"securityscan", "value2"}), Team1());
  const pb::PodAffinityTerm all_namespaces_by_zone = WithNamespaceSelector(
      TermIn("service", "zone", {"securityscan", "value2"}),
      pb::LabelSelector());
  auto in_ns = [](const std::string& ns) {
    return AffinityPod(ns).Labels(kPodLabel).Obj();
  };
  return {
      {"no required terms, no pods: Skip",
       SingleNode({}),
       pb::Pod(),
       Code::kSkip,
       {}},
      {"affinity In matches the existing pod",
       SingleNode({Securityscan()}),
       AffinityPod("")
           .Labels(kPodLabel2)
           .Affinity(securityscan_in_region)
           .Obj(),
       Code::kSuccess,
       {kOk}},
      {"affinity NotIn matches the existing pod",
       SingleNode({Securityscan()}),
       AffinityPod("")
           .Labels(kPodLabel2)
           .Affinity(
               Term("region", Selector({Req("service", "NotIn",
                                            {"securityscan3", "value3"})})))
           .Obj(),
       Code::kSuccess,
       {kOk}},
      {"affinity in another namespace (and no topology key)",
       SingleNode({AffinityPod("ns").Labels(kPodLabel).Obj()}),
       AffinityPod("").Labels(kPodLabel2).Affinity(diff_namespace).Obj(),
       Code::kSuccess,
       {kAffinity}},
      {"affinity selector matches no pod, no topology key",
       SingleNode({Securityscan()}),
       AffinityPod("")
           .Labels(kPodLabel)
           .Affinity(TermIn("service", "", {"antivirusscan", "value2"}))
           .Obj(),
       Code::kSuccess,
       {kAffinity}},
      {"several terms with different operators all match",
       SingleNode({Securityscan()}),
       AffinityPod("")
           .Labels(kPodLabel2)
           .Affinity(operators_ok[0])
           .Affinity(operators_ok[1])
           .Obj(),
       Code::kSuccess,
       {kOk}},
      {"requirements are ANDed: one fails",
       SingleNode({Securityscan()}),
       AffinityPod("")
           .Labels(kPodLabel2)
           .Affinity(operators_anded[0])
           .Affinity(operators_anded[1])
           .Obj(),
       Code::kSuccess,
       {kAffinity}},
      {"affinity and anti-affinity (key the node lacks) both satisfied",
       SingleNode({Securityscan()}),
       AffinityPod("")
           .Labels(kPodLabel2)
           .Affinity(securityscan_in_region)
           .Anti(antivirus_by_node)
           .Obj(),
       Code::kSuccess,
       {kOk}},
      {"and the existing pod's anti-affinity too",
       SingleNode(
           {AffinityPod("").Labels(kPodLabel).Anti(antivirus_by_node).Obj()}),
       AffinityPod("")
           .Labels(kPodLabel2)
           .Affinity(securityscan_in_region)
           .Anti(antivirus_by_node)
           .Obj(),
       Code::kSuccess,
       {kOk}},
      {"affinity satisfied, anti-affinity not",
       SingleNode({Securityscan()}),
       AffinityPod("")
           .Labels(kPodLabel2)
           .Affinity(securityscan_in_region)
           .Anti(TermIn("service", "zone", {"securityscan", "value2"}))
           .Obj(),
       Code::kSuccess,
       {kAnti}},
      {"the existing pod's anti-affinity rejects",
       SingleNode(
           {AffinityPod("")
                .Labels(kPodLabel)
                .Anti(TermIn("service", "zone", {"securityscan", "value2"}))
                .Obj()}),
       AffinityPod("")
           .Labels(kPodLabel)
           .Affinity(securityscan_in_region)
           .Anti(antivirus_by_node)
           .Obj(),
       Code::kSuccess,
       {kExisting}},
      {"pod matching neither its own term nor the pods: rejected",
       [] {
         IpaCluster c = SingleNode({});
         // On a node the cluster does not have: not counted.
         c.Place(AffinityPod("").Labels(kPodLabel).Obj(), "node2");
         return c;
       }(),
       AffinityPod("")
           .Labels(kPodLabel)
           .Affinity(Term(
               "region",
               Selector({Req("service", "NotIn", {"securityscan", "value2"})})))
           .Obj(),
       Code::kSuccess,
       {kAffinity}},
      {"existing anti-affinity, pod without terms",
       SingleNode(
           {AffinityPod("")
                .Labels(kPodLabel)
                .Anti(TermIn("service", "zone", {"securityscan", "value2"}))
                .Obj()}),
       AffinityPod("").Labels(kPodLabel).Obj(),
       Code::kSuccess,
       {kExisting}},
      {"existing anti-affinity not matching: Skip",
       SingleNode(
           {AffinityPod("")
                .Labels(kPodLabel)
                .Anti(Term("zone", Selector({Req("service", "NotIn",
                                                 {"securityscan", "value2"})})))
                .Obj()}),
       AffinityPod("").Labels(kPodLabel).Obj(),
       Code::kSkip,
       {}},
      {"own anti-affinity rejects before the existing pod's",
       SingleNode({AffinityPod("")
                       .Labels(kPodLabel2)
                       .Anti(TermExists("security", "zone"))
                       .Obj()}),
       AffinityPod("")
           .Labels(kPodLabel)
           .Anti(TermExists("service", "region"))
           .Anti(TermExists("security", "region"))
           .Obj(),
       Code::kSuccess,
       {kAnti}},
      {"symmetry a1",
       SingleNode({AffinityPod("")
                       .Labels(kPodLabel2)
                       .Anti(TermExists("security", "zone"))
                       .Obj()}),
       AffinityPod("")
           .Labels(kPodLabel)
           .Anti(TermExists("service", "zone"))
           .Anti(TermExists("security", "zone"))
           .Obj(),
       Code::kSuccess,
       {kAnti}},
      {"symmetry a2",
       SingleNode({AffinityPod("")
                       .Labels(kPodLabel)
                       .Anti(TermExists("service", "zone"))
                       .Anti(TermExists("security", "zone"))
                       .Obj()}),
       AffinityPod("")
           .Labels(kPodLabel2)
           .Anti(TermExists("security", "zone"))
           .Obj(),
       Code::kSuccess,
       {kExisting}},
      {"symmetry b1",
       SingleNode({AffinityPod("")
                       .Labels({{"def", ""}, {"xyz", ""}})
                       .Anti(TermExists("abc", "zone"))
                       .Anti(TermExists("def", "zone"))
                       .Obj()}),
       AffinityPod("")
           .Labels({{"abc", ""}, {"xyz", ""}})
           .Anti(TermExists("abc", "zone"))
           .Anti(TermExists("def", "zone"))
           .Obj(),
       Code::kSuccess,
       {kAnti}},
      {"symmetry b2",
       SingleNode({AffinityPod("")
                       .Labels({{"abc", ""}, {"xyz", ""}})
                       .Anti(TermExists("abc", "zone"))
                       .Anti(TermExists("def", "zone"))
                       .Obj()}),
       AffinityPod("")
           .Labels({{"def", ""}, {"xyz", ""}})
           .Anti(TermExists("abc", "zone"))
           .Anti(TermExists("def", "zone"))
           .Obj(),
       Code::kSuccess,
       {kAnti}},
      {"invalid affinity label value fails PreFilter",
       SingleNode({}),
       AffinityPod("")
           .Labels(kPodLabel)
           .Affinity(TermIn("service", "region", {"{{.bad-value.}}"}))
           .Obj(),
       Code::kUnschedulableAndUnresolvable,
       {}},
      {"affinity with a matching namespace selector",
       SingleNode({in_ns("subteam1.team1")}),
       AffinityPod("").Labels(kPodLabel2).Affinity(team1_by_region).Obj(),
       Code::kSuccess,
       {kOk}},
      {"affinity with a namespace selector matching no pod's namespace",
       SingleNode({in_ns("subteam1.team2")}),
       AffinityPod("").Labels(kPodLabel2).Affinity(team1_by_region).Obj(),
       Code::kSuccess,
       {kAffinity}},
      {"anti-affinity with a matching namespace selector",
       SingleNode({in_ns("subteam2.team1")}),
       AffinityPod("subteam1.team1")
           .Labels(kPodLabel2)
           .Anti(team1_by_zone)
           .Obj(),
       Code::kSuccess,
       {kAnti}},
      {"anti-affinity with an empty namespace selector (all)",
       SingleNode({in_ns("subteam2.team1")}),
       AffinityPod("subteam1.team1")
           .Labels(kPodLabel2)
           .Anti(all_namespaces_by_zone)
           .Obj(),
       Code::kSuccess,
       {kAnti}},
      {"anti-affinity with a namespace selector matching no pod's namespace",
       SingleNode({in_ns("subteam1.team2")}),
       AffinityPod("subteam1.team1")
           .Labels(kPodLabel2)
           .Anti(team1_by_zone)
           .Obj(),
       Code::kSuccess,
       {kOk}},
  };
}

INSTANTIATE_TEST_SUITE_P(SingleNode, FilterTest,
                         ::testing::ValuesIn(SingleNodeCases()));

const Labels kChina{{"region", "China"}};
const Labels kChinaAz1{{"region", "China"}, {"az", "az1"}};
const Labels kIndia{{"region", "India"}};

IpaCluster Nodes(std::vector<std::pair<std::string, Labels>> nodes) {
  IpaCluster c;
  for (auto& [name, labels] : nodes) c.Node(name, labels);
  return c;
}
IpaCluster RegionZoneAB(const std::string& zone_b) {
  return Nodes(
      {{"nodeA", {{"region", "r1"}, {"zone", "z1"}, {"hostname", "nodeA"}}},
       {"nodeB", {{"region", "r1"}, {"zone", zone_b}, {"hostname", "nodeB"}}}});
}

std::vector<FilterCase> MultipleNodesCases() {
  std::vector<FilterCase> out;
  auto add = [&](std::string name, IpaCluster c, pb::Pod pod,
                 std::vector<Verdict> want, Code pre = Code::kSuccess) {
    out.push_back(
        {std::move(name), std::move(c), std::move(pod), pre, std::move(want)});
  };
  auto place = [](IpaCluster c,
                  std::vector<std::pair<pb::Pod, std::string>> p) {
    for (auto& [pod, node] : p) c.Place(pod, node);
    return c;
  };
  const pb::Pod foo_bar = AffinityPod("").Label("foo", "bar").Obj();
  add("every node of the matching pod's region",
      place(Nodes({{"node1", kChina}, {"node2", kChinaAz1}, {"node3", kIndia}}),
            {{foo_bar, "node1"}}),
      AffinityPod("").Affinity(TermIn("foo", "region", {"bar"})).Obj(),
      {kOk, kOk, kAffinity});
  const pb::Pod first =
      AffinityPod("")
          .Labels({{"foo", "bar"}, {"service", "securityscan"}})
          .Affinity(TermIn("foo", "zone", {"bar"}))
          .Affinity(TermIn("service", "zone", {"securityscan"}))
          .Obj();
  add("the first pod of a group goes anywhere with the topology keys",
      place(Nodes({{"nodeA", {{"zone", "az1"}, {"hostname", "h1"}}},
                   {"nodeB", {{"zone", "az2"}, {"hostname", "h2"}}}}),
            {{foo_bar, "nodeA"}}),
      first, {kOk, kOk});
  add("the first pod of a group needs the topology keys",
      place(Nodes({{"nodeA", {{"zoneLabel", "az1"}, {"hostname", "h1"}}},
                   {"nodeB", {{"zoneLabel", "az2"}, {"hostname", "h2"}}}}),
            {{foo_bar, "nodeA"}}),
      first, {kAffinity, kAffinity});
  const pb::Pod foo_abc = AffinityPod("").Label("foo", "abc").Obj();
  add("anti-affinity rejects the whole region",
      place(Nodes({{"nodeA", {{"region", "r1"}, {"hostname", "nodeA"}}},
                   {"nodeB", {{"region", "r1"}, {"hostname", "nodeB"}}}}),
            {{foo_abc, "nodeA"}}),
      AffinityPod("").Anti(TermIn("foo", "region", {"abc"})).Obj(),
      {kAnti, kAnti});
  add("anti-affinity: any term matching rejects",
      place(RegionZoneAB("z2"),
            {{AffinityPod("")
                  .Labels({{"foo", "abc"}, {"service", "securityscan"}})
                  .Obj(),
              "nodeA"}}),
      AffinityPod("")
          .Anti(TermIn("foo", "region", {"abc"}))
          .Anti(TermIn("service", "zone", {"securityscan"}))
          .Obj(),
      {kAnti, kAnti});
  add("anti-affinity: another region is fine",
      place(Nodes({{"nodeA", kChina}, {"nodeB", kChinaAz1}, {"nodeC", kIndia}}),
            {{foo_abc, "nodeA"}}),
      AffinityPod("").Anti(TermIn("foo", "region", {"abc"})).Obj(),
      {kAnti, kAnti, kOk});
  add("anti-affinity across namespaces",
      place(Nodes({{"nodeA", kChina}, {"nodeB", kChinaAz1}, {"nodeC", kIndia}}),
            {{AffinityPod("NS1").Label("foo", "bar").Obj(), "nodeA"},
             {AffinityPod("NS2").Anti(TermIn("foo", "region", {"123"})).Obj(),
              "nodeC"}}),
      AffinityPod("NS1")
          .Label("foo", "123")
          .Anti(TermIn("foo", "region", {"bar"}))
          .Obj(),
      {kAnti, kAnti, kOk});
  add("existing term whose topology key no node has: Skip",
      place(
          RegionZoneAB("z1"),
          {{AffinityPod("").Anti(TermExists("foo", "invalid-node-label")).Obj(),
            "nodeA"}}),
      AffinityPod("").Label("foo", "").Obj(), {}, Code::kSkip);
  add("own term whose topology key no node has",
      place(RegionZoneAB("z1"),
            {{AffinityPod("").Label("foo", "").Obj(), "nodeA"}}),
      AffinityPod("").Anti(TermExists("foo", "invalid-node-label")).Obj(),
      {kOk, kOk});
  add("existing pods' terms reject every node",
      place(
          RegionZoneAB("z2"),
          {{AffinityPod("").Anti(TermExists("foo", "zone")).Obj(), "nodeA"},
           {AffinityPod("").Anti(TermExists("bar", "region")).Obj(), "nodeA"}}),
      AffinityPod("").Labels({{"foo", ""}, {"bar", ""}}).Obj(),
      {kExisting, kExisting});
  add("own terms reject every node",
      place(RegionZoneAB("z2"),
            {{AffinityPod("").Label("foo", "").Obj(), "nodeA"},
             {AffinityPod("").Label("bar", "").Obj(), "nodeB"}}),
      AffinityPod("")
          .Anti(TermExists("foo", "zone"))
          .Anti(TermExists("bar", "region"))
          .Obj(),
      {kAnti, kAnti});
  add("existing: selector and topology key must both match",
      place(RegionZoneAB("z2"),
            {{AffinityPod("")
                  .Anti(TermExists("foo", "invalid-node-label"))
                  .Anti(TermExists("bar", "zone"))
                  .Obj(),
              "nodeA"}}),
      AffinityPod("").Labels({{"foo", ""}, {"bar", ""}}).Obj(),
      {kExisting, kOk});
  add("own: selector and topology key must both match",
      place(RegionZoneAB("z2"),
            {{AffinityPod("").Labels({{"foo", ""}, {"bar", ""}}).Obj(),
              "nodeA"}}),
      AffinityPod("")
          .Anti(TermExists("foo", "invalid-node-label"))
          .Anti(TermExists("bar", "zone"))
          .Obj(),
      {kAnti, kOk});
  add("existing: both terms valid",
      place(RegionZoneAB("z2"), {{AffinityPod("")
                                      .Anti(TermExists("foo", "region"))
                                      .Anti(TermExists("bar", "zone"))
                                      .Obj(),
                                  "nodeA"}}),
      AffinityPod("").Labels({{"foo", ""}, {"bar", ""}}).Obj(),
      {kExisting, kExisting});
  add("own: both terms valid",
      place(RegionZoneAB("z2"),
            {{AffinityPod("").Labels({{"foo", ""}, {"bar", ""}}).Obj(),
              "nodeA"}}),
      AffinityPod("")
          .Anti(TermExists("foo", "region"))
          .Anti(TermExists("bar", "zone"))
          .Obj(),
      {kAnti, kAnti});
  add("existing pods on two nodes leave the third",
      place(Nodes({{"nodeA", {{"region", "r1"}, {"zone", "z1"}}},
                   {"nodeB", {{"region", "r1"}, {"zone", "z2"}}},
                   {"nodeC", {{"region", "r1"}, {"zone", "z3"}}}}),
            {{AffinityPod("")
                  .Anti(TermExists("foo", "zone"))
                  .Anti(TermExists("labelA", "zone"))
                  .Obj(),
              "nodeA"},
             {AffinityPod("")
                  .Anti(TermExists("bar", "zone"))
                  .Anti(TermExists("labelB", "zone"))
                  .Obj(),
              "nodeB"}}),
      AffinityPod("").Labels({{"foo", ""}, {"bar", ""}}).Obj(),
      {kExisting, kExisting, kOk});
  add("affinity: one pod matches every term",
      place(RegionZoneAB("z1"),
            {{AffinityPod("").Labels({{"foo", ""}, {"bar", ""}}).Obj(),
              "nodeA"}}),
      AffinityPod("")
          .Affinity(TermExists("foo", "region"))
          .Affinity(TermExists("bar", "zone"))
          .Obj(),
      {kOk, kOk});
  add("affinity: terms matched by different pods do not count",
      place(RegionZoneAB("z2"),
            {{AffinityPod("").Label("foo", "").Obj(), "nodeA"},
             {AffinityPod("").Label("bar", "").Obj(), "nodeB"}}),
      AffinityPod("")
          .Affinity(TermExists("foo", "region"))
          .Affinity(TermExists("bar", "zone"))
          .Obj(),
      {kAffinity, kAffinity});
  const std::string hostname = "kubernetes.io/hostname";
  IpaCluster hosts = Nodes(
      {{"nodeA", {{hostname, "nodeA"}}}, {"nodeB", {{hostname, "nodeB"}}}});
  add("affinity by hostname",
      place(hosts, {{AffinityPod("").Label("foo", "").Obj(), "nodeA"}}),
      AffinityPod("").Affinity(TermExists("foo", hostname)).Obj(),
      {kOk, kAffinity});
  add("anti-affinity by hostname",
      place(hosts, {{AffinityPod("").Label("foo", "").Obj(), "nodeA"}}),
      AffinityPod("").Anti(TermExists("foo", hostname)).Obj(), {kAnti, kOk});
  return out;
}

INSTANTIATE_TEST_SUITE_P(MultipleNodes, FilterTest,
                         ::testing::ValuesIn(MultipleNodesCases()));

}  // namespace
}  // namespace kscore::plugins
