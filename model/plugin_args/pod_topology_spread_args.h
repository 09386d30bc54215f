#ifndef KSCORE_MODEL_PLUGIN_ARGS_POD_TOPOLOGY_SPREAD_ARGS_H_
#define KSCORE_MODEL_PLUGIN_ARGS_POD_TOPOLOGY_SPREAD_ARGS_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kscore/scorer/v1/scorer.pb.h"
#include "model/yaml_decode.h"

namespace kscore::model {

// whenUnsatisfiable's values.
inline constexpr absl::string_view kDoNotSchedule = "DoNotSchedule";
inline constexpr absl::string_view kScheduleAnyway = "ScheduleAnyway";

// PodTopologySpreadArgs.
struct PodTopologySpreadArgs {
  // defaultingType: System (kube-scheduler's built-in defaults: hostname
  // maxSkew 3 and zone maxSkew 5, both ScheduleAnyway) or List
  // (default_constraints).
  bool system_defaulting = true;
  std::vector<::kscore::scorer::v1::TopologySpreadConstraint>
      default_constraints;
};

// Decodes, defaults and validates (ValidatePodTopologySpreadArgs, in its
// order).
absl::StatusOr<PodTopologySpreadArgs> DecodePodTopologySpreadArgs(
    const YamlField& args);

}  // namespace kscore::model

#endif  // KSCORE_MODEL_PLUGIN_ARGS_POD_TOPOLOGY_SPREAD_ARGS_H_
