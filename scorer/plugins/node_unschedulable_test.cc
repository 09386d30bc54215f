#include "scorer/plugins/node_unschedulable.h"

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
using ::testing::HasSubstr;
namespace pb = framework::pb;

TEST(NodeUnschedulableTest, Filter) {
  struct Case {
    std::string name;
    pb::Pod pod;
    pb::Node node;
    bool fits;
  };
  const std::string key(NodeUnschedulable::kTaintKey);
  std::vector<Case> cases = {
      {"schedulable node", MakePod().Obj(), MakeNode().Obj(), true},
      {"explicitly schedulable node", MakePod().Obj(),
       MakeNode().Unschedulable(false).Obj(), true},
      {"cordoned node", MakePod().Obj(), MakeNode().Unschedulable().Obj(),
       false},
      {"pod tolerates the unschedulable taint",
       MakePod().Toleration(key, "Exists", "", "NoSchedule").Obj(),
       MakeNode().Unschedulable().Obj(), true},
      {"toleration with empty effect",
       MakePod().Toleration(key, "Exists", "", "").Obj(),
       MakeNode().Unschedulable().Obj(), true},
      {"tolerate-everything toleration",
       MakePod().Toleration("", "Exists", "", "").Obj(),
       MakeNode().Unschedulable().Obj(), true},
      {"Equal with empty value matches the valueless taint",
       MakePod().Toleration(key, "Equal", "", "NoSchedule").Obj(),
       MakeNode().Unschedulable().Obj(), true},
      {"toleration for another effect",
       MakePod().Toleration(key, "Exists", "", "NoExecute").Obj(),
       MakeNode().Unschedulable().Obj(), false},
      {"toleration for another key",
       MakePod().Toleration("other", "Exists", "", "NoSchedule").Obj(),
       MakeNode().Unschedulable().Obj(), false},
      {"Equal with a value does not match",
       MakePod().Toleration(key, "Equal", "x", "NoSchedule").Obj(),
       MakeNode().Unschedulable().Obj(), false},
  };
  NodeUnschedulable pl;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    framework::CycleState state;
    framework::PluginStatus s = pl.Filter(state, c.pod, c.node);
    if (c.fits) {
      EXPECT_EQ(s.code, framework::Code::kSuccess);
      EXPECT_TRUE(s.reasons.empty());
    } else {
      EXPECT_EQ(s.code, framework::Code::kUnschedulableAndUnresolvable);
      EXPECT_THAT(s.reasons, ElementsAre("node(s) were unschedulable"));
    }
  }
}

TEST(NodeUnschedulableTest, Args) {
  EXPECT_TRUE(
      NodeUnschedulable::New(model::YamlField(YAML::Node(), "args")).ok());
  EXPECT_TRUE(NodeUnschedulable::New(
                  model::YamlField(
                      YAML::Load("{apiVersion: kubescheduler.config.k8s.io/v1, "
                                 "kind: NodeUnschedulableArgs}"),
                      "args"))
                  .ok());
  auto bad = NodeUnschedulable::New(model::YamlField(
      YAML::Load("{foo: 1}"), "profiles[0].pluginConfig[2].args"));
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(),
              HasSubstr("profiles[0].pluginConfig[2].args.foo: unknown field"));
}

// Upstream's TestIsSchedulableAfterNodeChange (nodeunschedulable), with its
// expected hints.
TEST(NodeUnschedulableTest, HintAfterNodeChange) {
  using model::QueueingHint;
  const pb::Node cordoned = MakeNode().Unschedulable().Obj();
  const pb::Node open = MakeNode().Obj();
  struct Case {
    std::string name;
    std::optional<pb::Node> old_node, new_node;
    QueueingHint want;
  };
  std::vector<Case> cases = {
      {"error-wrong-new-object (no node)", std::nullopt, std::nullopt,
       QueueingHint::kQueue},
      {"skip-queue-on-unschedulable-node-added", std::nullopt, cordoned,
       QueueingHint::kQueueSkip},
      {"queue-on-schedulable-node-added", std::nullopt, open,
       QueueingHint::kQueue},
      {"skip-unrelated-change-unschedulable-true", cordoned,
       MakeNode()
           .Unschedulable()
           .Taint("node.kubernetes.io/not-ready", "", "NoExecute")
           .Obj(),
       QueueingHint::kQueueSkip},
      {"skip-unrelated-change-unschedulable-false", open,
       MakeNode().Taint("node.kubernetes.io/not-ready", "", "NoExecute").Obj(),
       QueueingHint::kQueueSkip},
      {"queue-on-unschedulable-field-change", cordoned, open,
       QueueingHint::kQueue},
  };
  const NodeUnschedulable pl;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const model::EventObjects e = ::kscore::testing::NodeEvent(
        c.old_node ? model::action::kUpdateNodeTaint : model::action::kAdd,
        c.old_node ? &*c.old_node : nullptr,
        c.new_node ? &*c.new_node : nullptr);
    EXPECT_EQ(pl.Hint(MakePod().Obj(), e), c.want);
  }
}

}  // namespace
}  // namespace kscore::plugins
