#ifndef KSCORE_MODEL_PLUGIN_ARGS_NODE_RESOURCES_FIT_ARGS_H_
#define KSCORE_MODEL_PLUGIN_ARGS_NODE_RESOURCES_FIT_ARGS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model/plugin_args/resource_spec.h"
#include "model/plugin_args/utilization_shape.h"
#include "model/yaml_decode.h"

namespace kscore::model {

// config.ScoringStrategyType.
enum class ScoringStrategyType {
  kLeastAllocated,
  kMostAllocated,
  kRequestedToCapacityRatio
};

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
