#include "model/plugin_args/args.h"

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace kscore::model {

absl::Status ExpectArgsMap(const YamlField& args, absl::string_view plugin,
                           std::initializer_list<absl::string_view> fields) {
  std::vector<absl::string_view> allowed = {"apiVersion", "kind"};
  allowed.insert(allowed.end(), fields.begin(), fields.end());
  KSCORE_RETURN_IF_ERROR(args.ExpectMap(allowed));
  return CheckArgsKind(args, plugin);
}

absl::Status CheckArgsKind(const YamlField& args, absl::string_view plugin) {
  YamlField kind = args.Child("kind");
  if (!kind.present()) return absl::OkStatus();
  std::string k;
  KSCORE_ASSIGN_OR_RETURN(k, kind.String());
  if (k != absl::StrCat(plugin, "Args")) {
    return kind.Error(
        absl::StrCat("expected ", plugin, "Args, got \"", k, "\""));
  }
  return absl::OkStatus();
}

absl::Status ExpectNoArgs(const YamlField& args) {
  return args.ExpectMap({"apiVersion", "kind"});
}

}  // namespace kscore::model
