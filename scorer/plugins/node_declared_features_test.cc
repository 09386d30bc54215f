#include "scorer/plugins/node_declared_features.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scorer/testing/wrappers.h"

namespace kscore::plugins {
namespace {

using ::kscore::testing::MakeNode;
using ::kscore::testing::MakePod;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
namespace pb = framework::pb;

pb::Pod RestartAllPod() {
  pb::Pod pod = MakePod().Obj();
  pod.add_init_containers()->add_restart_rule_actions("RestartAllContainers");
  return pod;
}

pb::Node NodeDeclaring(std::vector<std::string> features) {
  pb::Node node = MakeNode().Obj();
  for (std::string& f : features) node.add_declared_features(std::move(f));
  return node;
}

// kube-scheduler v1.37's inference (nodedeclaredfeatures InferForScheduling).
TEST(NodeDeclaredFeaturesTest, InfersTheFeaturesAPodNeeds) {
  EXPECT_THAT(NodeDeclaredFeatures::RequiredFeatures(MakePod().Obj()),
              IsEmpty());
  EXPECT_THAT(NodeDeclaredFeatures::RequiredFeatures(RestartAllPod()),
              ElementsAre("RestartAllContainersOnContainerExits"));

  pb::Pod other_action = MakePod().Obj();
  other_action.add_containers()->add_restart_rule_actions("Restart");
  EXPECT_THAT(NodeDeclaredFeatures::RequiredFeatures(other_action), IsEmpty());

  pb::Pod userns = MakePod().Obj();
  userns.set_host_network(true);
  EXPECT_THAT(NodeDeclaredFeatures::RequiredFeatures(userns), IsEmpty());
  userns.set_host_users(true);
  EXPECT_THAT(NodeDeclaredFeatures::RequiredFeatures(userns), IsEmpty());
  userns.set_host_users(false);
  EXPECT_THAT(NodeDeclaredFeatures::RequiredFeatures(userns),
              ElementsAre("UserNamespacesHostNetworkSupport"));

  pb::Pod all = RestartAllPod();
  all.set_host_network(true);
  all.set_host_users(false);
  all.add_containers()->set_bind_mount_options(true);
  EXPECT_THAT(NodeDeclaredFeatures::RequiredFeatures(all),
              ElementsAre("RestartAllContainersOnContainerExits",
                          "UserNamespacesHostNetworkSupport",
                          "VolumeBindMountOptions"));
}

TEST(NodeDeclaredFeaturesTest, PodWithoutRequirementsSkips) {
  NodeDeclaredFeatures plugin;
  framework::CycleState state;
  EXPECT_EQ(plugin.PreFilter(state, MakePod().Obj()).code,
            framework::Code::kSkip);
  EXPECT_FALSE(state.bytes().contains(NodeDeclaredFeatures::kStateKey));
}

TEST(NodeDeclaredFeaturesTest, FilterNeedsEveryFeatureDeclared) {
  NodeDeclaredFeatures plugin;
  pb::Pod pod = RestartAllPod();
  pod.add_containers()->set_bind_mount_options(true);
  framework::CycleState state;
  ASSERT_TRUE(plugin.PreFilter(state, pod).ok());

  EXPECT_TRUE(
      plugin
          .Filter(state, pod,
                  NodeDeclaring({"VolumeBindMountOptions", "Other",
                                 "RestartAllContainersOnContainerExits"}))
          .ok());
  for (const pb::Node& node :
       {NodeDeclaring({}), NodeDeclaring({"VolumeBindMountOptions"})}) {
    framework::PluginStatus s = plugin.Filter(state, pod, node);
    EXPECT_EQ(s.code, framework::Code::kUnschedulableAndUnresolvable);
    EXPECT_THAT(s.reasons,
                ElementsAre("node(s) didn't match Pod's required features"));
  }
}

// The state travels as bytes, so another replica's Filter reads it back.
TEST(NodeDeclaredFeaturesTest, StateRoundTripsThroughBytes) {
  NodeDeclaredFeatures plugin;
  pb::Pod pod = RestartAllPod();
  framework::CycleState first;
  ASSERT_TRUE(plugin.PreFilter(first, pod).ok());
  framework::CycleState other(first.bytes());
  EXPECT_FALSE(plugin.Filter(other, pod, NodeDeclaring({})).ok());
  EXPECT_TRUE(
      plugin
          .Filter(other, pod,
                  NodeDeclaring({"RestartAllContainersOnContainerExits"}))
          .ok());
}

}  // namespace
}  // namespace kscore::plugins
