#include "model/plugin_args/node_resources_balanced_allocation_args.h"

#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "model/plugin_args/args.h"

namespace kscore::model {

absl::StatusOr<NodeResourcesBalancedAllocationArgs>
DecodeNodeResourcesBalancedAllocationArgs(const YamlField& args) {
  NodeResourcesBalancedAllocationArgs out;
  if (!args.present()) return out;
  KSCORE_RETURN_IF_ERROR(
      ExpectArgsMap(args, "NodeResourcesBalancedAllocation", {"resources"}));
  YamlField resources = args.Child("resources");
  std::vector<ResourceSpec> specs;
  KSCORE_ASSIGN_OR_RETURN(specs, ParseResourceSpecs(resources));
  absl::flat_hash_set<std::string> seen;
  for (size_t i = 0; i < specs.size(); ++i) {
    const ResourceSpec& r = specs[i];
    if (!seen.insert(r.name).second) {
      return resources.Index(i).Child("name").Error(
          absl::StrCat("duplicate resource \"", r.name, "\""));
    }
    if (r.weight != 1) {
      return resources.Index(i).Child("weight").Error(
          absl::StrCat("must be 1, got ", r.weight));
    }
  }
  out.resources = std::move(specs);
  return out;
}

}  // namespace kscore::model
