#ifndef KSCORE_SCORER_FRAMEWORK_STATUS_H_
#define KSCORE_SCORER_FRAMEWORK_STATUS_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace kscore::framework {

// The outcome of a plugin at one extension point, as in kube-scheduler's
// framework.Status. Errors that are not about the pod (bad state, bad input)
// travel as absl::Status instead.
enum class Code {
  kSuccess,
  kError,
  kUnschedulable,
  kUnschedulableAndUnresolvable,
  kSkip,
};

// kube-scheduler's name of a code (fwk.Code.String()), as its metrics'
// status label says it: "Success", "Unschedulable", ...
inline absl::string_view CodeName(Code c) {
  switch (c) {
    case Code::kSuccess:
      return "Success";
    case Code::kError:
      return "Error";
    case Code::kUnschedulable:
      return "Unschedulable";
    case Code::kUnschedulableAndUnresolvable:
      return "UnschedulableAndUnresolvable";
    case Code::kSkip:
      return "Skip";
  }
  return "Error";
}

struct PluginStatus {
  Code code = Code::kSuccess;
  // Set by the framework to the plugin that returned this status.
  std::string plugin;
  // kube-scheduler's wording; the shim counts them across nodes into
  // "0/3 nodes are available: 3 node(s) were unschedulable."
  std::vector<std::string> reasons;

  bool ok() const { return code == Code::kSuccess; }

  static PluginStatus Success() { return {}; }
  static PluginStatus Skip() { return {Code::kSkip, {}, {}}; }
  static PluginStatus Unschedulable(std::string reason) {
    return {Code::kUnschedulable, {}, {std::move(reason)}};
  }
  static PluginStatus UnschedulableAndUnresolvable(std::string reason) {
    return {Code::kUnschedulableAndUnresolvable, {}, {std::move(reason)}};
  }
  static PluginStatus Error(std::string reason) {
    return {Code::kError, {}, {std::move(reason)}};
  }
};

}  // namespace kscore::framework

#endif  // KSCORE_SCORER_FRAMEWORK_STATUS_H_
