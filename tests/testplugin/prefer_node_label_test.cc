#include "tests/testplugin/prefer_node_label.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scorer/testing/wrappers.h"

namespace kscore::testplugin {
namespace {

using ::kscore::testing::MakeNode;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(PreferNodeLabelTest, ScoresLabelledNodesAndNeedsLabels) {
  auto plugin = PreferNodeLabel::New(model::YamlField(
      YAML::Load("{labelKey: tier, labelValue: gold}"), "args"));
  ASSERT_TRUE(plugin.ok()) << plugin.status();
  const auto* score =
      dynamic_cast<const framework::ScorePlugin*>(plugin->get());
  ASSERT_NE(score, nullptr);
  EXPECT_EQ(score->NodeLabels(), framework::NodeLabelUse::kAlways);
  framework::pb::Node gold = MakeNode().Name("a").Label("tier", "gold").Obj();
  framework::pb::Node silver =
      MakeNode().Name("b").Label("tier", "silver").Obj();
  framework::pb::Node bare = MakeNode().Name("c").Obj();
  std::vector<const framework::pb::Node*> nodes = {&silver, &gold, &bare};
  std::vector<int64_t> scores(3, -1);
  framework::CycleState state;
  ASSERT_TRUE(
      score->Score(state, framework::pb::Pod(), nodes, absl::MakeSpan(scores))
          .ok());
  EXPECT_THAT(scores, ElementsAre(0, 100, 0));
}

TEST(PreferNodeLabelTest, LabelKeyIsRequired) {
  auto plugin = PreferNodeLabel::New(
      model::YamlField(YAML::Load("{labelValue: gold}"), "args"));
  ASSERT_FALSE(plugin.ok());
  EXPECT_THAT(std::string(plugin.status().message()),
              HasSubstr("args.labelKey: Required value"));
}

}  // namespace
}  // namespace kscore::testplugin
