#ifndef KSCORE_MODEL_PLUGIN_ARGS_VOLUME_BINDING_ARGS_H_
#define KSCORE_MODEL_PLUGIN_ARGS_VOLUME_BINDING_ARGS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "model/plugin_args/utilization_shape.h"
#include "model/yaml_decode.h"

namespace kscore::model {

// VolumeBindingArgs, defaulted as kube-scheduler v1.37 does with its default
// feature gates (StorageCapacityScoring on): bindTimeoutSeconds 600, and a
// shape that prefers the node whose storage is least used.
struct VolumeBindingArgs {
  // Used by the caller's PreBind (the scorer only decides).
  int64_t bind_timeout_seconds = 600;
  std::vector<UtilizationShapePoint> shape = {{0, kMaxCustomPriorityScore},
                                              {100, 0}};
};

// Decodes, defaults and validates (ValidateVolumeBindingArgs with
// StorageCapacityScoring on, in its order and words).
absl::StatusOr<VolumeBindingArgs> DecodeVolumeBindingArgs(
    const YamlField& args);

}  // namespace kscore::model

#endif  // KSCORE_MODEL_PLUGIN_ARGS_VOLUME_BINDING_ARGS_H_
