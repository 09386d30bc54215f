#include "model/plugin_points.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/config.h"

namespace kscore::model {
namespace {

absl::Status Check(const std::string& plugins) {
  absl::StatusOr<SchedulerConfig> cfg = ParseSchedulerConfig(
      "apiVersion: kubescheduler.config.k8s.io/v1\n"
      "kind: KubeSchedulerConfiguration\n"
      "profiles:\n"
      "- schedulerName: a\n"
      "  plugins:\n" +
      plugins);
  if (!cfg.ok()) return cfg.status();
  return CheckEnabledPoints(*cfg);
}

// Where an in-tree plugin may be enabled, with the scorer's words; names
// that are not in-tree are left to the scorer except where it runs nothing.
TEST(PluginPointsTest, CheckEnabledPoints) {
  struct Case {
    std::string plugins;
    std::string want;  // "" for OK
  };
  const std::string p = "profiles[0].plugins.";
  for (const Case& c : std::vector<Case>{
           {"    score: {enabled: [{name: NodeName}]}\n",
            p + "score.enabled[0].name: plugin \"NodeName\" does not extend "
                "score"},
           {"    postFilter: {enabled: [{name: NodePorts}]}\n",
            p + "postFilter.enabled[0].name: plugin \"NodePorts\" does not "
                "extend postFilter"},
           {"    filter: {enabled: [{name: NodePorts}, {name: NodePorts}]}\n",
            p + "filter.enabled[1].name: plugin \"NodePorts\" already "
                "registered as filter"},
           {"    bind: {enabled: [{name: DefaultBinder}, {name: NodeName}]}\n",
            p + "bind.enabled[1].name: plugin \"NodeName\" does not extend "
                "bind (the shim binds through pods/binding (DefaultBinder))"},
           {"    reserve: {enabled: [{name: DynamicResources}]}\n",
            p + "reserve.enabled[0].name: ReservePlugin \"DynamicResources\" "
                "does not exist (kscore runs no Reserve plugin)"},
           // VolumeBinding runs, but its Reserve is the caller's
           // (EvaluateResponse.node_volumes).
           {"    reserve: {enabled: [{name: VolumeBinding}]}\n",
            p + "reserve.enabled[0].name: plugin \"VolumeBinding\" does not "
                "extend reserve (kscore runs no Reserve plugin)"},
           {"    queueSort: {enabled: [{name: FifoSort}]}\n",
            p + "queueSort.enabled[0].name: QueueSortPlugin \"FifoSort\" does "
                "not exist"},
           {"    placementScore: {enabled: [{name: PodGroupPodsCount}]}\n",
            p + "placementScore.enabled[0].name: PlacementScorePlugin "
                "\"PodGroupPodsCount\" does not exist (kscore does not "
                "schedule pod groups)"},
           // Accepted: the shim's own plugins, in-tree plugins where they
           // run, plugins kscore knows but does not run, and other names.
           {"    queueSort: {enabled: [{name: PrioritySort}]}\n"
            "    score: {enabled: [{name: Concentrate}, {name: TaintToleration}"
            ", {name: VolumeBinding}, {name: MyRule}]}\n"
            "    filter: {enabled: [{name: Concentrate}, {name: MyRule}, "
            "{name: MyRule}]}\n"
            "    postFilter: {enabled: [{name: DefaultPreemption}]}\n"
            "    multiPoint: {enabled: [{name: NodeName}, {name: MyRule}]}\n",
            ""},
       }) {
    absl::Status s = Check(c.plugins);
    if (c.want.empty()) {
      EXPECT_TRUE(s.ok()) << c.plugins << s;
    } else {
      EXPECT_THAT(s.message(), ::testing::HasSubstr(c.want)) << c.plugins;
    }
  }
}

TEST(PluginPointsTest, PluginTypeName) {
  EXPECT_EQ(PluginTypeName(ExtensionPoint::kQueueSort), "QueueSortPlugin");
  EXPECT_EQ(PluginTypeName(ExtensionPoint::kPreBind), "PreBindPlugin");
}

}  // namespace
}  // namespace kscore::model
