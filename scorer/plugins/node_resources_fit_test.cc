#include "scorer/plugins/node_resources_fit.h"

#include <limits>
#include <memory>
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

constexpr int64_t kGi = int64_t{1} << 30;
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr char kPath[] = "profiles[0].pluginConfig[1].args";

// cpu and memory requests explicitly set to zero.
pb::Resources ZeroRequests() {
  pb::Resources r;
  r.set_milli_cpu(0);
  r.set_memory(0);
  return r;
}

std::unique_ptr<NodeResourcesFit> MakeFit(const std::string& yaml) {
  YAML::Node node = yaml.empty() ? YAML::Node() : YAML::Load(yaml);
  absl::StatusOr<NodeResourcesFit::Args> args =
      NodeResourcesFit::ParseArgs(model::YamlField(node, kPath));
  EXPECT_TRUE(args.ok()) << args.status();
  return std::make_unique<NodeResourcesFit>(
      args.ok() ? *args : NodeResourcesFit::Args());
}

TEST(NodeResourcesFitTest, Filter) {
  struct Case {
    std::string name;
    pb::Pod pod;
    pb::Node node;
    framework::Code code;
    std::vector<std::string> reasons;
    std::string args = "";
  };
  using framework::Code;
  // The default node: 4 CPUs, 16Gi, 110 pods.
  std::vector<Case> cases = {
      {"empty pod", MakePod().Obj(), MakeNode().Obj(), Code::kSuccess, {}},
      {"fits exactly",
       MakePod().Req(1000, 4 * kGi).Obj(),
       MakeNode().Requested(3000, 12 * kGi).Obj(),
       Code::kSuccess,
       {}},
      {"too many pods",
       MakePod().Obj(),
       MakeNode().PodCount(110).Obj(),
       Code::kUnschedulable,
       {"Too many pods"}},
      {"insufficient cpu",
       MakePod().Req(1001, 0).Obj(),
       MakeNode().Requested(3000, 0).Obj(),
       Code::kUnschedulable,
       {"Insufficient cpu"}},
      {"more cpu than the node has",
       MakePod().Req(4001, 0).Obj(),
       MakeNode().Obj(),
       Code::kUnschedulableAndUnresolvable,
       {"Insufficient cpu"}},
      {"request equal to the node's cpu is still resolvable",
       MakePod().Req(4000, 0).Obj(),
       MakeNode().Requested(1, 0).Obj(),
       Code::kUnschedulable,
       {"Insufficient cpu"}},
      {"insufficient memory",
       MakePod().Req(0, 5 * kGi).Obj(),
       MakeNode().Requested(0, 12 * kGi).Obj(),
       Code::kUnschedulable,
       {"Insufficient memory"}},
      {"every shortage is listed",
       MakePod().Req(2000, 8 * kGi).Obj(),
       MakeNode().Requested(3000, 12 * kGi).PodCount(110).Obj(),
       Code::kUnschedulable,
       {"Too many pods", "Insufficient cpu", "Insufficient memory"}},
      {"insufficient ephemeral storage",
       MakePod().EphemeralReq(2 * kGi).Obj(),
       MakeNode().EphemeralCapacity(10 * kGi).EphemeralRequested(9 * kGi).Obj(),
       Code::kUnschedulable,
       {"Insufficient ephemeral-storage"}},
      {"ephemeral storage the node does not report",
       MakePod().EphemeralReq(1).Obj(),
       MakeNode().Obj(),
       Code::kUnschedulableAndUnresolvable,
       {"Insufficient ephemeral-storage"}},
      {"extended resource fits",
       MakePod().ScalarReq("example.com/gpu", 2).Obj(),
       MakeNode()
           .ScalarCapacity("example.com/gpu", 4)
           .ScalarRequested("example.com/gpu", 2)
           .Obj(),
       Code::kSuccess,
       {}},
      {"extended resource used up",
       MakePod().ScalarReq("example.com/gpu", 2).Obj(),
       MakeNode()
           .ScalarCapacity("example.com/gpu", 4)
           .ScalarRequested("example.com/gpu", 3)
           .Obj(),
       Code::kUnschedulable,
       {"Insufficient example.com/gpu"}},
      {"extended resource the node lacks",
       MakePod().ScalarReq("example.com/gpu", 1).Obj(),
       MakeNode().Obj(),
       Code::kUnschedulableAndUnresolvable,
       {"Insufficient example.com/gpu"}},
      {"unresolvable if any shortage is",
       MakePod().Req(1000, 0).ScalarReq("example.com/gpu", 1).Obj(),
       MakeNode().Requested(3500, 0).Obj(),
       Code::kUnschedulableAndUnresolvable,
       {"Insufficient cpu", "Insufficient example.com/gpu"}},
      {"scalar reasons sorted by name",
       MakePod().ScalarReq("z.io/b", 1).ScalarReq("a.io/a", 1).Obj(),
       MakeNode().Obj(),
       Code::kUnschedulableAndUnresolvable,
       {"Insufficient a.io/a", "Insufficient z.io/b"}},
      {"hugepages",
       MakePod().ScalarReq("hugepages-2Mi", 4 << 20).Obj(),
       MakeNode().ScalarCapacity("hugepages-2Mi", 2 << 20).Obj(),
       Code::kUnschedulableAndUnresolvable,
       {"Insufficient hugepages-2Mi"}},
      {"ignoredResources",
       MakePod().ScalarReq("example.com/gpu", 1).Obj(),
       MakeNode().Obj(),
       Code::kSuccess,
       {},
       "{ignoredResources: [example.com/gpu]}"},
      {"ignoredResourceGroups",
       MakePod()
           .ScalarReq("example.com/gpu", 1)
           .ScalarReq("other.io/x", 1)
           .Obj(),
       MakeNode().Obj(),
       Code::kUnschedulableAndUnresolvable,
       {"Insufficient other.io/x"},
       "{ignoredResourceGroups: [example.com]}"},
      {"native resources cannot be ignored",
       MakePod().ScalarReq("hugepages-2Mi", 1).Obj(),
       MakeNode().Obj(),
       Code::kUnschedulableAndUnresolvable,
       {"Insufficient hugepages-2Mi"},
       "{ignoredResources: [hugepages-2Mi]}"},
      {"init container requests count",
       MakePod().InitReq(3500, 0).Req(100, 0).Obj(),
       MakeNode().Requested(1000, 0).Obj(),
       Code::kUnschedulable,
       {"Insufficient cpu"}},
      {"overhead counts",
       MakePod().Req(900, 0).Overhead(200, 0).Obj(),
       MakeNode().Requested(3000, 0).Obj(),
       Code::kUnschedulable,
       {"Insufficient cpu"}},
      {"pod-level requests replace the containers' sum",
       MakePod().Req(100, kGi).PodLevelReq(testing::Amounts(3000, 0)).Obj(),
       MakeNode().Requested(2000, 0).Obj(),
       Code::kUnschedulable,
       {"Insufficient cpu"}},
      {"pod-level requests more than the node has",
       MakePod().Req(100, 0).PodLevelReq(testing::Amounts(0, 17 * kGi)).Obj(),
       MakeNode().Obj(),
       Code::kUnschedulableAndUnresolvable,
       {"Insufficient memory"}},
      // Summed in int64 the two requests wrap to -4: a pod that fits
      // every node. Saturated, they are more than any node has.
      {"requests near the int64 limit do not add up to a fit",
       MakePod().Req(kMax - 1, 0).Req(kMax - 1, 0).Obj(),
       MakeNode().Obj(),
       Code::kUnschedulableAndUnresolvable,
       {"Insufficient cpu"}},
      {"extended requests near the int64 limit do not add up to a fit",
       MakePod()
           .ScalarReq("example.com/gpu", kMax)
           .Req(0, 0)
           .ScalarReq("example.com/gpu", 2)
           .Obj(),
       MakeNode().ScalarCapacity("example.com/gpu", 4).Obj(),
       Code::kUnschedulableAndUnresolvable,
       {"Insufficient example.com/gpu"}},
      {"zero requests never miss, even on a full node",
       MakePod().Req(0, 0).Obj(),
       MakeNode().Requested(4000, 16 * kGi).Obj(),
       Code::kSuccess,
       {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::unique_ptr<NodeResourcesFit> pl = MakeFit(c.args);
    framework::CycleState written;
    ASSERT_TRUE(pl->PreFilter(written, c.pod).ok());
    framework::CycleState state(written.bytes());
    framework::PluginStatus s = pl->Filter(state, c.pod, c.node);
    EXPECT_EQ(s.code, c.code);
    EXPECT_THAT(s.reasons, ElementsAreArray(c.reasons));
  }
}

TEST(NodeResourcesFitTest, FilterWithoutPreFilterIsAnError) {
  std::unique_ptr<NodeResourcesFit> pl = MakeFit("");
  framework::CycleState state;
  framework::PluginStatus s =
      pl->Filter(state, MakePod().Obj(), MakeNode().Obj());
  EXPECT_EQ(s.code, framework::Code::kError);
  EXPECT_THAT(s.reasons, ElementsAre(HasSubstr("PreFilterNodeResourcesFit")));
}

TEST(NodeResourcesFitTest, Score) {
  struct Case {
    std::string name;
    std::string args;
    pb::Pod pod;
    std::vector<pb::Node> nodes;
    std::vector<int64_t> want;
  };
  const pb::Pod pod = MakePod().Req(3000, 5000).Obj();
  const std::vector<pb::Node> nodes = {
      MakeNode().Name("small").Capacity(4000, 10000, 110).Obj(),
      MakeNode().Name("large").Capacity(6000, 10000, 110).Obj()};
  std::vector<Case> cases = {
      // cpu (4000-3000)*100/4000 = 25, memory 50: (25+50)/2.
      {"LeastAllocated (default)", "", pod, nodes, {37, 50}},
      {"LeastAllocated, weighted",
       "{scoringStrategy: {type: LeastAllocated, resources: [{name: cpu, "
       "weight: 2}, {name: memory, weight: 1}]}}",
       pod,
       nodes,
       {33, 50}},
      {"MostAllocated",
       "{scoringStrategy: {type: MostAllocated}}",
       pod,
       nodes,
       {62, 50}},
      // Utilization 75 -> 25, 50 -> 50; rounded average 37.5 -> 38.
      {"RequestedToCapacityRatio, spreading shape",
       "{scoringStrategy: {type: RequestedToCapacityRatio, "
       "requestedToCapacityRatio: {shape: [{utilization: 0, score: 10}, "
       "{utilization: 100, score: 0}]}}}",
       pod,
       nodes,
       {38, 50}},
      {"RequestedToCapacityRatio, packing shape",
       "{scoringStrategy: {type: RequestedToCapacityRatio, "
       "requestedToCapacityRatio: {shape: [{utilization: 0, score: 0}, "
       "{utilization: 100, score: 10}]}}}",
       pod,
       nodes,
       {63, 50}},
      {"pod without requests counts as 100m/200Mi",
       "",
       MakePod().Req(0, 0).Obj(),
       {MakeNode().Capacity(1000, 1000 << 20, 110).Obj()},
       {85}},  // cpu 90, memory 80
      {"explicit zero requests stay zero",
       "",
       MakePod().ReqList(ZeroRequests()).Obj(),
       {MakeNode().Capacity(1000, 1000 << 20, 110).Obj()},
       {100}},  // 85 if they counted as 100m/200Mi
      // Upstream's NodeResourcesFit scores the incoming pod without its
      // pod-level requests (its Filter counts them).
      {"pod-level requests are left out of the score, as upstream's",
       "",
       MakePod().Req(0, 0).PodLevelReq(testing::Amounts(500, 500 << 20)).Obj(),
       {MakeNode().Capacity(1000, 1000 << 20, 110).Obj()},
       {85}},  // the containers' defaults; 50 with the pod-level requests
      {"uses non-zero requested of the node",
       "",
       MakePod().Req(1000, 1000).Obj(),
       {MakeNode()
            .Capacity(4000, 10000, 110)
            .RequestedOnly(0, 0)
            .NonZeroRequested(1000, 4000)
            .Obj()},
       {50}},  // cpu 50, memory 50 (82 if it read `requested`)
      // (capacity - requested) * 100 and requested * 100 overflow int64
      // here; taken in 128 bits they give upstream's formula's value.
      {"LeastAllocated near the int64 limit",
       "",
       MakePod().Req(kMax / 2, kMax / 2).Obj(),
       {MakeNode().Capacity(kMax, kMax, 110).Obj()},
       {50}},
      {"MostAllocated near the int64 limit",
       "{scoringStrategy: {type: MostAllocated}}",
       MakePod().Req(kMax / 2, kMax / 2).Obj(),
       {MakeNode().Capacity(kMax, kMax, 110).Obj()},
       {49}},
      {"RequestedToCapacityRatio near the int64 limit",
       "{scoringStrategy: {type: RequestedToCapacityRatio, "
       "requestedToCapacityRatio: {shape: [{utilization: 0, score: 0}, "
       "{utilization: 100, score: 10}]}}}",
       MakePod().Req(kMax / 2, kMax / 2).Obj(),
       {MakeNode().Capacity(kMax, kMax, 110).Obj()},
       {49}},
      // The node's aggregate plus the pod's request saturates: over
      // capacity, not wrapped below it.
      {"requested near the int64 limit plus the pod is over capacity",
       "",
       MakePod().Req(1000, 1000).Obj(),
       {MakeNode()
            .Capacity(4000, 10000, 110)
            .NonZeroRequested(kMax - 10, kMax - 10)
            .Obj()},
       {0}},
      {"over capacity scores zero",
       "",
       MakePod().Req(5000, 20000).Obj(),
       {MakeNode().Capacity(4000, 10000, 110).Obj()},
       {0}},
      {"extended resource the pod does not request is left out",
       "{scoringStrategy: {type: LeastAllocated, resources: [{name: "
       "example.com/gpu, weight: 1}]}}",
       pod,
       {MakeNode().ScalarCapacity("example.com/gpu", 4).Obj()},
       {0}},
      {"extended resource requested",
       "{scoringStrategy: {type: MostAllocated, resources: [{name: "
       "example.com/gpu, weight: 1}]}}",
       MakePod().ScalarReq("example.com/gpu", 1).Obj(),
       {MakeNode()
            .ScalarCapacity("example.com/gpu", 4)
            .ScalarRequested("example.com/gpu", 1)
            .Obj(),
        MakeNode().Obj()},
       {50, 0}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::unique_ptr<NodeResourcesFit> pl = MakeFit(c.args);
    std::vector<const pb::Node*> ptrs;
    for (const pb::Node& n : c.nodes) ptrs.push_back(&n);
    framework::CycleState written;
    ASSERT_TRUE(pl->PreScore(written, c.pod, ptrs).ok());
    framework::CycleState with_state(written.bytes());
    framework::CycleState without_state;
    for (const framework::CycleState* state : {&with_state, &without_state}) {
      std::vector<int64_t> scores(ptrs.size(), -1);
      ASSERT_TRUE(pl->Score(*state, c.pod, ptrs, absl::MakeSpan(scores)).ok());
      EXPECT_THAT(scores, ElementsAreArray(c.want));
    }
  }
}

TEST(NodeResourcesFitTest, ScoreRejectsStateOfAnotherConfig) {
  std::unique_ptr<NodeResourcesFit> pl = MakeFit("");
  framework::CycleState state(framework::CycleState::Bytes{
      {std::string(NodeResourcesFit::kPreScoreStateKey), "1,2,3"}});
  pb::Node node = MakeNode().Obj();
  std::vector<const pb::Node*> ptrs = {&node};
  std::vector<int64_t> scores(1);
  EXPECT_EQ(
      pl->Score(state, MakePod().Obj(), ptrs, absl::MakeSpan(scores)).code,
      framework::Code::kError);
  framework::CycleState garbage(framework::CycleState::Bytes{
      {std::string(NodeResourcesFit::kPreScoreStateKey), "1,x"}});
  EXPECT_EQ(
      pl->Score(garbage, MakePod().Obj(), ptrs, absl::MakeSpan(scores)).code,
      framework::Code::kError);
  // State comes back from the client: a negative request is refused as one
  // on the pod would be.
  framework::CycleState negative(framework::CycleState::Bytes{
      {std::string(NodeResourcesFit::kPreScoreStateKey), "-100,200"}});
  framework::PluginStatus s =
      pl->Score(negative, MakePod().Obj(), ptrs, absl::MakeSpan(scores));
  EXPECT_EQ(s.code, framework::Code::kError);
  EXPECT_THAT(s.reasons,
              ElementsAre(HasSubstr("must not be negative, got -100")));
}

TEST(NodeResourcesFitTest, FilterRefusesNegativeRequestsInState) {
  std::unique_ptr<NodeResourcesFit> pl = MakeFit("");
  pb::Resources r;
  r.set_milli_cpu(-1);
  framework::CycleState state(framework::CycleState::Bytes{
      {std::string(NodeResourcesFit::kPreFilterStateKey),
       r.SerializeAsString()}});
  framework::PluginStatus s =
      pl->Filter(state, MakePod().Obj(), MakeNode().Obj());
  EXPECT_EQ(s.code, framework::Code::kError);
  EXPECT_THAT(s.reasons, ElementsAre(HasSubstr("must not be negative")));
}

TEST(NodeResourcesFitTest, ArgsDefaults) {
  absl::StatusOr<NodeResourcesFit::Args> a =
      NodeResourcesFit::ParseArgs(model::YamlField(YAML::Node(), kPath));
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->strategy, NodeResourcesFit::Strategy::kLeastAllocated);
  ASSERT_EQ(a->resources.size(), 2u);
  EXPECT_EQ(a->resources[0].name, "cpu");
  EXPECT_EQ(a->resources[1].name, "memory");
  EXPECT_EQ(a->resources[0].weight, 1);

  a = NodeResourcesFit::ParseArgs(model::YamlField(
      YAML::Load("{apiVersion: kubescheduler.config.k8s.io/v1, kind: "
                 "NodeResourcesFitArgs, scoringStrategy: {type: MostAllocated, "
                 "resources: [{name: cpu}, {name: example.com/gpu, weight: "
                 "0}, {name: memory, weight: 7}]}}"),
      kPath));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->strategy, NodeResourcesFit::Strategy::kMostAllocated);
  ASSERT_EQ(a->resources.size(), 3u);
  EXPECT_EQ(a->resources[0].weight, 1);
  EXPECT_EQ(a->resources[1].weight, 1);
  EXPECT_EQ(a->resources[2].weight, 7);
}

TEST(NodeResourcesFitTest, ArgsErrors) {
  struct Case {
    std::string yaml;
    std::string error;
  };
  std::vector<Case> cases = {
      {"{scoringStrategy: {type: Foo}}",
       "profiles[0].pluginConfig[1].args.scoringStrategy.type: unknown type "
       "\"Foo\" (known: LeastAllocated, MostAllocated, "
       "RequestedToCapacityRatio)"},
      {"{scoringStrategy: {resources: [{name: cpu}]}}",
       "scoringStrategy.type: unknown type \"\""},
      {"{scoringStrategy: {type: LeastAllocated, resources: [{name: cpu, "
       "weight: 101}]}}",
       "scoringStrategy.resources[0].weight: resource weight of cpu not in "
       "valid range (0, 100]"},
      {"{scoringStrategy: {type: LeastAllocated, resources: [{name: cpu}, "
       "{name: memory, weight: -1}]}}",
       "scoringStrategy.resources[1].weight: resource weight of memory"},
      {"{scoringStrategy: {type: LeastAllocated, resources: [{name: cpu, "
       "weight: heavy}]}}",
       "scoringStrategy.resources[0].weight: expected an integer"},
      {"{scoringStrategy: {type: LeastAllocated, resources: [{nam: cpu}]}}",
       "scoringStrategy.resources[0].nam: unknown field"},
      {"{scoringStrategy: {type: RequestedToCapacityRatio}}",
       "scoringStrategy.requestedToCapacityRatio: must be specified when type "
       "is RequestedToCapacityRatio"},
      {"{scoringStrategy: {type: RequestedToCapacityRatio, "
       "requestedToCapacityRatio: {shape: []}}}",
       "requestedToCapacityRatio.shape: at least one point must be specified"},
      {"{scoringStrategy: {type: RequestedToCapacityRatio, "
       "requestedToCapacityRatio: {shape: [{utilization: 50, score: 1}, "
       "{utilization: 50, score: 2}]}}}",
       "requestedToCapacityRatio.shape[1].utilization: values must be sorted "
       "in increasing order"},
      {"{scoringStrategy: {type: RequestedToCapacityRatio, "
       "requestedToCapacityRatio: {shape: [{utilization: 0, score: 11}]}}}",
       "requestedToCapacityRatio.shape[0].score: must be between 0 and 10"},
      {"{scoringStrategy: {type: RequestedToCapacityRatio, "
       "requestedToCapacityRatio: {shape: [{utilization: 101, score: 1}]}}}",
       "requestedToCapacityRatio.shape[0].utilization: must be between 0 and "
       "100"},
      {"{scoringStrategy: {type: LeastAllocated, requestedToCapacityRatio: "
       "{shape: [{utilization: 0, score: 1}]}}}",
       "scoringStrategy.requestedToCapacityRatio: must be nil when type is not "
       "RequestedToCapacityRatio"},
      {"{ignoredResources: [-bad]}",
       "profiles[0].pluginConfig[1].args.ignoredResources[0]: invalid resource "
       "name \"-bad\""},
      {"{ignoredResources: example.com/gpu}",
       "args.ignoredResources: expected a list"},
      {"{ignoredResourceGroups: [example.com/gpu]}",
       "args.ignoredResourceGroups[0]: invalid resource group "
       "\"example.com/gpu\": can't contain '/'"},
      {"{scoringStrategy: {type: LeastAllocated, shape: []}}",
       "args.scoringStrategy.shape: unknown field"},
      {"{kind: NodeAffinityArgs}",
       "args.kind: expected NodeResourcesFitArgs, got \"NodeAffinityArgs\""},
      {"{ignoredResource: []}", "args.ignoredResource: unknown field"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.yaml);
    auto pl =
        NodeResourcesFit::New(model::YamlField(YAML::Load(c.yaml), kPath));
    ASSERT_FALSE(pl.ok());
    EXPECT_THAT(pl.status().message(), HasSubstr(c.error));
  }
}

TEST(NodeResourcesFitTest, ResourceNames) {
  EXPECT_TRUE(IsExtendedResourceName("example.com/gpu"));
  EXPECT_FALSE(IsExtendedResourceName("cpu"));
  EXPECT_FALSE(IsExtendedResourceName("hugepages-2Mi"));
  EXPECT_FALSE(IsExtendedResourceName("kubernetes.io/foo"));
  EXPECT_FALSE(IsExtendedResourceName("requests.example.com/gpu"));
  EXPECT_TRUE(IsScalarResourceName("example.com/gpu"));
  EXPECT_TRUE(IsScalarResourceName("hugepages-1Gi"));
  EXPECT_TRUE(IsScalarResourceName("attachable-volumes-aws-ebs"));
  EXPECT_FALSE(IsScalarResourceName("memory"));
  EXPECT_FALSE(IsScalarResourceName("ephemeral-storage"));
}

// Upstream's Test_isSchedulableAfterNodeChange (noderesources/fit_test.go),
// plus the no-request cases of TestHaveAnyRequestedResourcesIncreased, with
// upstream's expected hints. Upstream's nodes have 32 pods of room and no
// cpu; its pods request memory and example.com/aaa.
TEST(NodeResourcesFitTest, HintAfterNodeChange) {
  using model::QueueingHint;
  const std::string a = "example.com/aaa";
  const std::string b = "example.com/bbb";
  auto node = [](int64_t memory, int64_t pods = 32) {
    return MakeNode().Capacity(0, memory, pods);
  };
  const pb::Pod mem2_a1 = MakePod().Req(0, 2).ScalarReq(a, 1).Obj();
  struct Case {
    std::string name;
    pb::Pod pod;
    std::optional<pb::Node> old_node, new_node;
    QueueingHint want;
  };
  std::vector<Case> cases = {
      {"backoff-wrong-new-object (no node)", mem2_a1, std::nullopt,
       std::nullopt, QueueingHint::kQueue},
      {"skip-queue-on-node-add-without-sufficient-resources",
       MakePod().Req(0, 2).Obj(), std::nullopt, node(1).Obj(),
       QueueingHint::kQueueSkip},
      {"skip-queue-on-node-add-without-required-resource-type",
       MakePod().ScalarReq(a, 1).Obj(), std::nullopt,
       node(0).ScalarCapacity(b, 1).Obj(), QueueingHint::kQueueSkip},
      {"queue-on-node-add-with-sufficient-resources", mem2_a1, std::nullopt,
       node(4).ScalarCapacity(a, 2).Obj(), QueueingHint::kQueue},
      {"skip-queue-on-node-unrelated-changes", mem2_a1,
       node(2).ScalarCapacity(a, 2).Obj(),
       node(2).ScalarCapacity(a, 1).ScalarCapacity(b, 2).Obj(),
       QueueingHint::kQueueSkip},
      {"queue-on-pod-requested-resources-increase", mem2_a1,
       node(2).ScalarCapacity(a, 1).Obj(), node(2).ScalarCapacity(a, 2).Obj(),
       QueueingHint::kQueue},
      {"skip-queue-on-node-changes-from-suitable-to-unsuitable", mem2_a1,
       node(4).ScalarCapacity(a, 2).Obj(), node(1).ScalarCapacity(a, 2).Obj(),
       QueueingHint::kQueueSkip},
      {"queue-on-node-changes-from-unsuitable-to-suitable", mem2_a1,
       node(1).ScalarCapacity(a, 2).Obj(), node(4).ScalarCapacity(a, 2).Obj(),
       QueueingHint::kQueue},
      // TestHaveAnyRequestedResourcesIncreased: a pod requesting nothing.
      {"no-requested-resources", MakePod().Obj(),
       MakeNode().Capacity(1000, 1, 1).EphemeralCapacity(1).Obj(),
       MakeNode().Capacity(2000, 2, 1).EphemeralCapacity(2).Obj(),
       QueueingHint::kQueueSkip},
      {"no-requested-resources-pods-increased", MakePod().Obj(),
       MakeNode().Capacity(1000, 1, 1).Obj(),
       MakeNode().Capacity(1000, 1, 2).Obj(), QueueingHint::kQueue},
      // kscore's own: the event's node carries no aggregates, and any it
      // carried are not read (upstream's isFit puts no pods on the node).
      {"aggregates on the node are not read", mem2_a1, std::nullopt,
       node(4).ScalarCapacity(a, 2).RequestedOnly(0, 4).PodCount(32).Obj(),
       QueueingHint::kQueue},
  };
  auto fit = MakeFit("");
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const model::EventObjects e = ::kscore::testing::NodeEvent(
        c.old_node ? model::action::kUpdateNodeAllocatable
                   : model::action::kAdd,
        c.old_node ? &*c.old_node : nullptr,
        c.new_node ? &*c.new_node : nullptr);
    EXPECT_EQ(fit->Hint(c.pod, e), c.want);
  }
}

// kscore's own: the hint follows Filter, which skips ignoredResources
// (upstream's isFit does not, and would skip this pod).
TEST(NodeResourcesFitTest, HintIgnoresWhatFilterIgnores) {
  auto fit = MakeFit("{ignoredResources: [example.com/aaa]}");
  const pb::Pod pod = MakePod().Req(0, 2).ScalarReq("example.com/aaa", 1).Obj();
  const pb::Node added = MakeNode().Capacity(0, 4, 32).Obj();
  framework::CycleState state;
  ASSERT_TRUE(fit->PreFilter(state, pod).ok());
  ASSERT_TRUE(fit->Filter(state, pod, added).ok());
  EXPECT_EQ(fit->Hint(pod, ::kscore::testing::NodeEvent(model::action::kAdd,
                                                        nullptr, &added)),
            model::QueueingHint::kQueue);
}

// Upstream's Test_isSchedulableAfterAssignedPodDelete, the cases kscore can
// express: pb::Pod carries no nominatedNodeName, and the deferred-resize
// cases need a gate that is off by default.
TEST(NodeResourcesFitTest, HintAfterAssignedPodDelete) {
  using model::QueueingHint;
  struct Case {
    std::string name;
    pb::Pod pod;
    std::optional<pb::Pod> deleted;
    QueueingHint want;
  };
  std::vector<Case> cases = {
      {"backoff-wrong-old-object (no pod)", MakePod().Req(1000, 0).Obj(),
       std::nullopt, QueueingHint::kQueue},
      {"queue-on-other-pod-deleted", MakePod().Name("pod1").Req(1000, 0).Obj(),
       MakePod().Name("pod2").Req(1000, 0).NodeName("fake").Obj(),
       QueueingHint::kQueue},
      {"skip-queue-on-unscheduled-pod-deleted", MakePod().Obj(),
       MakePod().Name("pod2").Obj(), QueueingHint::kQueueSkip},
  };
  auto fit = MakeFit("");
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(fit->Hint(c.pod, ::kscore::testing::AssignedPodDelete(
                                   c.deleted ? &*c.deleted : nullptr)),
              c.want);
  }
}

}  // namespace
}  // namespace kscore::plugins
