#include "model/plugin_args/inter_pod_affinity_args.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "model/plugin_args/args.h"

namespace kscore::model {

absl::StatusOr<InterPodAffinityArgs> DecodeInterPodAffinityArgs(
    const YamlField& args) {
  InterPodAffinityArgs out;
  if (!args.present()) return out;
  KSCORE_RETURN_IF_ERROR(ExpectArgsMap(
      args, "InterPodAffinity",
      {"hardPodAffinityWeight", "ignorePreferredTermsOfExistingPods"}));
  if (YamlField w = args.Child("hardPodAffinityWeight"); w.present()) {
    int64_t v = 0;
    KSCORE_ASSIGN_OR_RETURN(v, w.Int(std::numeric_limits<int32_t>::min(),
                                     std::numeric_limits<int32_t>::max()));
    if (v < kMinHardPodAffinityWeight || v > kMaxHardPodAffinityWeight) {
      return w.Error(absl::StrCat(
          "Invalid value: ", v, ": not in valid range [",
          kMinHardPodAffinityWeight, ", ", kMaxHardPodAffinityWeight, "]"));
    }
    out.hard_pod_affinity_weight = static_cast<int32_t>(v);
  }
  if (YamlField ignore = args.Child("ignorePreferredTermsOfExistingPods");
      ignore.present()) {
    KSCORE_ASSIGN_OR_RETURN(out.ignore_preferred_terms_of_existing_pods,
                            ignore.Bool());
  }
  return out;
}

}  // namespace kscore::model
