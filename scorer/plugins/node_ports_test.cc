#include "scorer/plugins/node_ports.h"

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

TEST(NodePortsTest, PreFilter) {
  struct Case {
    std::string name;
    pb::Pod pod;
    framework::Code code;
  };
  std::vector<Case> cases = {
      {"no containers", MakePod().Obj(), framework::Code::kSkip},
      {"container port without host port", MakePod().HostPort(0).Obj(),
       framework::Code::kSkip},
      {"host port", MakePod().HostPort(8080).Obj(), framework::Code::kSuccess},
      {"sidecar host port", MakePod().InitHostPort(8080, "TCP").Obj(),
       framework::Code::kSuccess},
      {"plain init container host port is ignored",
       MakePod().InitReq(0, 0).InitHostPort(8080).Obj(),
       framework::Code::kSkip},
  };
  // InitHostPort adds to the last init container; make the sidecar one.
  cases[3].pod.mutable_init_containers(0)->set_restart_policy("Always");
  NodePorts pl;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    framework::CycleState state;
    EXPECT_EQ(pl.PreFilter(state, c.pod).code, c.code);
  }
}

TEST(NodePortsTest, Filter) {
  struct Case {
    std::string name;
    pb::Pod pod;
    pb::Node node;
    bool fits;
  };
  std::vector<Case> cases = {
      {"no ports in use", MakePod().HostPort(80).Obj(), MakeNode().Obj(), true},
      {"other port", MakePod().HostPort(80).Obj(),
       MakeNode().UsedPort(81).Obj(), true},
      {"same port and protocol", MakePod().HostPort(80).Obj(),
       MakeNode().UsedPort(80).Obj(), false},
      {"empty protocol means TCP", MakePod().HostPort(80, "").Obj(),
       MakeNode().UsedPort(80, "TCP").Obj(), false},
      {"empty protocol in use means TCP", MakePod().HostPort(80, "TCP").Obj(),
       MakeNode().UsedPort(80, "").Obj(), false},
      {"other protocol", MakePod().HostPort(80, "UDP").Obj(),
       MakeNode().UsedPort(80, "TCP").Obj(), true},
      {"different host IPs", MakePod().HostPort(80, "TCP", "10.0.0.1").Obj(),
       MakeNode().UsedPort(80, "TCP", "10.0.0.2").Obj(), true},
      {"same host IP", MakePod().HostPort(80, "TCP", "10.0.0.1").Obj(),
       MakeNode().UsedPort(80, "TCP", "10.0.0.1").Obj(), false},
      {"pod binds all addresses",
       MakePod().HostPort(80, "TCP", "0.0.0.0").Obj(),
       MakeNode().UsedPort(80, "TCP", "10.0.0.2").Obj(), false},
      {"empty host IP binds all addresses", MakePod().HostPort(80).Obj(),
       MakeNode().UsedPort(80, "TCP", "10.0.0.2").Obj(), false},
      {"node binds all addresses",
       MakePod().HostPort(80, "TCP", "10.0.0.1").Obj(),
       MakeNode().UsedPort(80, "TCP", "").Obj(), false},
      {"second container conflicts",
       MakePod().HostPort(80).Req(0, 0).HostPort(443).Obj(),
       MakeNode().UsedPort(443).Obj(), false},
      {"sidecar port conflicts", MakePod().InitHostPort(9000).Obj(),
       MakeNode().UsedPort(9000).Obj(), false},
      {"pod without host ports", MakePod().Req(100, 0).Obj(),
       MakeNode().UsedPort(80).Obj(), true},
  };
  cases[12].pod.mutable_init_containers(0)->set_restart_policy("Always");
  NodePorts pl;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    framework::CycleState state;
    framework::PluginStatus s = pl.Filter(state, c.pod, c.node);
    if (c.fits) {
      EXPECT_EQ(s.code, framework::Code::kSuccess);
    } else {
      EXPECT_EQ(s.code, framework::Code::kUnschedulable);
      EXPECT_THAT(s.reasons,
                  ElementsAre("node(s) didn't have free ports for the "
                              "requested pod ports"));
    }
  }
}

TEST(NodePortsTest, Args) {
  EXPECT_TRUE(NodePorts::New(model::YamlField(YAML::Node(), "args")).ok());
  auto bad =
      NodePorts::New(model::YamlField(YAML::Load("{ports: [80]}"), "p.args"));
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("p.args.ports: unknown field"));
}

// Upstream's Test_isSchedulableAfterAssignedPodDeleted (nodeports), with
// its expected hints.
TEST(NodePortsTest, HintAfterAssignedPodDelete) {
  using model::QueueingHint;
  const pb::Pod pod = MakePod().HostPort(8080).Obj();
  struct Case {
    std::string name;
    std::optional<pb::Pod> deleted;
    QueueingHint want;
  };
  std::vector<Case> cases = {
      {"backoff-wrong-old-object (no pod)", std::nullopt, QueueingHint::kQueue},
      {"skip-queue-on-unscheduled", MakePod().Obj(), QueueingHint::kQueueSkip},
      {"skip-queue-on-non-hostport", MakePod().NodeName("fake-node").Obj(),
       QueueingHint::kQueueSkip},
      {"skip-queue-on-unrelated-hostport",
       MakePod().NodeName("fake-node").HostPort(8081).Obj(),
       QueueingHint::kQueueSkip},
      {"queue-on-released-hostport",
       MakePod().NodeName("fake-node").HostPort(8080).Obj(),
       QueueingHint::kQueue},
      // kscore's own: the conflict rule is Filter's (another protocol, or
      // an unscheduled pod holding the port, frees nothing).
      {"same port, other protocol",
       MakePod().NodeName("fake-node").HostPort(8080, "UDP").Obj(),
       QueueingHint::kQueueSkip},
      {"unscheduled pod with the port", MakePod().HostPort(8080).Obj(),
       QueueingHint::kQueueSkip},
  };
  const NodePorts pl;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(pl.Hint(pod, ::kscore::testing::AssignedPodDelete(
                               c.deleted ? &*c.deleted : nullptr)),
              c.want);
  }
}

}  // namespace
}  // namespace kscore::plugins
