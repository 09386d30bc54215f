#ifndef KSCORE_SCORER_PLUGINS_NODE_RESOURCES_BALANCED_ALLOCATION_H_
#define KSCORE_SCORER_PLUGINS_NODE_RESOURCES_BALANCED_ALLOCATION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "model/plugin_args/node_resources_balanced_allocation_args.h"
#include "model/yaml_decode.h"
#include "scorer/framework/plugin.h"
#include "scorer/plugins/node_resources_fit.h"

namespace kscore::plugins {

// NodeResourcesBalancedAllocation favours nodes whose resource usage
// fractions (cpu and memory by default) stay close to each other, scoring
// how much placing the pod improves that balance.
class NodeResourcesBalancedAllocation : public framework::PreScorePlugin,
                                        public framework::ScorePlugin {
 public:
  static constexpr absl::string_view kName = "NodeResourcesBalancedAllocation";
  static constexpr absl::string_view kStateKey =
      "PreScoreNodeResourcesBalancedAllocation";

  // NodeResourcesBalancedAllocationArgs, defaulted as kube-scheduler does.
  using Args = model::NodeResourcesBalancedAllocationArgs;

  // The pod's requests (actual, not non-zero) for each resource, in args
  // order. Encoded as comma-separated integers.
  struct State {
    std::vector<int64_t> requests;

    std::string Encode() const;
    static absl::StatusOr<State> Decode(absl::string_view bytes);
  };

  explicit NodeResourcesBalancedAllocation(Args args);

  absl::string_view Name() const override { return kName; }

  // Skip for a pod that requests none of the resources (best effort): it
  // would otherwise pile onto one node.
  framework::PluginStatus PreScore(
      framework::CycleState& state, const framework::pb::Pod& pod,
      absl::Span<const framework::pb::Node* const> nodes) const override;
  // Raw scores are already in [50, 100]: no NormalizeScore.
  framework::PluginStatus Score(
      const framework::CycleState& state, const framework::pb::Pod& pod,
      absl::Span<const framework::pb::Node* const> nodes,
      absl::Span<int64_t> scores) const override;
  model::ScoreRange RawScoreRange() const override {
    return {0, model::kMaxNodeScore};
  }

  const Args& args() const { return args_; }

  static absl::StatusOr<Args> ParseArgs(const model::YamlField& args);
  static absl::StatusOr<std::unique_ptr<framework::Plugin>> New(
      const model::YamlField& args);

 private:
  std::vector<int64_t> PodRequests(const framework::pb::Pod& pod) const;

  Args args_;
  std::vector<ScoredResource> resources_;
};

}  // namespace kscore::plugins

#endif  // KSCORE_SCORER_PLUGINS_NODE_RESOURCES_BALANCED_ALLOCATION_H_
