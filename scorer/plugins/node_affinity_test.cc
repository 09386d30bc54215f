#include "scorer/plugins/node_affinity.h"

#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scorer/testing/wrappers.h"
#include "yaml-cpp/yaml.h"

namespace kscore::plugins {
namespace {

using ::kscore::testing::MakeNode;
using ::kscore::testing::MakePod;
using ::kscore::testing::Req;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
namespace pb = framework::pb;

constexpr char kReasonPod[] =
    "node(s) didn't match Pod's node affinity/selector";
constexpr char kReasonNotInResult[] =
    "node(s) didn't satisfy plugin(s) [NodeAffinity]";

TEST(NodeAffinityTest, Filter) {
  struct Case {
    std::string name;
    pb::Pod pod;
    pb::Node node;
    std::string reason;  // empty: fits
  };
  const pb::Node zone_a =
      MakeNode().Name("n1").Label("zone", "a").Label("cores", "8").Obj();
  std::vector<Case> cases = {
      {"nothing required", MakePod().Obj(), zone_a, ""},
      {"nodeSelector matches", MakePod().NodeSelector("zone", "a").Obj(),
       zone_a, ""},
      {"nodeSelector other value", MakePod().NodeSelector("zone", "b").Obj(),
       zone_a, kReasonPod},
      {"nodeSelector missing label",
       MakePod().NodeSelector("disk", "ssd").Obj(), zone_a, kReasonPod},
      {"nodeSelector needs every label",
       MakePod().NodeSelector("zone", "a").NodeSelector("cores", "4").Obj(),
       zone_a, kReasonPod},
      {"In", MakePod().RequiredTerm({Req("zone", "In", {"b", "a"})}).Obj(),
       zone_a, ""},
      {"In, other values",
       MakePod().RequiredTerm({Req("zone", "In", {"b"})}).Obj(), zone_a,
       kReasonPod},
      {"NotIn", MakePod().RequiredTerm({Req("zone", "NotIn", {"a"})}).Obj(),
       zone_a, kReasonPod},
      {"NotIn on a missing label",
       MakePod().RequiredTerm({Req("disk", "NotIn", {"hdd"})}).Obj(), zone_a,
       ""},
      {"Exists", MakePod().RequiredTerm({Req("zone", "Exists")}).Obj(), zone_a,
       ""},
      {"DoesNotExist",
       MakePod().RequiredTerm({Req("zone", "DoesNotExist")}).Obj(), zone_a,
       kReasonPod},
      {"Gt", MakePod().RequiredTerm({Req("cores", "Gt", {"4"})}).Obj(), zone_a,
       ""},
      {"Gt not greater",
       MakePod().RequiredTerm({Req("cores", "Gt", {"8"})}).Obj(), zone_a,
       kReasonPod},
      {"Lt", MakePod().RequiredTerm({Req("cores", "Lt", {"16"})}).Obj(), zone_a,
       ""},
      {"Gt on a non-integer label",
       MakePod().RequiredTerm({Req("zone", "Gt", {"1"})}).Obj(), zone_a,
       kReasonPod},
      {"requirements within a term are ANDed",
       MakePod()
           .RequiredTerm({Req("zone", "In", {"a"}), Req("cores", "Lt", {"4"})})
           .Obj(),
       zone_a, kReasonPod},
      {"terms are ORed",
       MakePod()
           .RequiredTerm({Req("zone", "In", {"b"})})
           .RequiredTerm({Req("cores", "Exists")})
           .Obj(),
       zone_a, ""},
      {"required with no terms matches nothing",
       MakePod().RequiredNoTerms().Obj(), zone_a, kReasonPod},
      {"an empty term matches nothing", MakePod().RequiredTerm({}).Obj(),
       zone_a, kReasonPod},
      {"a malformed term matches nothing (In without values)",
       MakePod().RequiredTerm({Req("zone", "In", {})}).Obj(), zone_a,
       kReasonPod},
      {"a malformed term matches nothing (bad label value)",
       MakePod().RequiredTerm({Req("zone", "NotIn", {"not valid!"})}).Obj(),
       zone_a, kReasonPod},
      {"a malformed term matches nothing (Gt with a non-integer)",
       MakePod().RequiredTerm({Req("cores", "Gt", {"four"})}).Obj(), zone_a,
       kReasonPod},
      {"a malformed term matches nothing (bad operator)",
       MakePod().RequiredTerm({Req("zone", "Equals", {"a"})}).Obj(), zone_a,
       kReasonPod},
      {"a malformed term does not spoil a good one",
       MakePod()
           .RequiredTerm({Req("zone", "Exists", {"x"})})
           .RequiredTerm({Req("zone", "In", {"a"})})
           .Obj(),
       zone_a, ""},
      {"nodeSelector and affinity must both match",
       MakePod()
           .NodeSelector("zone", "b")
           .RequiredTerm({Req("zone", "In", {"a"})})
           .Obj(),
       zone_a, kReasonPod},
      {"matchFields metadata.name In",
       MakePod().RequiredTerm({}, {Req("metadata.name", "In", {"n1"})}).Obj(),
       zone_a, ""},
      {"matchFields metadata.name In another node",
       MakePod().RequiredTerm({}, {Req("metadata.name", "In", {"n2"})}).Obj(),
       zone_a, kReasonNotInResult},
      {"matchFields metadata.name NotIn",
       MakePod()
           .RequiredTerm({}, {Req("metadata.name", "NotIn", {"n1"})})
           .Obj(),
       zone_a, kReasonPod},
      {"matchFields with labels in the same term",
       MakePod()
           .RequiredTerm({Req("zone", "In", {"b"})},
                         {Req("metadata.name", "In", {"n1"})})
           .Obj(),
       zone_a, kReasonPod},
      {"a term without matchFields lifts the name restriction",
       MakePod()
           .RequiredTerm({}, {Req("metadata.name", "In", {"n2"})})
           .RequiredTerm({Req("zone", "Exists")})
           .Obj(),
       zone_a, ""},
  };
  NodeAffinity pl;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    framework::CycleState written;
    framework::PluginStatus pre = pl.PreFilter(written, c.pod);
    ASSERT_TRUE(pre.code == framework::Code::kSuccess ||
                pre.code == framework::Code::kSkip);
    if (pre.code == framework::Code::kSkip) {
      EXPECT_TRUE(c.reason.empty());
    }
    // With PreFilter's state read back from bytes, and without any state
    // (a bare Filter call): same answer.
    framework::CycleState with_state(written.bytes());
    framework::CycleState without_state;
    for (const framework::CycleState* state : {&with_state, &without_state}) {
      framework::PluginStatus s = pl.Filter(*state, c.pod, c.node);
      if (c.reason.empty()) {
        EXPECT_EQ(s.code, framework::Code::kSuccess)
            << ::testing::PrintToString(s.reasons);
      } else {
        EXPECT_EQ(s.code, framework::Code::kUnschedulableAndUnresolvable);
        EXPECT_THAT(s.reasons, ElementsAre(c.reason));
      }
    }
  }
}

TEST(NodeAffinityTest, PreFilter) {
  NodeAffinity pl;
  struct Case {
    std::string name;
    pb::Pod pod;
    framework::Code code;
  };
  std::vector<Case> cases = {
      {"nothing to check", MakePod().Obj(), framework::Code::kSkip},
      {"only preferred terms",
       MakePod().PreferredTerm(5, {Req("zone", "Exists")}).Obj(),
       framework::Code::kSkip},
      {"nodeSelector", MakePod().NodeSelector("a", "b").Obj(),
       framework::Code::kSuccess},
      {"required with no terms", MakePod().RequiredNoTerms().Obj(),
       framework::Code::kSuccess},
      {"names in a term intersect to nothing",
       MakePod()
           .RequiredTerm({}, {Req("metadata.name", "In", {"n1"}),
                              Req("metadata.name", "In", {"n2"})})
           .Obj(),
       framework::Code::kUnschedulableAndUnresolvable},
      {"names in terms union",
       MakePod()
           .RequiredTerm({}, {Req("metadata.name", "In", {"n1"})})
           .RequiredTerm({}, {Req("metadata.name", "In", {"n2"})})
           .Obj(),
       framework::Code::kSuccess},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    framework::CycleState state;
    framework::PluginStatus s = pl.PreFilter(state, c.pod);
    EXPECT_EQ(s.code, c.code);
    if (c.code == framework::Code::kUnschedulableAndUnresolvable) {
      EXPECT_THAT(s.reasons, ElementsAre("pod affinity terms conflict"));
    }
  }
}

TEST(NodeAffinityTest, PreFilterStateRoundTrip) {
  pb::Pod pod = MakePod()
                    .RequiredTerm({Req("zone", "In", {})},
                                  {Req("metadata.name", "In", {"n1", "n2"})})
                    .RequiredTerm({}, {Req("metadata.name", "In", {"n3"})})
                    .Obj();
  NodeAffinity::PreFilterState s = NodeAffinity::Prepare(pod);
  EXPECT_EQ(s.valid_terms, "01");
  EXPECT_TRUE(s.restricted);
  auto decoded = NodeAffinity::PreFilterState::Decode(s.Encode());
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->valid_terms, "01");
  EXPECT_TRUE(decoded->restricted);
  EXPECT_EQ(decoded->node_names, s.node_names);
  EXPECT_EQ(decoded->node_names.size(), 3u);
  EXPECT_FALSE(NodeAffinity::PreFilterState::Decode("01\nX").ok());
  EXPECT_FALSE(NodeAffinity::PreFilterState::Decode("2\nA").ok());
}

TEST(NodeAffinityTest, FilterRejectsStateOfAnotherPod) {
  NodeAffinity pl;
  framework::CycleState state(framework::CycleState::Bytes{
      {std::string(NodeAffinity::kPreFilterStateKey), "111\nA"}});
  framework::PluginStatus s =
      pl.Filter(state, MakePod().RequiredTerm({Req("zone", "Exists")}).Obj(),
                MakeNode().Obj());
  EXPECT_EQ(s.code, framework::Code::kError);
}

TEST(NodeAffinityTest, Score) {
  NodeAffinity pl;
  pb::Pod pod = MakePod()
                    .PreferredTerm(5, {Req("zone", "In", {"a"})})
                    .PreferredTerm(3, {Req("disk", "Exists")})
                    .PreferredTerm(0, {Req("zone", "Exists")})  // ignored
                    .PreferredTerm(7, {})                       // ignored
                    .Obj();
  std::vector<pb::Node> nodes = {
      MakeNode().Name("both").Label("zone", "a").Label("disk", "ssd").Obj(),
      MakeNode().Name("zone").Label("zone", "a").Obj(),
      MakeNode().Name("disk").Label("zone", "b").Label("disk", "hdd").Obj(),
      MakeNode().Name("none").Obj(),
  };
  std::vector<const pb::Node*> ptrs;
  for (const pb::Node& n : nodes) ptrs.push_back(&n);
  framework::CycleState state;
  ASSERT_EQ(pl.PreScore(state, pod, ptrs).code, framework::Code::kSuccess);
  std::vector<int64_t> scores(ptrs.size(), -1);
  ASSERT_TRUE(pl.Score(state, pod, ptrs, absl::MakeSpan(scores)).ok());
  EXPECT_THAT(scores, ElementsAre(8, 5, 3, 0));
  ASSERT_TRUE(pl.NormalizeScore(state, pod, absl::MakeSpan(scores)).ok());
  EXPECT_THAT(scores, ElementsAre(100, 62, 37, 0));
}

TEST(NodeAffinityTest, PreScore) {
  NodeAffinity pl;
  framework::CycleState state;
  EXPECT_EQ(pl.PreScore(state, MakePod().NodeSelector("a", "b").Obj(), {}).code,
            framework::Code::kSkip);
  pb::Pod bad = MakePod().PreferredTerm(1, {Req("zone", "Gt", {"x"})}).Obj();
  framework::PluginStatus s = pl.PreScore(state, bad, {});
  EXPECT_EQ(s.code, framework::Code::kError);
  EXPECT_THAT(
      s.reasons,
      ElementsAre(HasSubstr("preferredDuringSchedulingIgnoredDuringExecution[0]"
                            ".preference.matchExpressions[0]")));
  std::vector<int64_t> scores(0);
  EXPECT_EQ(pl.Score(state, bad, {}, absl::MakeSpan(scores)).code,
            framework::Code::kError);
}

TEST(NodeAffinityTest, AddedAffinity) {
  auto args = NodeAffinity::ParseArgs(
      model::YamlField(YAML::Load(R"({kind: NodeAffinityArgs, addedAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [
            {matchExpressions: [{key: pool, operator: In, values: [batch]}]}]},
          preferredDuringSchedulingIgnoredDuringExecution: [
            {weight: 10, preference: {matchExpressions: [
              {key: disk, operator: Exists}]}}]}})"),
                       "args"));
  ASSERT_TRUE(args.ok()) << args.status();
  NodeAffinity pl(*args);

  // Enforced on every pod, with its own reason, before the pod's own rules.
  pb::Pod pod = MakePod().NodeSelector("zone", "a").Obj();
  pb::Node batch = MakeNode().Name("b").Label("pool", "batch").Obj();
  pb::Node web = MakeNode().Name("w").Label("pool", "web").Obj();
  for (const pb::Pod& p : {MakePod().Obj(), pod}) {
    framework::CycleState state;
    ASSERT_EQ(pl.PreFilter(state, p).code, framework::Code::kSuccess);
    framework::PluginStatus s = pl.Filter(state, p, web);
    EXPECT_EQ(s.code, framework::Code::kUnschedulableAndUnresolvable);
    EXPECT_THAT(s.reasons, ElementsAre("node(s) didn't match scheduler-"
                                       "enforced node affinity"));
  }
  framework::CycleState state;
  ASSERT_TRUE(pl.PreFilter(state, pod).ok());
  EXPECT_THAT(pl.Filter(state, pod, batch).reasons, ElementsAre(kReasonPod));
  EXPECT_TRUE(pl.Filter(state, MakePod().Obj(), batch).ok());

  // Preferred terms add to the pod's own.
  pb::Pod pref = MakePod().PreferredTerm(5, {Req("zone", "Exists")}).Obj();
  std::vector<pb::Node> nodes = {
      MakeNode().Label("disk", "ssd").Label("zone", "a").Obj(),
      MakeNode().Label("disk", "ssd").Obj(), MakeNode().Obj()};
  std::vector<const pb::Node*> ptrs;
  for (const pb::Node& n : nodes) ptrs.push_back(&n);
  for (const pb::Pod& p : {pref, MakePod().Obj()}) {
    ASSERT_EQ(pl.PreScore(state, p, ptrs).code, framework::Code::kSuccess);
  }
  std::vector<int64_t> scores(3);
  ASSERT_TRUE(pl.Score(state, pref, ptrs, absl::MakeSpan(scores)).ok());
  EXPECT_THAT(scores, ElementsAre(15, 10, 0));
  ASSERT_TRUE(
      pl.Score(state, MakePod().Obj(), ptrs, absl::MakeSpan(scores)).ok());
  EXPECT_THAT(scores, ElementsAre(10, 10, 0));
}

TEST(NodeAffinityTest, AddedRequiredWithNoTermsMatchesNothing) {
  auto args = NodeAffinity::ParseArgs(model::YamlField(
      YAML::Load(
          "{addedAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
          "{nodeSelectorTerms: []}}}"),
      "args"));
  ASSERT_TRUE(args.ok()) << args.status();
  NodeAffinity pl(*args);
  framework::CycleState state;
  ASSERT_TRUE(pl.PreFilter(state, MakePod().Obj()).ok());
  EXPECT_EQ(pl.Filter(state, MakePod().Obj(), MakeNode().Obj()).code,
            framework::Code::kUnschedulableAndUnresolvable);
}

TEST(NodeAffinityTest, Args) {
  struct Case {
    std::string yaml;
    std::string error;  // empty: ok
  };
  std::vector<Case> cases = {
      {"", ""},
      {"{apiVersion: kubescheduler.config.k8s.io/v1, kind: NodeAffinityArgs}",
       ""},
      {"{addedAffinity: {}}", ""},
      // Preferred terms of weight 0 are not looked into.
      {"{addedAffinity: {preferredDuringSchedulingIgnoredDuringExecution: "
       "[{weight: 0, preference: {matchExpressions: [{key: a, operator: "
       "Bogus}]}}]}}",
       ""},
      {"{kind: NodeResourcesFitArgs}",
       "profiles[0].pluginConfig[3].args.kind: expected NodeAffinityArgs"},
      {"{addedAffinty: {}}",
       "profiles[0].pluginConfig[3].args.addedAffinty: unknown field"},
      {"{addedAffinity: {requiredDuringSchedulingRequiredDuringExecution: {}}}",
       "args.addedAffinity.requiredDuringSchedulingRequiredDuringExecution: "
       "unknown field"},
      {"{addedAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
       "{nodeSelectorTerms: [{matchExpressions: [{key: a, operator: In}]}]}}}",
       "args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution."
       "nodeSelectorTerms[0]: matchExpressions[0]: for 'in', 'notin' "
       "operators, values set can't be empty"},
      {"{addedAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
       "{nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: "
       "Exists}]}]}}}",
       "nodeSelectorTerms[0]: matchFields[0]: unsupported field operator"},
      {"{addedAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
       "{nodeSelectorTerms: [{matchExpressions: [{key: a, op: In}]}]}}}",
       "nodeSelectorTerms[0].matchExpressions[0].op: unknown field"},
      {"{addedAffinity: {preferredDuringSchedulingIgnoredDuringExecution: "
       "[{weight: 3, preference: {matchExpressions: [{key: a, operator: Gt, "
       "values: [x]}]}}]}}",
       "args.addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]."
       "preference: matchExpressions[0]: for 'Gt', 'Lt' operators"},
      {"{addedAffinity: {preferredDuringSchedulingIgnoredDuringExecution: "
       "[{weight: heavy}]}}",
       "preferredDuringSchedulingIgnoredDuringExecution[0].weight: expected an "
       "integer"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.yaml);
    YAML::Node node = c.yaml.empty() ? YAML::Node() : YAML::Load(c.yaml);
    auto pl = NodeAffinity::New(
        model::YamlField(node, "profiles[0].pluginConfig[3].args"));
    if (c.error.empty()) {
      EXPECT_TRUE(pl.ok()) << pl.status();
    } else {
      ASSERT_FALSE(pl.ok());
      EXPECT_THAT(pl.status().message(), HasSubstr(c.error));
    }
  }
}

// Upstream's Test_isSchedulableAfterNodeChange (nodeaffinity), with its
// expected hints, and an update event for each case with a node before.
TEST(NodeAffinityTest, HintAfterNodeChange) {
  using model::QueueingHint;
  const pb::Pod pod = MakePod().RequiredTerm({Req("foo", "In", {"bar"})}).Obj();
  const std::string enforced = R"({kind: NodeAffinityArgs, addedAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [
        {matchExpressions: [{key: foo, operator: In, values: [bar]}]}]}}})";
  struct Case {
    std::string name;
    std::string args;  // NodeAffinityArgs; empty for none
    pb::Pod pod;
    std::optional<pb::Node> old_node, new_node;
    QueueingHint want;
  };
  std::vector<Case> cases = {
      {"backoff-wrong-new-object (no node)", "", pod, std::nullopt,
       std::nullopt, QueueingHint::kQueue},
      {"skip-queue-on-add", "", pod, std::nullopt, MakeNode().Obj(),
       QueueingHint::kQueueSkip},
      {"queue-on-add", "", pod, std::nullopt,
       MakeNode().Label("foo", "bar").Obj(), QueueingHint::kQueue},
      {"skip-unrelated-changes", "", pod, MakeNode().Obj(),
       MakeNode().Capacity(0, 0, 0).Obj(), QueueingHint::kQueueSkip},
      {"skip-unrelated-changes-on-labels", "", pod, MakeNode().Obj(),
       MakeNode().Label("k", "v").Obj(), QueueingHint::kQueueSkip},
      {"skip-labels-changes-on-node-from-suitable-to-unsuitable", "", pod,
       MakeNode().Label("foo", "bar").Obj(), MakeNode().Label("k", "v").Obj(),
       QueueingHint::kQueueSkip},
      {"queue-on-labels-change-makes-pod-schedulable", "", pod,
       MakeNode().Obj(), MakeNode().Label("foo", "bar").Obj(),
       QueueingHint::kQueue},
      {"skip-unrelated-change-that-keeps-pod-schedulable", "", pod,
       MakeNode().Label("foo", "bar").Obj(),
       MakeNode().Capacity(0, 0, 0).Label("foo", "bar").Obj(),
       QueueingHint::kQueueSkip},
      {"skip-queue-on-add-scheduler-enforced-node-affinity", enforced, pod,
       std::nullopt, MakeNode().Obj(), QueueingHint::kQueueSkip},
      {"queue-on-add-scheduler-enforced-node-affinity", enforced, pod,
       std::nullopt, MakeNode().Label("foo", "bar").Obj(),
       QueueingHint::kQueue},
      // kscore's own: the nodeSelector counts, as in GetRequiredNodeAffinity;
      // a malformed term that leaves no match is upstream's error: Queue.
      {"nodeSelector matched on add", "",
       MakePod().NodeSelector("foo", "bar").Obj(), std::nullopt,
       MakeNode().Label("foo", "bar").Obj(), QueueingHint::kQueue},
      {"nodeSelector unmatched on add", "",
       MakePod().NodeSelector("foo", "bar").Obj(), std::nullopt,
       MakeNode().Label("foo", "baz").Obj(), QueueingHint::kQueueSkip},
      {"malformed term", "",
       MakePod().RequiredTerm({Req("foo", "Gt", {"bar"})}).Obj(), std::nullopt,
       MakeNode().Label("foo", "1").Obj(), QueueingHint::kQueue},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    NodeAffinity::Args args;
    if (!c.args.empty()) {
      auto parsed =
          NodeAffinity::ParseArgs(model::YamlField(YAML::Load(c.args), "args"));
      ASSERT_TRUE(parsed.ok()) << parsed.status();
      args = *parsed;
    }
    const NodeAffinity pl(args);
    const model::EventObjects e = ::kscore::testing::NodeEvent(
        c.old_node ? model::action::kUpdateNodeLabel : model::action::kAdd,
        c.old_node ? &*c.old_node : nullptr,
        c.new_node ? &*c.new_node : nullptr);
    EXPECT_EQ(pl.Hint(c.pod, e), c.want);
  }
}

}  // namespace
}  // namespace kscore::plugins
