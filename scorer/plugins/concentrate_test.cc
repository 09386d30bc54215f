#include "scorer/plugins/concentrate.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scorer/testing/wrappers.h"

namespace kscore::plugins {
namespace {

using ::kscore::testing::MakeNode;
using ::kscore::testing::MakePod;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
namespace pb = framework::pb;

Concentrate::Args Defaults() { return Concentrate::Args{}; }

// Runs PreScore, Score and NormalizeScore the way the framework does.
struct ScoreRun {
  framework::PluginStatus pre_score;
  std::vector<int64_t> raw;
  std::vector<int64_t> normalized;
};

ScoreRun ScoreAll(const Concentrate& plugin, const pb::Pod& pod,
                  const std::vector<pb::Node>& nodes) {
  std::vector<const pb::Node*> ptrs;
  for (const pb::Node& n : nodes) ptrs.push_back(&n);
  framework::CycleState state;
  ScoreRun r;
  r.pre_score = plugin.PreScore(state, pod, ptrs);
  if (!r.pre_score.ok()) return r;
  r.raw.assign(nodes.size(), -1);
  framework::PluginStatus s =
      plugin.Score(state, pod, ptrs, absl::MakeSpan(r.raw));
  EXPECT_TRUE(s.ok());
  r.normalized = r.raw;
  s = plugin.NormalizeScore(state, pod, absl::MakeSpan(r.normalized));
  EXPECT_TRUE(s.ok());
  return r;
}

// Seed gate (a): a node with more matching pods scores higher.
TEST(ConcentrateTest, NodeWithMoreMatchingPodsScoresHigher) {
  Concentrate plugin(Defaults());
  pb::Pod pod = MakePod().Name("web-1").Label("app", "web").Obj();
  std::vector<pb::Node> nodes = {
      MakeNode().Name("a").LabelCount("app", "web", 1).Obj(),
      MakeNode().Name("b").LabelCount("app", "web", 3).Obj(),
      MakeNode().Name("c").Obj(),
  };
  ScoreRun r = ScoreAll(plugin, pod, nodes);
  ASSERT_TRUE(r.pre_score.ok());
  EXPECT_THAT(r.raw, ElementsAre(1, 3, 0));
  EXPECT_GT(r.normalized[1], r.normalized[0]);
  EXPECT_GT(r.normalized[0], r.normalized[2]);
}

// Seed gate (b): normalisation maps the raw range onto [0, 100].
TEST(ConcentrateTest, NormalizeMapsRawRangeOntoZeroToHundred) {
  Concentrate plugin(Defaults());
  pb::Pod pod = MakePod().Label("app", "web").Obj();
  std::vector<pb::Node> nodes = {
      MakeNode().Name("a").LabelCount("app", "web", 2).Obj(),
      MakeNode().Name("b").LabelCount("app", "web", 6).Obj(),
      MakeNode().Name("c").LabelCount("app", "web", 3).Obj(),
      MakeNode().Name("d").Obj(),
  };
  ScoreRun r = ScoreAll(plugin, pod, nodes);
  // score * 100 / max, integer division, as kube-scheduler's default
  // normaliser.
  EXPECT_THAT(r.normalized, ElementsAre(33, 100, 50, 0));
}

// Seed gate (c): an empty cluster gives equal scores, not an error.
TEST(ConcentrateTest, EmptyClusterGivesEqualScoresNotError) {
  Concentrate plugin(Defaults());
  pb::Pod pod = MakePod().Label("app", "web").Obj();
  std::vector<pb::Node> nodes = {MakeNode().Name("a").Obj(),
                                 MakeNode().Name("b").Obj(),
                                 MakeNode().Name("c").Obj()};
  ScoreRun r = ScoreAll(plugin, pod, nodes);
  ASSERT_TRUE(r.pre_score.ok());
  EXPECT_THAT(r.normalized, ElementsAre(0, 0, 0));
}

TEST(ConcentrateTest, CountsOnlyThePodsOwnValue) {
  Concentrate plugin(Defaults());
  pb::Pod pod = MakePod().Label("app", "web").Obj();
  std::vector<pb::Node> nodes = {
      MakeNode().Name("a").LabelCount("app", "db", 9).Obj(),
      MakeNode().Name("b").LabelCount("app", "web", 2).Obj(),
      MakeNode().Name("c").LabelCount("tier", "web", 7).Obj(),
  };
  EXPECT_THAT(ScoreAll(plugin, pod, nodes).raw, ElementsAre(0, 2, 0));
}

TEST(ConcentrateTest, CustomLabelKey) {
  Concentrate plugin(Concentrate::Args{"example.com/team", false});
  pb::Pod pod =
      MakePod().Label("app", "x").Label("example.com/team", "t1").Obj();
  std::vector<pb::Node> nodes = {
      MakeNode().Name("a").LabelCount("app", "x", 5).Obj(),
      MakeNode().Name("b").LabelCount("example.com/team", "t1", 1).Obj(),
  };
  EXPECT_THAT(ScoreAll(plugin, pod, nodes).normalized, ElementsAre(0, 100));
  EXPECT_THAT(plugin.LabelCountKeys(), ElementsAre("example.com/team"));
}

TEST(ConcentrateTest, PodWithoutLabelIsSkipped) {
  Concentrate plugin(Defaults());
  pb::Pod pod = MakePod().Label("tier", "web").Obj();
  std::vector<pb::Node> nodes = {
      MakeNode().Name("a").LabelCount("app", "web", 3).Obj()};
  EXPECT_EQ(ScoreAll(plugin, pod, nodes).pre_score.code,
            framework::Code::kSkip);
}

TEST(ConcentrateTest, ScoreReadsValueFromCycleState) {
  Concentrate plugin(Defaults());
  pb::Pod pod = MakePod().Label("app", "web").Obj();
  pb::Node node = MakeNode().Name("a").LabelCount("app", "db", 4).Obj();
  const pb::Node* ptrs[] = {&node};
  int64_t score = -1;
  // State says "db" (as if written by PreScore on another replica): it wins
  // over the pod's own label, proving Score reads CycleState.
  framework::CycleState state({{std::string(Concentrate::kStateKey), "db"}});
  ASSERT_TRUE(plugin.Score(state, pod, ptrs, absl::MakeSpan(&score, 1)).ok());
  EXPECT_EQ(score, 4);
}

// A profile may disable Concentrate's PreScore: Score then reads the pod's
// own label, as the Go reference does, instead of failing every cycle.
TEST(ConcentrateTest, ScoreWithoutPreScoreStateReadsThePodsLabel) {
  Concentrate plugin(Defaults());
  std::vector<pb::Node> nodes = {
      MakeNode().Name("a").LabelCount("app", "web", 3).Obj(),
      MakeNode().Name("b").LabelCount("app", "db", 5).Obj()};
  const pb::Node* ptrs[] = {&nodes[0], &nodes[1]};
  framework::CycleState empty;
  int64_t scores[2] = {-1, -1};
  framework::PluginStatus s = plugin.Score(
      empty, MakePod().Label("app", "web").Obj(), ptrs, absl::MakeSpan(scores));
  ASSERT_TRUE(s.ok()) << (s.reasons.empty() ? "" : s.reasons[0]);
  EXPECT_THAT(scores, ElementsAre(3, 0));
  // Without the label there is nothing to concentrate: every node scores 0.
  s = plugin.Score(empty, MakePod().Label("tier", "x").Obj(), ptrs,
                   absl::MakeSpan(scores));
  ASSERT_TRUE(s.ok());
  EXPECT_THAT(scores, ElementsAre(0, 0));
}

TEST(ConcentrateTest, FilterPassesByDefault) {
  Concentrate plugin(Defaults());
  framework::CycleState state;
  EXPECT_TRUE(plugin.Filter(state, MakePod().Obj(), MakeNode().Obj()).ok());
}

TEST(ConcentrateTest, RejectEverythingRejectsEveryNodeNamingConcentrate) {
  Concentrate plugin(Concentrate::Args{"app", true});
  framework::CycleState state;
  for (const char* name : {"a", "b", "c"}) {
    framework::PluginStatus s =
        plugin.Filter(state, MakePod().Obj(), MakeNode().Name(name).Obj());
    EXPECT_EQ(s.code, framework::Code::kUnschedulable);
    EXPECT_THAT(
        s.reasons,
        ElementsAre("node(s) were rejected by Concentrate (rejectEverything)"));
  }
}

struct ArgsCase {
  const char* name;
  const char* yaml;  // "" means absent
  std::string label_key;
  bool reject;
  const char* error;  // substring; "" means success
};

void PrintTo(const ArgsCase& c, std::ostream* os) { *os << c.name; }

class ConcentrateArgsTest : public ::testing::TestWithParam<ArgsCase> {};

TEST_P(ConcentrateArgsTest, ParsesAndValidates) {
  const ArgsCase& c = GetParam();
  YAML::Node node =
      *c.yaml ? YAML::Load(c.yaml) : YAML::Node(YAML::NodeType::Undefined);
  model::YamlField f(node, "profiles[0].pluginConfig[0].args");
  absl::StatusOr<Concentrate::Args> a = Concentrate::ParseArgs(f);
  if (*c.error) {
    ASSERT_FALSE(a.ok());
    EXPECT_THAT(std::string(a.status().message()), HasSubstr(c.error));
    return;
  }
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->label_key, c.label_key);
  EXPECT_EQ(a->reject_everything, c.reject);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ConcentrateArgsTest,
    ::testing::Values(
        ArgsCase{"Absent", "", "app", false, ""},
        ArgsCase{"Empty", "{}", "app", false, ""},
        ArgsCase{"LabelKey", "{labelKey: tier}", "tier", false, ""},
        ArgsCase{"PrefixedKey", "{labelKey: example.com/team}",
                 "example.com/team", false, ""},
        ArgsCase{"Reject", "{rejectEverything: true}", "app", true, ""},
        ArgsCase{"WithKind",
                 "{apiVersion: kubescheduler.config.k8s.io/v1, kind: "
                 "ConcentrateArgs}",
                 "app", false, ""},
        ArgsCase{"BadKey", "{labelKey: a b}", "", false,
                 "profiles[0].pluginConfig[0].args.labelKey: invalid label key "
                 "\"a b\""},
        ArgsCase{"BadPrefix", "{labelKey: Example.com/x}", "", false,
                 "invalid label key \"Example.com/x\": prefix part"},
        ArgsCase{"TooLong",
                 "{labelKey: "
                 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                 "aaaaaaaaa}",
                 "", false, "no more than 63 characters"},
        ArgsCase{"EmptyKey", "{labelKey: \"\"}", "", false,
                 "invalid label key \"\""},
        ArgsCase{"RejectNotBool", "{rejectEverything: yes please}", "", false,
                 "args.rejectEverything: expected true or false"},
        ArgsCase{"UnknownField", "{labelkey: app}", "", false,
                 "args.labelkey: unknown field \"labelkey\""},
        ArgsCase{"WrongKind", "{kind: FooArgs}", "", false,
                 "args.kind: expected ConcentrateArgs"},
        ArgsCase{"NotAMap", "[1, 2]", "", false, "args: expected a mapping"}),
    [](const ::testing::TestParamInfo<ArgsCase>& i) { return i.param.name; });

}  // namespace
}  // namespace kscore::plugins
