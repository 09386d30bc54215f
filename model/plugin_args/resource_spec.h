#ifndef KSCORE_MODEL_PLUGIN_ARGS_RESOURCE_SPEC_H_
#define KSCORE_MODEL_PLUGIN_ARGS_RESOURCE_SPEC_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model/yaml_decode.h"

namespace kscore::model {

// A resource to score and its weight (config.ResourceSpec), in the args of
// NodeResourcesFit and NodeResourcesBalancedAllocation.
struct ResourceSpec {
  std::string name;
  int64_t weight = 1;
};

// cpu and memory, weight 1: both plugins' default.
std::vector<ResourceSpec> DefaultResourceSpecs();

// Decodes a `resources: [{name, weight}]` list strictly; an absent or zero
// weight becomes 1. An absent or empty list gives the defaults.
absl::StatusOr<std::vector<ResourceSpec>> ParseResourceSpecs(
    const YamlField& field);

}  // namespace kscore::model

#endif  // KSCORE_MODEL_PLUGIN_ARGS_RESOURCE_SPEC_H_
