#include "scorer/plugins/inter_pod_affinity.h"

#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
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
using ::kscore::testing::LabelReq;
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
  // `also` adds existing-term kinds to the plan, as another plugin of the
  // profile may.
  Cycle(const InterPodAffinity& plugin, const IpaCluster& cluster,
        const pb::Pod& pod, std::vector<pb::TermKind> also = {})
      : plugin_(plugin), pod_(cluster.Incoming(pod)) {
    plugin_.AddToPlan(pod_, plan_);
    for (pb::TermKind k : also) plan_.add_existing_terms(k);
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
pb::LabelSelector Team1() {
  return Selector({LabelReq("team", "In", {"team1"})});
}

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
  pb::PodAffinityTerm diff_namespace = Term(
      "", Selector({LabelReq("service", "In", {"securityscan", "value2"})}));
  diff_namespace.add_namespaces("DiffNameSpace");
  const pb::PodAffinityTerm operators_ok[] = {
      Term("region", Selector({LabelReq("service", "Exists"),
                               LabelReq("wrongkey", "DoesNotExist")})),
      Term("region", Selector({LabelReq("service", "In", {"securityscan"}),
                               LabelReq("service", "NotIn", {"WrongValue"})}))};
  const pb::PodAffinityTerm operators_anded[] = {
      operators_ok[0],
      Term("region", Selector({LabelReq("service", "In", {"securityscan2"}),
                               LabelReq("service", "NotIn", {"WrongValue"})}))};
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
           .Affinity(Term("region",
                          Selector({LabelReq("service", "NotIn",
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
           .Affinity(
               Term("region", Selector({LabelReq("service", "NotIn",
                                                 {"securityscan", "value2"})})))
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
       SingleNode({AffinityPod("")
                       .Labels(kPodLabel)
                       .Anti(Term("zone", Selector({LabelReq(
                                              "service", "NotIn",
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

// ---------------------------------------------------------------- Score

struct ScoreCase {
  std::string name;
  IpaCluster cluster;
  pb::Pod pod;
  std::vector<int64_t> want;  // normalised, per node, when PreScore succeeds
  Code pre_score = Code::kSuccess;
  InterPodAffinity::Args args = InterPodAffinity::Args();
};

void PrintTo(const ScoreCase& c, std::ostream* os) { *os << c.name; }

class ScoreTest : public ::testing::TestWithParam<ScoreCase> {};

TEST_P(ScoreTest, NormalizedScores) {
  const ScoreCase& c = GetParam();
  InterPodAffinity plugin(c.args);
  Cycle cycle(plugin, c.cluster, c.pod);
  PluginStatus pre = cycle.PreScore();
  ASSERT_EQ(pre.code, c.pre_score) << ::testing::PrintToString(pre.reasons);
  if (!pre.ok()) return;
  EXPECT_THAT(cycle.Normalized(), ElementsAreArray(c.want));
}

// The affinities of kube-scheduler's scoring_test.go, added to a pod.
using Shape = AffinityPod (*)(AffinityPod);
pb::PodAffinityTerm Security(const std::string& value, const std::string& key) {
  return TermIn("security", key, {value});
}
pb::PodAffinityTerm TeamTerm() {
  pb::PodAffinityTerm t =
      WithNamespaceSelector(Security("S1", "region"), Team1());
  t.add_namespaces("subteam2.team2");
  return t;
}
pb::PodAffinityTerm NotTeam1Term() {
  return WithNamespaceSelector(
      Security("S1", "region"),
      Selector({LabelReq("team", "NotIn", {"team1"})}));
}
AffinityPod StayWithS1InRegion(AffinityPod p) {
  return p.Preferred(5, Security("S1", "region"));
}
AffinityPod StayWithS2InRegion(AffinityPod p) {
  return p.Preferred(6, Security("S2", "region"));
}
AffinityPod Affinity3(AffinityPod p) {
  return p
      .Preferred(8,
                 Term("region", Selector({LabelReq("security", "NotIn", {"S1"}),
                                          LabelReq("security", "In", {"S2"})})))
      .Preferred(
          2, Term("region", Selector({LabelReq("security", "Exists"),
                                      LabelReq("wrongkey", "DoesNotExist")})));
}
AffinityPod HardAffinity(AffinityPod p) {
  return p
      .Affinity(Term("region",
                     Selector({LabelReq("security", "In", {"S1", "value2"})})))
      .Affinity(
          Term("region", Selector({LabelReq("security", "Exists"),
                                   LabelReq("wrongkey", "DoesNotExist")})));
}
AffinityPod AwayFromS1InAz(AffinityPod p) {
  return p.PreferredAnti(5, Security("S1", "az"));
}
AffinityPod AwayFromS2InAz(AffinityPod p) {
  return p.PreferredAnti(5, Security("S2", "az"));
}
AffinityPod StayWithS1InRegionAwayFromS2InAz(AffinityPod p) {
  return p.Preferred(8, Security("S1", "region"))
      .PreferredAnti(5, Security("S2", "az"));
}
AffinityPod AffinityNamespaceSelector(AffinityPod p) {
  return p.Preferred(5, TeamTerm());
}
AffinityPod AntiAffinityNamespaceSelector(AffinityPod p) {
  return p.PreferredAnti(5, TeamTerm());
}
AffinityPod AffinityNegativeNamespaceSelector(AffinityPod p) {
  return p.Preferred(5, NotTeam1Term());
}
AffinityPod AntiAffinityNegativeNamespaceSelector(AffinityPod p) {
  return p.PreferredAnti(5, NotTeam1Term());
}
AffinityPod None(AffinityPod p) { return p; }

// A pod in namespace `ns` labelled security=<security> ("" for none).
pb::Pod Sec(const std::string& security, Shape shape = None,
            const std::string& ns = "") {
  AffinityPod p(ns);
  if (!security.empty()) p.Label("security", security);
  return shape(p).Obj();
}

const Labels kAz1{{"az", "az1"}};
const Labels kAz2{{"az", "az2"}};

IpaCluster Teams(std::vector<std::pair<std::string, Labels>> nodes,
                 std::vector<std::pair<pb::Pod, std::string>> pods) {
  IpaCluster c = WithTeams();
  for (auto& [name, labels] : nodes) c.Node(name, labels);
  for (auto& [pod, node] : pods) c.Place(pod, node);
  return c;
}

std::vector<ScoreCase> PreferredCases() {
  const std::vector<std::pair<std::string, Labels>> china_india_az1 = {
      {"node1", kChina}, {"node2", kIndia}, {"node3", kAz1}};
  const std::vector<std::pair<std::string, Labels>> china_india = {
      {"node1", kChina}, {"node2", kIndia}};
  const std::vector<std::pair<pb::Pod, std::string>> by_team = {
      {Sec("S1", None, "subteam1.team1"), "node1"},
      {Sec("S1", None, "subteam1.team1"), "node1"},
      {Sec("S1", None, "subteam1.team2"), "node1"},
      {Sec("S1", None, "subteam2.team1"), "node2"}};
  const std::vector<std::pair<pb::Pod, std::string>> by_team_and_names = {
      {Sec("S1", None, "subteam1.team1"), "node1"},
      {Sec("S1", None, "subteam1.team1"), "node1"},
      {Sec("S1", None, "subteam2.team2"), "node1"},
      {Sec("S1", None, "subteam2.team1"), "node2"}};
  const std::vector<std::pair<pb::Pod, std::string>> negative = {
      {Sec("S1", None, "subteam1.team1"), "node1"},
      {Sec("S1", None, "subteam1.team1"), "node1"},
      {Sec("S1", None, "subteam1.team2"), "node2"}};
  InterPodAffinity::Args ignore;
  ignore.ignore_preferred_terms_of_existing_pods = true;
  return {
      {"no affinity anywhere: Skip",
       Teams(china_india_az1, {}),
       Sec("S1"),
       {},
       Code::kSkip},
      {"affinity: matching pod in the domain",
       Teams(
           china_india_az1,
           {{Sec("S1"), "node1"}, {Sec("S2"), "node2"}, {Sec("S1"), "node3"}}),
       Sec("S1", StayWithS1InRegion),
       {100, 0, 0}},
      {"affinity: every node of the domain",
       Teams({{"node1", kChina}, {"node2", kChinaAz1}, {"node3", kIndia}},
             {{Sec("S1"), "node1"}}),
       Sec("", StayWithS1InRegion),
       {100, 100, 0}},
      {"affinity: the region with more matching pods",
       Teams({{"node1", kChina},
              {"node2", kIndia},
              {"node3", kChina},
              {"node4", kChina},
              {"node5", kIndia}},
             {{Sec("S2"), "node1"},
              {Sec("S2"), "node1"},
              {Sec("S2"), "node2"},
              {Sec("S2"), "node3"},
              {Sec("S2"), "node4"},
              {Sec("S2"), "node5"}}),
       Sec("S1", StayWithS2InRegion),
       {100, 0, 100, 100, 0}},
      {"affinity: operators, some terms not matching",
       Teams(
           china_india_az1,
           {{Sec("S1"), "node1"}, {Sec("S2"), "node2"}, {Sec("S1"), "node3"}}),
       Sec("S1", Affinity3),
       {20, 100, 0}},
      {"symmetry: existing pods' preferred affinity",
       Teams(china_india_az1, {{Sec("S1", StayWithS1InRegion), "node1"},
                               {Sec("S2", StayWithS2InRegion), "node2"}}),
       Sec("S2"),
       {0, 100, 0}},
      {"symmetry with a namespace selector",
       Teams(china_india_az1, {{Sec("S1", AffinityNamespaceSelector), "node1"},
                               {Sec("S2", StayWithS2InRegion), "node2"}}),
       Sec("S1", None, "subteam1.team1"),
       {100, 0, 0}},
      {"anti-affinity symmetry with a namespace selector",
       Teams(china_india_az1,
             {{Sec("S1", AntiAffinityNamespaceSelector), "node1"},
              {Sec("S2", StayWithS2InRegion), "node2"}}),
       Sec("S1", None, "subteam1.team1"),
       {0, 100, 100}},
      {"symmetry: existing pods' required affinity",
       Teams(china_india_az1, {{Sec("S1", HardAffinity), "node1"},
                               {Sec("S2", HardAffinity), "node2"}}),
       Sec("S1"),
       {100, 100, 0}},
      {"anti-affinity: matching pod in the domain",
       Teams({{"node1", kAz1}, {"node2", kChina}},
             {{Sec("S1"), "node1"}, {Sec("S2"), "node2"}}),
       Sec("S1", AwayFromS1InAz),
       {0, 100}},
      {"anti-affinity: node without the topology key",
       Teams({{"node1", kAz1}, {"node2", kChina}},
             {{Sec("S1"), "node1"}, {Sec("S1"), "node2"}}),
       Sec("S1", AwayFromS1InAz),
       {0, 100}},
      {"anti-affinity: more matching pods",
       Teams(
           {{"node1", kAz1}, {"node2", kIndia}},
           {{Sec("S1"), "node1"}, {Sec("S1"), "node1"}, {Sec("S2"), "node2"}}),
       Sec("S1", AwayFromS1InAz),
       {0, 100}},
      {"anti-affinity symmetry",
       Teams({{"node1", kAz1}, {"node2", kAz2}},
             {{Sec("S1", AwayFromS2InAz), "node1"},
              {Sec("S2", AwayFromS1InAz), "node2"}}),
       Sec("S2"),
       {0, 100}},
      {"affinity and anti-affinity",
       Teams({{"node1", kChina}, {"node2", kAz1}},
             {{Sec("S1"), "node1"}, {Sec("S1"), "node2"}}),
       Sec("S1", StayWithS1InRegionAwayFromS2InAz),
       {100, 0}},
      {"affinity and anti-affinity, same labels",
       Teams({{"node1", kChinaAz1},
              {"node2", kIndia},
              {"node3", kChina},
              {"node4", kChina},
              {"node5", kIndia}},
             {{Sec("S1"), "node1"},
              {Sec("S1"), "node1"},
              {Sec("S1"), "node2"},
              {Sec("S1"), "node3"},
              {Sec("S1"), "node3"},
              {Sec("S1"), "node4"},
              {Sec("S1"), "node5"}}),
       Sec("S1", StayWithS1InRegionAwayFromS2InAz),
       {100, 0, 100, 100, 0}},
      {"affinity, anti-affinity and symmetry",
       Teams({{"node1", kChina},
              {"node2", kAz1},
              {"node3", kIndia},
              {"node4", kAz2}},
             {{Sec("S1"), "node1"},
              {Sec("S2"), "node2"},
              {Sec("", StayWithS1InRegionAwayFromS2InAz), "node3"},
              {Sec("", AwayFromS1InAz), "node4"}}),
       Sec("S1", StayWithS1InRegionAwayFromS2InAz),
       {100, 0, 100, 0}},
      {"same score everywhere: all 0",
       Teams({{"node1", kChina}, {"node2", kChina}},
             {{Sec("S1"), "node1"},
              {Sec("", StayWithS1InRegionAwayFromS2InAz), "node2"}}),
       Sec("S1"),
       {0, 0}},
      {"invalid affinity fails PreScore",
       Teams(china_india, {}),
       AffinityPod("")
           .Preferred(8, TermIn("security", "region", {"{{.bad-value.}}"}))
           .Obj(),
       {},
       Code::kError},
      {"invalid anti-affinity fails PreScore",
       Teams(china_india, {}),
       AffinityPod("")
           .PreferredAnti(5, TermIn("security", "az", {"{{.bad-value.}}"}))
           .Obj(),
       {},
       Code::kError},
      {"affinity by namespace selector",
       Teams(china_india, by_team),
       Sec("S1", AffinityNamespaceSelector, "subteam1.team1"),
       {100, 0}},
      {"affinity by namespace selector and namespaces",
       Teams(china_india, by_team_and_names),
       Sec("S1", AffinityNamespaceSelector, "subteam1.team1"),
       {100, 0}},
      {"anti-affinity by namespace selector",
       Teams(china_india, by_team),
       Sec("S1", AntiAffinityNamespaceSelector, "subteam1.team1"),
       {0, 100}},
      {"anti-affinity by namespace selector and namespaces",
       Teams(china_india, by_team_and_names),
       Sec("S1", AntiAffinityNamespaceSelector, "subteam1.team1"),
       {0, 100}},
      {"affinity by negative namespace selector",
       Teams(china_india, negative),
       Sec("S1", AffinityNegativeNamespaceSelector, "subteam1.team1"),
       {0, 100}},
      {"anti-affinity by negative namespace selector",
       Teams(china_india, negative),
       Sec("S1", AntiAffinityNegativeNamespaceSelector, "subteam1.team1"),
       {100, 0}},
      {"ignorePreferredTermsOfExistingPods: Skip",
       Teams(china_india,
             {{Sec("S1", StayWithS1InRegionAwayFromS2InAz), "node1"},
              {Sec("S2", StayWithS2InRegion), "node2"}}),
       Sec("S2"),
       {},
       Code::kSkip,
       ignore},
      {"existing pods' preferred terms count by default",
       Teams(china_india,
             {{Sec("S1", StayWithS1InRegionAwayFromS2InAz), "node1"},
              {Sec("S2", StayWithS2InRegion), "node2"}}),
       Sec("S2"),
       {0, 100}},
      {"no nodes: Skip", Teams({}, {}), Sec("S2"), {}, Code::kSkip},
  };
}

INSTANTIATE_TEST_SUITE_P(Preferred, ScoreTest,
                         ::testing::ValuesIn(PreferredCases()));

// kube-scheduler's TestPreferredAffinityWithHardPodAffinitySymmetricWeight.
std::vector<ScoreCase> HardWeightCases() {
  pb::PodAffinityTerm hard =
      WithNamespaceSelector(TermIn("service", "region", {"S1"}), Team1());
  hard.add_namespaces("");
  hard.add_namespaces("subteam2.team2");
  const IpaCluster cluster =
      Teams({{"node1", kChina}, {"node2", kIndia}, {"node3", kAz1}},
            {{AffinityPod("").Affinity(hard).Obj(), "node1"},
             {AffinityPod("").Affinity(hard).Obj(), "node2"}});
  auto incoming = [](const std::string& ns) {
    return AffinityPod(ns).Label("service", "S1").Obj();
  };
  InterPodAffinity::Args zero;
  zero.hard_pod_affinity_weight = 0;
  return {
      {"default weight", cluster, incoming(""), {100, 100, 0}},
      {"zero weight: Skip", cluster, incoming(""), {}, Code::kSkip, zero},
      {"no matching namespace: Skip",
       cluster,
       incoming("subteam1.team2"),
       {},
       Code::kSkip},
      {"matching namespace selector",
       cluster,
       incoming("subteam1.team1"),
       {100, 100, 0}},
      {"matching namespaces",
       cluster,
       incoming("subteam2.team2"),
       {100, 100, 0}},
  };
}

INSTANTIATE_TEST_SUITE_P(HardWeight, ScoreTest,
                         ::testing::ValuesIn(HardWeightCases()));

// Existing pods' required affinity never counts with weight 0, even when
// another plugin of the profile has their terms sent.
TEST(InterPodAffinityTest, ZeroHardWeightIgnoresTermsSentAnyway) {
  IpaCluster c = Nodes({{"a", {{"zone", "z1"}}}, {"b", {{"zone", "z2"}}}});
  c.Place(AffinityPod().Affinity(TermIn("app", "zone", {"web"})).Obj(), "a");
  InterPodAffinity::Args zero;
  zero.hard_pod_affinity_weight = 0;
  InterPodAffinity plugin(zero);
  Cycle cycle(plugin, c, AffinityPod().Label("app", "web").Obj(),
              {pb::TERM_KIND_REQUIRED_AFFINITY});
  ASSERT_EQ(cycle.nodes()[0].term_counts_size(), 1);
  EXPECT_EQ(cycle.PreScore().code, Code::kSkip);
}

// Raw scores: weights times pods in the domain, both sides, with
// hardPodAffinityWeight for existing pods' required affinity.
TEST(InterPodAffinityTest, RawScoresAddWeightsTimesPods) {
  IpaCluster c = Nodes({{"a", {{"zone", "z1"}}},
                        {"b", {{"zone", "z1"}}},
                        {"c", {{"zone", "z2"}}},
                        {"d", {}}});
  const pb::Pod web = AffinityPod().Label("app", "web").Obj();
  c.Place(web, "a").Place(web, "b").Place(web, "c");
  // Two pods whose required affinity selects the incoming pod, in z2.
  const pb::Pod fan =
      AffinityPod().Affinity(TermIn("role", "zone", {"db"})).Obj();
  c.Place(fan, "c").Place(fan, "c");
  // One whose preferred anti-affinity does, in z1.
  c.Place(AffinityPod().PreferredAnti(7, TermIn("role", "zone", {"db"})).Obj(),
          "a");
  const pb::Pod pod = AffinityPod()
                          .Label("role", "db")
                          .Preferred(3, TermIn("app", "zone", {"web"}))
                          .Obj();
  InterPodAffinity::Args args;
  args.hard_pod_affinity_weight = 10;
  InterPodAffinity plugin(args);
  Cycle cycle(plugin, c, pod);
  ASSERT_TRUE(cycle.PreScore().ok());
  // z1: 3*2 - 7 = -1; z2: 3*1 + 10*2 = 23; d has no zone.
  EXPECT_THAT(cycle.Score(), ElementsAre(-1, -1, 23, 0));
}

TEST(InterPodAffinityTest, NormalizeScoreIsMinMaxTruncated) {
  InterPodAffinity plugin;
  CycleState state;
  std::vector<int64_t> scores = {-5, 0, 3, 10};
  ASSERT_TRUE(
      plugin.NormalizeScore(state, pb::Pod(), absl::MakeSpan(scores)).ok());
  EXPECT_THAT(scores, ElementsAre(0, 33, 53, 100));
  scores = {4, 4};
  ASSERT_TRUE(
      plugin.NormalizeScore(state, pb::Pod(), absl::MakeSpan(scores)).ok());
  EXPECT_THAT(scores, ElementsAre(0, 0));
}

// Counts near the int64 limit: the weighted sums saturate (in int64 the
// first node's 100 * MAX wraps to -100) and the min-max spread, wider than
// int64, is taken in 128 bits.
TEST(InterPodAffinityTest, HugeCountsSaturateAndNormaliseInRange) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  const pb::Pod pod = AffinityPod()
                          .Preferred(100, TermIn("app", "zone", {"web"}))
                          .PreferredAnti(100, TermIn("app", "zone", {"db"}))
                          .Obj();
  pb::ClusterData data;
  data.add_answers()->set_total(kMax);
  data.add_answers()->set_total(kMax);
  std::vector<pb::Node> nodes(3);
  for (auto [i, affinity, anti] :
       {std::tuple<int, int64_t, int64_t>{0, kMax, 0},
        {1, 0, kMax},
        {2, 1, 0}}) {
    nodes[i].set_name(absl::StrCat("n", i));
    nodes[i].add_query_counts(affinity);
    nodes[i].add_query_counts(anti);
  }
  std::vector<const pb::Node*> ptrs;
  for (const pb::Node& n : nodes) ptrs.push_back(&n);
  CycleState state;
  state.BindCluster(&data, {{std::string(InterPodAffinity::kName), 0}});
  state.Write(InterPodAffinity::kPreScoreStateKey,
              InterPodAffinity::PreScoreState{});
  InterPodAffinity plugin;
  std::vector<int64_t> scores(3);
  ASSERT_TRUE(plugin.Score(state, pod, ptrs, absl::MakeSpan(scores)).ok());
  EXPECT_THAT(scores, ElementsAre(kMax, kMin, 100));
  ASSERT_TRUE(plugin.NormalizeScore(state, pod, absl::MakeSpan(scores)).ok());
  EXPECT_THAT(scores, ElementsAre(100, 0, 50));
}

// ---------------------------------------------------------------- Plan

TEST(InterPodAffinityTest, PlanHasAQueryPerTermInOrder) {
  const pb::Pod pod = AffinityPod("ns")
                          .Affinity(TermExists("a", "zone"))
                          .Affinity(TermExists("b", ""))
                          .Anti(TermExists("c", "host"))
                          .Preferred(2, TermExists("d", "region"))
                          .PreferredAnti(3, TermExists("e", "rack"))
                          .Obj();
  pb::PlanResponse plan;
  InterPodAffinity().AddToPlan(pod, plan);
  ASSERT_EQ(plan.queries_size(), 5);
  std::vector<std::string> keys;
  for (const pb::PodQuery& q : plan.queries()) {
    keys.push_back(q.topology_key());
    EXPECT_TRUE(q.include_terminating());
    EXPECT_FALSE(q.want_domains());
  }
  EXPECT_THAT(keys, ElementsAre("zone", "", "host", "region", "rack"));
  // The affinity query counts pods matching both affinity terms, in the
  // pod's namespace; the term without a key matches no pod.
  ASSERT_EQ(plan.queries(0).all_of_size(), 2);
  EXPECT_THAT(plan.queries(0).all_of(1).namespaces(), ElementsAre("ns"));
  EXPECT_EQ(plan.queries(0).all_of(1).selector().match_expressions(0).key(),
            "b");
  EXPECT_EQ(plan.queries(1).all_of_size(), 0);
  ASSERT_EQ(plan.queries(2).all_of_size(), 1);
  EXPECT_EQ(plan.queries(4).all_of(0).selector().match_expressions(0).key(),
            "e");
  EXPECT_THAT(plan.existing_terms(),
              ElementsAre(pb::TERM_KIND_REQUIRED_ANTI_AFFINITY,
                          pb::TERM_KIND_REQUIRED_AFFINITY,
                          pb::TERM_KIND_PREFERRED_AFFINITY,
                          pb::TERM_KIND_PREFERRED_ANTI_AFFINITY));
  EXPECT_TRUE(plan.node_labels());
  EXPECT_FALSE(plan.score_needs_all_feasible());
}

TEST(InterPodAffinityTest, PlanAsksOnlyWhatThePodAndArgsNeed) {
  auto plan_of = [](const pb::Pod& pod, InterPodAffinity::Args args) {
    pb::PlanResponse plan;
    InterPodAffinity(args).AddToPlan(pod, plan);
    return plan;
  };
  InterPodAffinity::Args ignore;
  ignore.ignore_preferred_terms_of_existing_pods = true;
  const pb::Pod anti = AffinityPod().Anti(TermExists("c", "host")).Obj();
  pb::PlanResponse p = plan_of(anti, ignore);
  EXPECT_THAT(p.existing_terms(),
              ElementsAre(pb::TERM_KIND_REQUIRED_ANTI_AFFINITY));
  // No required affinity: the node's labels are not needed.
  EXPECT_FALSE(p.node_labels());
  // With a preferred term the existing pods' terms count again.
  p = plan_of(AffinityPod().Preferred(1, TermExists("d", "zone")).Obj(),
              ignore);
  EXPECT_EQ(p.existing_terms_size(), 4);
  InterPodAffinity::Args zero;
  zero.hard_pod_affinity_weight = 0;
  p = plan_of(anti, zero);
  EXPECT_THAT(p.existing_terms(),
              ElementsAre(pb::TERM_KIND_REQUIRED_ANTI_AFFINITY,
                          pb::TERM_KIND_PREFERRED_AFFINITY,
                          pb::TERM_KIND_PREFERRED_ANTI_AFFINITY));
  // A malformed selector: nothing (PreFilter reports it).
  p = plan_of(AffinityPod()
                  .Anti(TermExists("c", "host"))
                  .PreferredAnti(1, TermIn("x", "zone", {"{{bad}}"}))
                  .Obj(),
              InterPodAffinity::Args());
  EXPECT_EQ(p.queries_size(), 0);
  EXPECT_EQ(p.existing_terms_size(), 0);
}

TEST(InterPodAffinityTest, MalformedTermsFailPreFilterNamingTheLists) {
  const pb::Pod pod =
      AffinityPod()
          .Affinity(TermIn("service", "region", {"{{.bad-value.}}"}))
          .Affinity(TermIn("service", "region", {"{{.other.}}"}))
          .PreferredAnti(1, Term("zone", Selector({LabelReq("k", "Matches")})))
          .Obj();
  InterPodAffinity plugin;
  Cycle cycle(plugin, IpaCluster(), pod);
  PluginStatus s = cycle.PreFilter();
  EXPECT_EQ(s.code, Code::kUnschedulableAndUnresolvable);
  ASSERT_EQ(s.reasons.size(), 1u);
  EXPECT_THAT(s.reasons[0],
              ::testing::StartsWith("parsing pod: [requiredAffinityTerms: "
                                    "labelSelector.matchExpressions[0]"));
  EXPECT_THAT(s.reasons[0], HasSubstr("{{.bad-value.}}"));
  EXPECT_THAT(s.reasons[0], ::testing::Not(HasSubstr("{{.other.}}")));
  EXPECT_THAT(s.reasons[0], HasSubstr(", preferredAntiAffinityTerms: "
                                      "labelSelector.matchExpressions[0]"));
}

// ---------------------------------------------------------------- details

// Pods being deleted are still in kube-scheduler's snapshot: they count.
TEST(InterPodAffinityTest, PodsBeingDeletedCount) {
  IpaCluster c = Nodes({{"a", {{"zone", "z1"}}}, {"b", {{"zone", "z2"}}}});
  c.Place(AffinityPod().Label("app", "web").Obj(), "a", /*deleting=*/true);
  c.Place(AffinityPod().Anti(TermExists("role", "zone")).Obj(), "b",
          /*deleting=*/true);
  InterPodAffinity plugin;
  Cycle anti(plugin, c,
             AffinityPod().Anti(TermIn("app", "zone", {"web"})).Obj());
  ASSERT_TRUE(anti.PreFilter().ok());
  EXPECT_THAT(Of(anti.Filter()), ElementsAre(kAnti, kOk));
  Cycle affinity(plugin, c,
                 AffinityPod().Affinity(TermIn("app", "zone", {"web"})).Obj());
  ASSERT_TRUE(affinity.PreFilter().ok());
  EXPECT_THAT(Of(affinity.Filter()), ElementsAre(kOk, kAffinity));
  Cycle existing(plugin, c, AffinityPod().Label("role", "x").Obj());
  ASSERT_TRUE(existing.PreFilter().ok());
  EXPECT_THAT(Of(existing.Filter()), ElementsAre(kOk, kExisting));
}

// The first pod of a group matches its own terms, namespace selectors read
// against its namespace's labels.
TEST(InterPodAffinityTest, FirstOfGroupByNamespaceSelector) {
  const pb::PodAffinityTerm term =
      WithNamespaceSelector(TermIn("app", "zone", {"web"}), Team1());
  IpaCluster c = WithTeams();
  c.Node("a", {{"zone", "z1"}}).Node("b", {});
  InterPodAffinity plugin;
  Cycle mine(
      plugin, c,
      AffinityPod("subteam1.team1").Label("app", "web").Affinity(term).Obj());
  ASSERT_TRUE(mine.PreFilter().ok());
  EXPECT_THAT(Of(mine.Filter()), ElementsAre(kOk, kAffinity));
  Cycle other(
      plugin, c,
      AffinityPod("subteam1.team2").Label("app", "web").Affinity(term).Obj());
  ASSERT_TRUE(other.PreFilter().ok());
  EXPECT_THAT(Of(other.Filter()), ElementsAre(kAffinity, kAffinity));
  // Once a matching pod exists elsewhere, the group is no longer new.
  c.Place(AffinityPod("subteam2.team1").Label("app", "web").Obj(), "b");
  c.Node("c", {{"zone", "z2"}});
  c.Place(AffinityPod("subteam2.team1").Label("app", "web").Obj(), "c");
  Cycle later(
      plugin, c,
      AffinityPod("subteam1.team1").Label("app", "web").Affinity(term).Obj());
  ASSERT_TRUE(later.PreFilter().ok());
  EXPECT_THAT(Of(later.Filter()), ElementsAre(kAffinity, kAffinity, kOk));
}

TEST(InterPodAffinityTest, FilterAndScoreNeedTheirState) {
  InterPodAffinity plugin;
  CycleState state;
  const pb::Pod pod = AffinityPod().Anti(TermExists("a", "zone")).Obj();
  EXPECT_EQ(plugin.Filter(state, pod, pb::Node()).code, Code::kError);
  std::vector<int64_t> scores(1);
  const pb::Node node;
  const pb::Node* nodes[] = {&node};
  EXPECT_EQ(plugin.Score(state, pod, nodes, absl::MakeSpan(scores)).code,
            Code::kError);
}

TEST(InterPodAffinityTest, StatesRoundTrip) {
  InterPodAffinity::PreFilterState f;
  f.first_of_group = true;
  f.matching_existing = {0, 4, 9};
  absl::StatusOr<InterPodAffinity::PreFilterState> f2 =
      InterPodAffinity::PreFilterState::Decode(f.Encode());
  ASSERT_TRUE(f2.ok()) << f2.status();
  EXPECT_TRUE(f2->first_of_group);
  EXPECT_THAT(f2->matching_existing, ElementsAre(0, 4, 9));
  for (const char* bad : {"", "2", "1,x", "1,3,2", "0,-1"}) {
    EXPECT_FALSE(InterPodAffinity::PreFilterState::Decode(bad).ok()) << bad;
  }
  InterPodAffinity::PreScoreState sc;
  sc.existing_weights = {{1, -5}, {3, 100}};
  absl::StatusOr<InterPodAffinity::PreScoreState> sc2 =
      InterPodAffinity::PreScoreState::Decode(sc.Encode());
  ASSERT_TRUE(sc2.ok()) << sc2.status();
  EXPECT_EQ(sc2->existing_weights, sc.existing_weights);
  for (const char* bad : {"1", "a:2", "1:b", "-1:2"}) {
    EXPECT_FALSE(InterPodAffinity::PreScoreState::Decode(bad).ok()) << bad;
  }
}

// ---------------------------------------------------------------- args

absl::StatusOr<InterPodAffinity::Args> Parse(const std::string& yaml) {
  return InterPodAffinity::ParseArgs(
      model::YamlField(YAML::Load(yaml), "args"));
}

TEST(InterPodAffinityArgsTest, DefaultsAndValues) {
  absl::StatusOr<InterPodAffinity::Args> a = Parse("");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->hard_pod_affinity_weight, 1);
  EXPECT_FALSE(a->ignore_preferred_terms_of_existing_pods);
  a = Parse(
      "{apiVersion: kubescheduler.config.k8s.io/v1, kind: "
      "InterPodAffinityArgs, hardPodAffinityWeight: 0, "
      "ignorePreferredTermsOfExistingPods: true}");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->hard_pod_affinity_weight, 0);
  EXPECT_TRUE(a->ignore_preferred_terms_of_existing_pods);
  a = Parse("{hardPodAffinityWeight: 100}");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->hard_pod_affinity_weight, 100);
}

TEST(InterPodAffinityArgsTest, ErrorsNameTheField) {
  struct Case {
    std::string yaml;
    std::string want;
  } cases[] = {
      {"{hardPodAffinityWeight: 101}",
       "args.hardPodAffinityWeight: Invalid value: 101: not in valid range "
       "[0, 100]"},
      {"{hardPodAffinityWeight: -1}",
       "args.hardPodAffinityWeight: Invalid value: -1: not in valid range "
       "[0, 100]"},
      {"{hardPodAffinityWeight: heavy}", "args.hardPodAffinityWeight:"},
      {"{ignorePreferredTermsOfExistingPods: sometimes}",
       "args.ignorePreferredTermsOfExistingPods:"},
      {"{kind: NodeAffinityArgs}",
       "args.kind: expected InterPodAffinityArgs, got \"NodeAffinityArgs\""},
      {"{hardPodAffinityWieght: 2}", "hardPodAffinityWieght"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<InterPodAffinity::Args> a = Parse(c.yaml);
    ASSERT_FALSE(a.ok()) << c.yaml;
    EXPECT_THAT(std::string(a.status().message()), HasSubstr(c.want));
  }
}

// ---------------------------------------------------------------- profile

// Through the framework: the stock profile plans for the pod and, when the
// feasible nodes come in several batches, normalising their raw scores
// together gives what one batch gives.
TEST(InterPodAffinityProfileTest, BatchesNormaliseLikeOneCall) {
  absl::StatusOr<std::unique_ptr<framework::ProfileSet>> set =
      framework::ParseProfileSet(
          "apiVersion: kubescheduler.config.k8s.io/v1\n"
          "kind: KubeSchedulerConfiguration\n"
          "profiles:\n"
          "- plugins:\n"
          "    multiPoint:\n"
          "      disabled: [{name: \"*\"}]\n"
          "      enabled: [{name: InterPodAffinity}]\n",
          DefaultRegistry());
  ASSERT_TRUE(set.ok()) << set.status();
  const framework::Profile& profile = *(*set)->profiles.begin()->second;
  EXPECT_TRUE(profile.plans());
  EXPECT_THAT(profile.pod_data(), ElementsAre(pb::POD_DATA_NAMESPACE_LABELS));

  IpaCluster c = Nodes({{"a", {{"zone", "z1"}}},
                        {"b", {{"zone", "z2"}}},
                        {"c", {{"zone", "z3"}}},
                        {"d", {{"zone", "z4"}}}});
  const pb::Pod web = AffinityPod().Label("app", "web").Obj();
  c.Place(web, "a").Place(web, "b").Place(web, "b").Place(web, "d");
  c.Place(AffinityPod().Label("app", "db").Obj(), "c");
  const pb::Pod pod =
      c.Incoming(AffinityPod()
                     .Preferred(4, TermIn("app", "zone", {"web"}))
                     .Anti(TermIn("app", "zone", {"db"}))
                     .Obj());
  const pb::PlanResponse plan = profile.Plan(pod);
  auto [data, nodes] = c.Answer(pod, plan);
  std::vector<const pb::Node*> all;
  for (const pb::Node& n : nodes) all.push_back(&n);

  CycleState one;
  ASSERT_TRUE(profile.BindCluster(one, pod, data, all).ok());
  absl::StatusOr<framework::NodeVerdicts> whole =
      profile.Evaluate(one, pod, all, framework::EvaluateMode::kFull);
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(Of(whole->filter[2]), kAnti);
  EXPECT_THAT(whole->feasible, ElementsAre(0, 1, 3));
  // Raw 4, 8, 4: min-max over the three (weight 1 when enabled without
  // one).
  EXPECT_THAT(whole->scores.raw[0], ElementsAre(4, 8, 4));
  EXPECT_THAT(whole->scores.total, ElementsAre(0, 100, 0));

  framework::ScoreTable joined;
  for (auto part : {absl::MakeConstSpan(all).subspan(0, 2),
                    absl::MakeConstSpan(all).subspan(2)}) {
    CycleState state;
    ASSERT_TRUE(profile.BindCluster(state, pod, data, part).ok());
    absl::StatusOr<framework::NodeVerdicts> ev =
        profile.Evaluate(state, pod, part, framework::EvaluateMode::kRawScores);
    ASSERT_TRUE(ev.ok()) << ev.status();
    ASSERT_EQ(ev->scores.plugins.size(), 1u);
    if (joined.plugins.empty()) {
      joined.plugins = ev->scores.plugins;
      joined.weights = ev->scores.weights;
      joined.raw.resize(1);
    }
    joined.raw[0].insert(joined.raw[0].end(), ev->scores.raw[0].begin(),
                         ev->scores.raw[0].end());
  }
  CycleState state;
  ASSERT_TRUE(profile.BindCluster(state, pod, data, {}).ok());
  ASSERT_TRUE(profile.RunNormalizeScore(state, pod, joined).ok());
  EXPECT_EQ(joined.total, whole->scores.total);
}

}  // namespace
}  // namespace kscore::plugins
