#ifndef KSCORE_MODEL_PLUGIN_ARGS_INTER_POD_AFFINITY_ARGS_H_
#define KSCORE_MODEL_PLUGIN_ARGS_INTER_POD_AFFINITY_ARGS_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "model/yaml_decode.h"

namespace kscore::model {

// InterPodAffinityArgs.
struct InterPodAffinityArgs {
  // Score weight of an existing pod's required affinity term the incoming
  // pod matches; 0 leaves those terms out. In [0, 100].
  int32_t hard_pod_affinity_weight = 1;
  // When the incoming pod has no preferred (anti-)affinity term, skip
  // scoring altogether instead of weighing existing pods' terms.
  bool ignore_preferred_terms_of_existing_pods = false;
};

inline constexpr int32_t kMinHardPodAffinityWeight = 0;
inline constexpr int32_t kMaxHardPodAffinityWeight = 100;

// Decodes, defaults and validates (ValidateInterPodAffinityArgs).
absl::StatusOr<InterPodAffinityArgs> DecodeInterPodAffinityArgs(
    const YamlField& args);

}  // namespace kscore::model

#endif  // KSCORE_MODEL_PLUGIN_ARGS_INTER_POD_AFFINITY_ARGS_H_
