#ifndef KSCORE_MODEL_PLUGIN_ARGS_DEFAULT_PREEMPTION_ARGS_H_
#define KSCORE_MODEL_PLUGIN_ARGS_DEFAULT_PREEMPTION_ARGS_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "model/yaml_decode.h"

namespace kscore::model {

// DefaultPreemptionArgs.
struct DefaultPreemptionArgs {
  // Of the potential nodes, the share (percent, 0 to 100) and the least
  // number to find candidates on before the search stops; not both 0.
  int32_t min_candidate_nodes_percentage = 10;
  int32_t min_candidate_nodes_absolute = 100;
};

// Decodes, defaults and validates (ValidateDefaultPreemptionArgs).
absl::StatusOr<DefaultPreemptionArgs> DecodeDefaultPreemptionArgs(
    const YamlField& args);

}  // namespace kscore::model

#endif  // KSCORE_MODEL_PLUGIN_ARGS_DEFAULT_PREEMPTION_ARGS_H_
