#ifndef KSCORE_MODEL_PLUGIN_ARGS_NODE_RESOURCES_BALANCED_ALLOCATION_ARGS_H_
#define KSCORE_MODEL_PLUGIN_ARGS_NODE_RESOURCES_BALANCED_ALLOCATION_ARGS_H_

#include <vector>

#include "absl/status/statusor.h"
#include "model/plugin_args/resource_spec.h"
#include "model/yaml_decode.h"

namespace kscore::model {

// NodeResourcesBalancedAllocationArgs.
struct NodeResourcesBalancedAllocationArgs {
  std::vector<ResourceSpec> resources = DefaultResourceSpecs();
};

// Decodes, defaults and validates
// (ValidateNodeResourcesBalancedAllocationArgs: names once, weights 1).
absl::StatusOr<NodeResourcesBalancedAllocationArgs>
DecodeNodeResourcesBalancedAllocationArgs(const YamlField& args);

}  // namespace kscore::model

#endif  // KSCORE_MODEL_PLUGIN_ARGS_NODE_RESOURCES_BALANCED_ALLOCATION_ARGS_H_
