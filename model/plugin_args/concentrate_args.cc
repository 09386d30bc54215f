#include "model/plugin_args/concentrate_args.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "model/plugin_args/args.h"
#include "model/validation.h"

namespace kscore::model {

absl::StatusOr<ConcentrateArgs> DecodeConcentrateArgs(const YamlField& args) {
  ConcentrateArgs out;
  if (!args.present()) return out;
  KSCORE_RETURN_IF_ERROR(
      ExpectArgsMap(args, "Concentrate", {"labelKey", "rejectEverything"}));
  if (YamlField key = args.Child("labelKey"); key.present()) {
    std::string k;
    KSCORE_ASSIGN_OR_RETURN(k, key.String());
    if (std::string why = CheckLabelKey(k); !why.empty()) {
      return key.Error(absl::StrCat("invalid label key \"", k, "\": ", why));
    }
    out.label_key = k;
  } else if (key.node().IsNull() && key.node().IsDefined()) {
    return key.Error("invalid label key \"\": must be non-empty");
  }
  if (YamlField reject = args.Child("rejectEverything"); reject.present()) {
    KSCORE_ASSIGN_OR_RETURN(out.reject_everything, reject.Bool());
  }
  return out;
}

}  // namespace kscore::model
