#include "scorer/plugins/node_name.h"

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
using ::testing::HasSubstr;
namespace pb = framework::pb;

TEST(NodeNameTest, Filter) {
  struct Case {
    std::string name;
    pb::Pod pod;
    pb::Node node;
    bool fits;
  };
  std::vector<Case> cases = {
      {"no node name", MakePod().Obj(), MakeNode().Name("n1").Obj(), true},
      {"same node", MakePod().NodeName("n1").Obj(), MakeNode().Name("n1").Obj(),
       true},
      {"other node", MakePod().NodeName("n2").Obj(),
       MakeNode().Name("n1").Obj(), false},
      {"prefix is not a match", MakePod().NodeName("n").Obj(),
       MakeNode().Name("n1").Obj(), false},
  };
  NodeName pl;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    framework::CycleState state;
    framework::PluginStatus s = pl.Filter(state, c.pod, c.node);
    if (c.fits) {
      EXPECT_EQ(s.code, framework::Code::kSuccess);
    } else {
      EXPECT_EQ(s.code, framework::Code::kUnschedulableAndUnresolvable);
      EXPECT_THAT(s.reasons,
                  ElementsAre("node(s) didn't match the requested node name"));
    }
  }
}

TEST(NodeNameTest, Args) {
  EXPECT_TRUE(NodeName::New(model::YamlField(YAML::Node(), "args")).ok());
  EXPECT_TRUE(NodeName::New(
                  model::YamlField(YAML::Load("{kind: NodeNameArgs}"), "args"))
                  .ok());
  auto bad = NodeName::New(model::YamlField(
      YAML::Load("[1, 2]"), "profiles[1].pluginConfig[0].args"));
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(
      bad.status().message(),
      HasSubstr("profiles[1].pluginConfig[0].args: expected a mapping"));
}

}  // namespace
}  // namespace kscore::plugins
