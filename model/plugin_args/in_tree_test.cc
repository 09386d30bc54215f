#include "model/plugin_args/in_tree.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/config.h"

namespace kscore::model {
namespace {

using ::testing::HasSubstr;

absl::Status Validate(const std::string& plugin_config) {
  absl::StatusOr<SchedulerConfig> cfg = ParseSchedulerConfig(
      "apiVersion: kubescheduler.config.k8s.io/v1\n"
      "kind: KubeSchedulerConfiguration\n"
      "profiles:\n"
      "- schedulerName: a\n"
      "  pluginConfig:\n" +
      plugin_config);
  if (!cfg.ok()) return cfg.status();
  return ValidatePluginConfig(*cfg);
}

// In-tree args are checked as the plugins' factories check them, kind
// included (one check for all); a plugin not run takes only its defaults;
// names that are not in-tree are left alone.
TEST(InTreePluginArgsTest, ValidatePluginConfig) {
  struct Case {
    std::string plugin_config;
    std::string want;  // "" for OK
  };
  for (const Case& c : std::vector<Case>{
           {"  - name: NodeResourcesFit\n"
            "    args: {scoringStrategy: {type: bogus}}\n",
            "profiles[0].pluginConfig[0].args.scoringStrategy.type: unknown "
            "type \"bogus\""},
           {"  - name: NodeResourcesFit\n"
            "    args: {scoringStrategy: {type: RequestedToCapacityRatio}}\n",
            "args.scoringStrategy.requestedToCapacityRatio: must be specified "
            "when type is RequestedToCapacityRatio"},
           {"  - name: PodTopologySpread\n"
            "    args: {defaultingType: List, defaultConstraints: "
            "[{maxSkew: 0, topologyKey: zone, whenUnsatisfiable: "
            "DoNotSchedule}]}\n",
            "args.defaultConstraints[0].maxSkew: Invalid value: 0"},
           {"  - name: InterPodAffinity\n"
            "    args: {hardPodAffinityWeight: 101}\n",
            "args.hardPodAffinityWeight: Invalid value: 101: not in valid "
            "range [0, 100]"},
           {"  - name: NodeResourcesBalancedAllocation\n"
            "    args: {kind: NodeResourcesFitArgs}\n",
            "args.kind: expected NodeResourcesBalancedAllocationArgs, got "
            "\"NodeResourcesFitArgs\""},
           {"  - name: VolumeBinding\n"
            "    args: {kind: VolumeBindingArgs, bindTimeoutSeconds: -1}\n",
            "args.bindTimeoutSeconds: Invalid value: -1: invalid "
            "BindTimeoutSeconds, should not be a negative value"},
           {"  - name: VolumeBinding\n    args: {kind: Other}\n",
            "args.kind: expected VolumeBindingArgs, got \"Other\""},
           {"  - name: DynamicResources\n"
            "    args: {filterTimeout: 5s}\n",
            "args.filterTimeout: Invalid value: 5s: kscore does not run "
            "plugin \"DynamicResources\""},
           {"  - name: PrioritySort\n    args: {order: fifo}\n",
            "plugin \"PrioritySort\" takes no args"},
           {"  - name: NodePorts\n    args: {ports: 1}\n",
            "args.ports: unknown field \"ports\""},
           {"  - name: NodeAffinity\n"
            "    args: {apiVersion: kubescheduler.config.k8s.io/v1, kind: "
            "NodeAffinityArgs}\n",
            ""},
           {"  - name: VolumeBinding\n"
            "    args: {bindTimeoutSeconds: 60}\n",
            ""},
           {"  - name: MyPlugin\n    args: {kind: Anything, x: 1}\n", ""},
       }) {
    absl::Status s = Validate(c.plugin_config);
    if (c.want.empty()) {
      EXPECT_TRUE(s.ok()) << c.plugin_config << s;
    } else {
      EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument)
          << c.plugin_config;
      EXPECT_THAT(std::string(s.message()), HasSubstr(c.want));
    }
  }
}

TEST(InTreePluginArgsTest, RunAndNotRunAreApart) {
  EXPECT_TRUE(IsInTreePluginRun("NodeResourcesFit"));
  EXPECT_TRUE(IsInTreePluginRun("Concentrate"));
  EXPECT_TRUE(IsInTreePluginRun("VolumeBinding"));
  EXPECT_FALSE(IsInTreePluginRun("DynamicResources"));
  EXPECT_FALSE(IsInTreePluginRun("MyPlugin"));
  for (const PluginNotRun& p : InTreePluginsNotRun()) {
    EXPECT_FALSE(IsInTreePluginRun(p.name)) << p.name;
  }
}

}  // namespace
}  // namespace kscore::model
