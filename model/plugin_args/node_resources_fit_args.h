#ifndef KSCORE_MODEL_PLUGIN_ARGS_NODE_RESOURCES_FIT_ARGS_H_
#define KSCORE_MODEL_PLUGIN_ARGS_NODE_RESOURCES_FIT_ARGS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model/plugin_args/resource_spec.h"
#include "model/yaml_decode.h"

namespace kscore::model {

// config.ScoringStrategyType.
enum class ScoringStrategyType {
  kLeastAllocated,
  kMostAllocated,
  kRequestedToCapacityRatio
};

// A point of the RequestedToCapacityRatio shape, as configured
// (config.UtilizationShapePoint): utilization in [0, 100], score in
// [0, kMaxCustomPriorityScore].
struct UtilizationShapePoint {
  int64_t utilization = 0;
  int64_t score = 0;
};

// config.MaxCustomPriorityScore: shape scores are in [0, 10].
inline constexpr int64_t kMaxCustomPriorityScore = 10;

// NodeResourcesFitArgs, defaulted as kube-scheduler does.
struct NodeResourcesFitArgs {
  std::vector<std::string> ignored_resources;
  std::vector<std::string> ignored_resource_groups;
  ScoringStrategyType strategy = ScoringStrategyType::kLeastAllocated;
  std::vector<ResourceSpec> resources = DefaultResourceSpecs();
  std::vector<UtilizationShapePoint> shape;
};

// Decodes, defaults and validates (ValidateNodeResourcesFitArgs).
absl::StatusOr<NodeResourcesFitArgs> DecodeNodeResourcesFitArgs(
    const YamlField& args);

}  // namespace kscore::model

#endif  // KSCORE_MODEL_PLUGIN_ARGS_NODE_RESOURCES_FIT_ARGS_H_
