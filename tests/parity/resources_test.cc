// kscore against the answers of kube-scheduler's own NodeResourcesFit and
// NodeResourcesBalancedAllocation (tests/testdata/parity/resources.json,
// checked against upstream by reference/pkg/parity): the pods are decoded
// as the shim decodes them, summed into the node's aggregates as the cache
// sums them, and handed to the scorer's plugins.
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/scalar_resources.h"
#include "nlohmann/json.hpp"
#include "scorer/framework/cycle_state.h"
#include "scorer/plugins/node_resources_balanced_allocation.h"
#include "scorer/plugins/node_resources_fit.h"
#include "shim/objects/objects.h"

namespace kscore {
namespace {

using ::testing::ElementsAreArray;
namespace pb = framework::pb;

nlohmann::json Fixture() {
  const std::string path =
      std::string(KSCORE_SOURCE_DIR) + "/tests/testdata/parity/resources.json";
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::stringstream s;
  s << in.rdbuf();
  return nlohmann::json::parse(s.str());
}

void Add(pb::Resources* into, const pb::Resources& r) {
  into->set_milli_cpu(into->milli_cpu() + r.milli_cpu());
  into->set_memory(into->memory() + r.memory());
  into->set_ephemeral_storage(into->ephemeral_storage() +
                              r.ephemeral_storage());
  for (const pb::ScalarResource& s : r.scalar()) {
    model::AddToScalar(into, s.name(), s.value());
  }
}

// The node of a case with the aggregates of the pods on it.
pb::Node NodeOf(const nlohmann::json& c) {
  nlohmann::json node = {
      {"metadata", {{"name", "node"}}},
      {"status",
       {{"allocatable", {{"cpu", "4"}, {"memory", "16Gi"}, {"pods", "110"}}}}}};
  if (c.contains("allocatable")) {
    node["status"]["allocatable"] = c["allocatable"];
  }
  absl::StatusOr<objects::NodeInfo> info = objects::NodeFromJson(node);
  EXPECT_TRUE(info.ok()) << info.status();
  pb::Node n = info.ok() ? info->node : pb::Node();
  for (nlohmann::json pod : c.value("onNode", nlohmann::json::array())) {
    pod["metadata"]["namespace"] = "default";
    pod["spec"]["nodeName"] = "node";
    absl::StatusOr<objects::PodInfo> p = objects::PodFromJson(pod);
    EXPECT_TRUE(p.ok()) << p.status();
    if (!p.ok()) continue;
    Add(n.mutable_requested(), p->requests);
    Add(n.mutable_non_zero_requested(), p->non_zero);
    n.set_pod_count(n.pod_count() + 1);
  }
  return n;
}

TEST(ResourcesParityTest, SameAnswersAsKubeScheduler) {
  const nlohmann::json fixture = Fixture();
  ASSERT_FALSE(fixture["cases"].empty());
  plugins::NodeResourcesFit fit{plugins::NodeResourcesFit::Args()};
  plugins::NodeResourcesBalancedAllocation balanced{
      plugins::NodeResourcesBalancedAllocation::Args()};
  for (const nlohmann::json& c : fixture["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const pb::Node node = NodeOf(c);
    nlohmann::json incoming = c["pod"];
    incoming["metadata"]["namespace"] = "default";
    absl::StatusOr<objects::PodInfo> p = objects::PodFromJson(incoming);
    ASSERT_TRUE(p.ok()) << p.status();
    const pb::Pod& pod = p->pod;  // what the shim sends the scorer
    const std::vector<const pb::Node*> nodes = {&node};
    const nlohmann::json& want = c["want"];

    framework::CycleState state;
    ASSERT_TRUE(fit.PreFilter(state, pod).ok());
    framework::PluginStatus filtered = fit.Filter(state, pod, node);
    EXPECT_THAT(
        filtered.reasons,
        ElementsAreArray(want["filter"].get<std::vector<std::string>>()))
        << "Filter";

    std::vector<int64_t> score = {-1};
    ASSERT_TRUE(fit.PreScore(state, pod, nodes).ok());
    ASSERT_TRUE(fit.Score(state, pod, nodes, absl::MakeSpan(score)).ok());
    EXPECT_EQ(score[0], want["fit"].get<int64_t>()) << "NodeResourcesFit";

    score = {-1};
    framework::PluginStatus pre = balanced.PreScore(state, pod, nodes);
    if (pre.code != framework::Code::kSkip) {
      ASSERT_TRUE(pre.ok());
      ASSERT_TRUE(
          balanced.Score(state, pod, nodes, absl::MakeSpan(score)).ok());
    }
    EXPECT_EQ(score[0], want["balanced"].get<int64_t>())
        << "NodeResourcesBalancedAllocation";
  }
}

}  // namespace
}  // namespace kscore
