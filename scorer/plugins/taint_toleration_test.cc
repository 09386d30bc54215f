#include "scorer/plugins/taint_toleration.h"

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
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
namespace pb = framework::pb;

pb::Toleration Tol(std::string key, std::string op, std::string value,
                   std::string effect) {
  pb::Toleration t;
  t.set_key(std::move(key));
  t.set_operator_(std::move(op));
  t.set_value(std::move(value));
  t.set_effect(std::move(effect));
  return t;
}

TEST(TaintTolerationTest, ToleratesTaint) {
  struct Case {
    std::string name;
    pb::Toleration toleration;
    bool tolerates;  // of the taint {key: k, value: v, effect: NoSchedule}
  };
  std::vector<Case> cases = {
      {"Equal same value", Tol("k", "Equal", "v", "NoSchedule"), true},
      {"empty operator means Equal", Tol("k", "", "v", "NoSchedule"), true},
      {"Equal other value", Tol("k", "Equal", "w", "NoSchedule"), false},
      {"Exists any value", Tol("k", "Exists", "", "NoSchedule"), true},
      {"other key", Tol("j", "Exists", "", "NoSchedule"), false},
      {"empty key with Exists matches every key", Tol("", "Exists", "", ""),
       true},
      {"empty effect matches every effect", Tol("k", "Equal", "v", ""), true},
      {"other effect", Tol("k", "Equal", "v", "NoExecute"), false},
      {"Gt is off (feature gate)", Tol("k", "Gt", "1", "NoSchedule"), false},
      {"Lt is off (feature gate)", Tol("k", "Lt", "9", "NoSchedule"), false},
      {"unknown operator", Tol("k", "Bogus", "v", "NoSchedule"), false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(ToleratesTaint(c.toleration, "k", "v", "NoSchedule"),
              c.tolerates);
  }
}

TEST(TaintTolerationTest, Filter) {
  struct Case {
    std::string name;
    pb::Pod pod;
    pb::Node node;
    bool fits;
  };
  std::vector<Case> cases = {
      {"no taints", MakePod().Obj(), MakeNode().Obj(), true},
      {"untolerated NoSchedule", MakePod().Obj(),
       MakeNode().Taint("dedicated", "gpu", "NoSchedule").Obj(), false},
      {"untolerated NoExecute", MakePod().Obj(),
       MakeNode().Taint("dedicated", "", "NoExecute").Obj(), false},
      {"PreferNoSchedule never filters", MakePod().Obj(),
       MakeNode().Taint("dedicated", "gpu", "PreferNoSchedule").Obj(), true},
      {"tolerated",
       MakePod().Toleration("dedicated", "Equal", "gpu", "NoSchedule").Obj(),
       MakeNode().Taint("dedicated", "gpu", "NoSchedule").Obj(), true},
      {"one of two taints untolerated",
       MakePod().Toleration("a", "Exists", "", "NoSchedule").Obj(),
       MakeNode()
           .Taint("a", "1", "NoSchedule")
           .Taint("b", "2", "NoExecute")
           .Obj(),
       false},
      {"both tolerated",
       MakePod()
           .Toleration("a", "Exists", "", "NoSchedule")
           .Toleration("b", "Equal", "2", "")
           .Obj(),
       MakeNode()
           .Taint("a", "1", "NoSchedule")
           .Taint("b", "2", "NoExecute")
           .Obj(),
       true},
  };
  TaintToleration pl;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    framework::CycleState state;
    framework::PluginStatus s = pl.Filter(state, c.pod, c.node);
    if (c.fits) {
      EXPECT_EQ(s.code, framework::Code::kSuccess);
    } else {
      EXPECT_EQ(s.code, framework::Code::kUnschedulableAndUnresolvable);
      EXPECT_THAT(s.reasons, ElementsAre("node(s) had untolerated taint(s)"));
    }
  }
}

TEST(TaintTolerationTest, Score) {
  struct Case {
    std::string name;
    pb::Pod pod;
    std::vector<pb::Node> nodes;
    std::vector<int64_t> raw;
    std::vector<int64_t> normalized;
  };
  std::vector<Case> cases = {
      {"no taints anywhere: all equal",
       MakePod().Obj(),
       {MakeNode().Name("a").Obj(), MakeNode().Name("b").Obj()},
       {0, 0},
       {100, 100}},
      {"fewer intolerable PreferNoSchedule taints is better",
       MakePod().Obj(),
       {MakeNode().Name("a").Obj(),
        MakeNode().Name("b").Taint("x", "1", "PreferNoSchedule").Obj(),
        MakeNode()
            .Name("c")
            .Taint("x", "1", "PreferNoSchedule")
            .Taint("y", "2", "PreferNoSchedule")
            .Obj()},
       {0, 1, 2},
       {100, 50, 0}},
      {"tolerated taints and other effects do not count",
       MakePod()
           .Toleration("x", "Exists", "", "PreferNoSchedule")
           .Toleration("y", "Equal", "2", "")
           .Toleration("z", "Exists", "", "NoSchedule")
           .Obj(),
       {MakeNode()
            .Name("a")
            .Taint("x", "1", "PreferNoSchedule")
            .Taint("y", "2", "PreferNoSchedule")
            .Taint("w", "", "NoSchedule")
            .Obj(),
        MakeNode().Name("b").Taint("z", "", "PreferNoSchedule").Obj()},
       // z is tolerated only for NoSchedule: it counts on b.
       {0, 1},
       {100, 0}},
  };
  TaintToleration pl;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    framework::CycleState written;
    std::vector<const pb::Node*> nodes;
    for (const pb::Node& n : c.nodes) nodes.push_back(&n);
    ASSERT_TRUE(pl.PreScore(written, c.pod, nodes).ok());
    // Score reads the state back from bytes, as another replica would.
    framework::CycleState state(written.bytes());
    std::vector<int64_t> scores(nodes.size(), -1);
    ASSERT_TRUE(pl.Score(state, c.pod, nodes, absl::MakeSpan(scores)).ok());
    EXPECT_THAT(scores, ElementsAreArray(c.raw));
    ASSERT_TRUE(pl.NormalizeScore(state, c.pod, absl::MakeSpan(scores)).ok());
    EXPECT_THAT(scores, ElementsAreArray(c.normalized));
  }
}

TEST(TaintTolerationTest, StateKeepsOnlyPreferNoScheduleTolerations) {
  TaintToleration pl;
  pb::Pod pod = MakePod()
                    .Toleration("a", "Exists", "", "NoSchedule")
                    .Toleration("b", "Equal", "1", "PreferNoSchedule")
                    .Toleration("c", "Exists", "", "")
                    .Obj();
  framework::CycleState written;
  ASSERT_TRUE(pl.PreScore(written, pod, {}).ok());
  auto decoded = TaintToleration::State::Decode(
      written.bytes().at(std::string(TaintToleration::kStateKey)));
  ASSERT_TRUE(decoded.ok());
  std::vector<std::string> keys;
  for (const pb::Toleration& t : decoded->tolerations) keys.push_back(t.key());
  EXPECT_THAT(keys, ElementsAre("b", "c"));
}

TEST(TaintTolerationTest, ScoreWithoutStateIsAnError) {
  TaintToleration pl;
  framework::CycleState state;
  pb::Node node = MakeNode().Obj();
  std::vector<const pb::Node*> nodes = {&node};
  std::vector<int64_t> scores(1);
  framework::PluginStatus s =
      pl.Score(state, MakePod().Obj(), nodes, absl::MakeSpan(scores));
  EXPECT_EQ(s.code, framework::Code::kError);
  EXPECT_THAT(s.reasons, ElementsAre(HasSubstr("PreScoreTaintToleration")));

  framework::CycleState garbage(framework::CycleState::Bytes{
      {std::string(TaintToleration::kStateKey), "\xff\xff"}});
  s = pl.Score(garbage, MakePod().Obj(), nodes, absl::MakeSpan(scores));
  EXPECT_EQ(s.code, framework::Code::kError);
}

TEST(TaintTolerationTest, Args) {
  EXPECT_TRUE(
      TaintToleration::New(model::YamlField(YAML::Node(), "args")).ok());
  auto bad = TaintToleration::New(model::YamlField(
      YAML::Load("{kind: TaintTolerationArgs, x: 1}"), "p.args"));
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("p.args.x: unknown field"));
}

// Upstream's TestIsSchedulableAfterNodeChange (tainttoleration), with its
// expected hints.
TEST(TaintTolerationTest, HintAfterNodeChange) {
  using model::QueueingHint;
  const pb::Pod pod =
      MakePod().Toleration("dedicated", "Equal", "user2", "NoSchedule").Obj();
  auto tainted = [](std::vector<std::string> values) {
    auto n = MakeNode().Name("nodeA");
    for (std::string& v : values) n.Taint("dedicated", v, "NoSchedule");
    return n.Obj();
  };
  struct Case {
    std::string name;
    std::optional<pb::Node> old_node, new_node;
    QueueingHint want;
  };
  std::vector<Case> cases = {
      {"backoff-wrong-new-object (no node)", std::nullopt, std::nullopt,
       QueueingHint::kQueue},
      {"skip-queue-on-untoleratedtaint-node-added", std::nullopt,
       tainted({"user1"}), QueueingHint::kQueueSkip},
      {"queue-on-toleratedtaint-node-added", std::nullopt, tainted({"user2"}),
       QueueingHint::kQueue},
      {"skip-unrelated-change", tainted({"user1"}), tainted({"user1", "user3"}),
       QueueingHint::kQueueSkip},
      {"queue-on-taint-change", tainted({"user1"}), tainted({"user2"}),
       QueueingHint::kQueue},
      // kscore's own: tolerated before and after changes nothing;
      // PreferNoSchedule taints never rejected the pod.
      {"tolerated before and after", tainted({}), tainted({"user2"}),
       QueueingHint::kQueueSkip},
      {"only PreferNoSchedule added", std::nullopt,
       MakeNode().Taint("dedicated", "user1", "PreferNoSchedule").Obj(),
       QueueingHint::kQueue},
  };
  const TaintToleration pl;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const model::EventObjects e = ::kscore::testing::NodeEvent(
        c.old_node ? model::action::kUpdateNodeTaint : model::action::kAdd,
        c.old_node ? &*c.old_node : nullptr,
        c.new_node ? &*c.new_node : nullptr);
    EXPECT_EQ(pl.Hint(pod, e), c.want);
  }
}

}  // namespace
}  // namespace kscore::plugins
