#include "model/plugin_args/default_preemption_args.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "model/plugin_args/args.h"

namespace kscore::model {

absl::StatusOr<DefaultPreemptionArgs> DecodeDefaultPreemptionArgs(
    const YamlField& args) {
  DefaultPreemptionArgs out;
  if (!args.present()) return out;
  KSCORE_RETURN_IF_ERROR(ExpectArgsMap(
      args, "DefaultPreemption",
      {"minCandidateNodesPercentage", "minCandidateNodesAbsolute"}));
  const YamlField percentage = args.Child("minCandidateNodesPercentage");
  const YamlField absolute = args.Child("minCandidateNodesAbsolute");
  auto read = [](const YamlField& f, int32_t* into) -> absl::Status {
    if (!f.present()) return absl::OkStatus();
    int64_t v = 0;
    KSCORE_ASSIGN_OR_RETURN(v, f.Int(std::numeric_limits<int32_t>::min(),
                                     std::numeric_limits<int32_t>::max()));
    *into = static_cast<int32_t>(v);
    return absl::OkStatus();
  };
  KSCORE_RETURN_IF_ERROR(read(percentage, &out.min_candidate_nodes_percentage));
  KSCORE_RETURN_IF_ERROR(read(absolute, &out.min_candidate_nodes_absolute));
  // ValidateDefaultPreemptionArgs, in its order and words.
  if (out.min_candidate_nodes_percentage < 0 ||
      out.min_candidate_nodes_percentage > 100) {
    return percentage.Error(
        absl::StrCat("Invalid value: ", out.min_candidate_nodes_percentage,
                     ": not in valid range [0, 100]"));
  }
  if (out.min_candidate_nodes_absolute < 0) {
    return absolute.Error(
        absl::StrCat("Invalid value: ", out.min_candidate_nodes_absolute,
                     ": not in valid range [0, inf)"));
  }
  if (out.min_candidate_nodes_percentage == 0 &&
      out.min_candidate_nodes_absolute == 0) {
    return percentage.Error(
        "Invalid value: 0: cannot be zero at the same time as "
        "minCandidateNodesAbsolute");
  }
  return out;
}

}  // namespace kscore::model
