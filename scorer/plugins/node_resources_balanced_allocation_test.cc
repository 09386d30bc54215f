#include "scorer/plugins/node_resources_balanced_allocation.h"

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
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
namespace pb = framework::pb;

constexpr char kPath[] = "profiles[0].pluginConfig[4].args";

NodeResourcesBalancedAllocation MakePlugin(const std::string& yaml) {
  YAML::Node node = yaml.empty() ? YAML::Node() : YAML::Load(yaml);
  auto args =
      NodeResourcesBalancedAllocation::ParseArgs(model::YamlField(node, kPath));
  EXPECT_TRUE(args.ok()) << args.status();
  return NodeResourcesBalancedAllocation(
      args.ok() ? *args : NodeResourcesBalancedAllocation::Args());
}

TEST(NodeResourcesBalancedAllocationTest, Score) {
  struct Case {
    std::string name;
    std::string args;
    pb::Pod pod;
    std::vector<pb::Node> nodes;
    std::vector<int64_t> want;
  };
  std::vector<Case> cases = {
      // small: with the pod 0.75/0.5 -> std 0.125 -> 87; empty before -> 100;
      // 50 + (50 + 87 - 100) / 2 = 68. large: 0.5/0.5 both -> 75.
      {"empty nodes",
       "",
       MakePod().Req(3000, 5000).Obj(),
       {MakeNode().Capacity(4000, 10000, 110).Obj(),
        MakeNode().Capacity(6000, 10000, 110).Obj()},
       {68, 75}},
      // Before: 0.75/0 -> std 0.375 -> 62; after: 0.75/0.75 -> 100;
      // 50 + (50 + 100 - 62) / 2 = 94.
      // As "empty nodes": the pod-level requests replace the containers'.
      {"pod-level requests",
       "",
       MakePod().Req(100, 100).PodLevelReq(testing::Amounts(3000, 5000)).Obj(),
       {MakeNode().Capacity(4000, 10000, 110).Obj(),
        MakeNode().Capacity(6000, 10000, 110).Obj()},
       {68, 75}},
      {"pod that improves the balance",
       "",
       MakePod().Req(0, 7500).Obj(),
       {MakeNode().Capacity(4000, 10000, 110).RequestedOnly(3000, 0).Obj()},
       {94}},
      {"reads requested, not non_zero_requested",
       "",
       MakePod().Req(0, 7500).Obj(),
       {MakeNode()
            .Capacity(4000, 10000, 110)
            .RequestedOnly(3000, 0)
            .NonZeroRequested(3100, 200)
            .Obj()},
       {94}},
      {"fractions are capped at 1",
       "",
       MakePod().Req(8000, 5000).Obj(),
       {MakeNode().Capacity(4000, 10000, 110).Obj()},
       // After: 1/0.5 -> std 0.25 -> 75; 50 + (50 + 75 - 100) / 2 = 62.
       {62}},
      // After: 0.5/0.5/1.0 -> std 0.2357 -> 76; before 0.25 x3 -> 100;
      // 50 + (50 + 76 - 100) / 2 = 63.
      {"three resources",
       "{resources: [{name: cpu}, {name: memory}, {name: example.com/gpu}]}",
       MakePod().Req(1000, 2500).ScalarReq("example.com/gpu", 3).Obj(),
       {MakeNode()
            .Capacity(4000, 10000, 110)
            .RequestedOnly(1000, 2500)
            .ScalarCapacity("example.com/gpu", 4)
            .ScalarRequested("example.com/gpu", 1)
            .Obj()},
       {63}},
      // The gpu is left out where the node lacks it: two fractions remain.
      {"extended resource the node lacks",
       "{resources: [{name: cpu}, {name: memory}, {name: example.com/gpu}]}",
       MakePod().Req(3000, 5000).ScalarReq("example.com/gpu", 1).Obj(),
       {MakeNode().Capacity(4000, 10000, 110).Obj()},
       {68}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    NodeResourcesBalancedAllocation pl = MakePlugin(c.args);
    std::vector<const pb::Node*> ptrs;
    for (const pb::Node& n : c.nodes) ptrs.push_back(&n);
    framework::CycleState written;
    ASSERT_EQ(pl.PreScore(written, c.pod, ptrs).code,
              framework::Code::kSuccess);
    framework::CycleState with_state(written.bytes());
    framework::CycleState without_state;
    for (const framework::CycleState* state : {&with_state, &without_state}) {
      std::vector<int64_t> scores(ptrs.size(), -1);
      ASSERT_TRUE(pl.Score(*state, c.pod, ptrs, absl::MakeSpan(scores)).ok());
      EXPECT_THAT(scores, ElementsAreArray(c.want));
    }
  }
}

TEST(NodeResourcesBalancedAllocationTest, BestEffortPodIsSkipped) {
  NodeResourcesBalancedAllocation pl = MakePlugin("");
  pb::Pod pod = MakePod().Req(0, 0).Obj();
  pb::Node node = MakeNode().RequestedOnly(3000, 0).Obj();
  std::vector<const pb::Node*> ptrs = {&node};
  framework::CycleState state;
  EXPECT_EQ(pl.PreScore(state, pod, ptrs).code, framework::Code::kSkip);
  EXPECT_TRUE(state.bytes().empty());
  std::vector<int64_t> scores = {-1};
  ASSERT_TRUE(pl.Score(state, pod, ptrs, absl::MakeSpan(scores)).ok());
  EXPECT_THAT(scores, ElementsAreArray({0}));
}

TEST(NodeResourcesBalancedAllocationTest, Args) {
  NodeResourcesBalancedAllocation pl = MakePlugin("");
  ASSERT_EQ(pl.args().resources.size(), 2u);
  EXPECT_EQ(pl.args().resources[0].name, "cpu");
  EXPECT_EQ(pl.args().resources[1].name, "memory");
  EXPECT_EQ(MakePlugin("{kind: NodeResourcesBalancedAllocationArgs, resources: "
                       "[{name: cpu, weight: 0}]}")
                .args()
                .resources[0]
                .weight,
            1);

  struct Case {
    std::string yaml;
    std::string error;
  };
  std::vector<Case> cases = {
      {"{resources: [{name: cpu, weight: 2}]}",
       "profiles[0].pluginConfig[4].args.resources[0].weight: must be 1"},
      {"{resources: [{name: cpu}, {name: cpu}]}",
       "args.resources[1].name: duplicate resource \"cpu\""},
      {"{resources: {name: cpu}}", "args.resources: expected a list"},
      {"{resources: [{name: cpu, wieght: 1}]}",
       "args.resources[0].wieght: unknown field"},
      {"{shape: []}", "args.shape: unknown field"},
      {"{kind: NodeResourcesFitArgs}",
       "args.kind: expected NodeResourcesBalancedAllocationArgs"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.yaml);
    auto p = NodeResourcesBalancedAllocation::New(
        model::YamlField(YAML::Load(c.yaml), kPath));
    ASSERT_FALSE(p.ok());
    EXPECT_THAT(p.status().message(), HasSubstr(c.error));
  }
}

}  // namespace
}  // namespace kscore::plugins
