#ifndef KSCORE_MODEL_PLUGIN_ARGS_IN_TREE_H_
#define KSCORE_MODEL_PLUGIN_ARGS_IN_TREE_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "model/config.h"
#include "model/yaml_decode.h"

namespace kscore::model {

// The in-tree plugins' args, checked as the scorer checks them, so the shim
// (which links no plugin) refuses at start what the scorer would refuse:
// kube-scheduler's validation_pluginargs.go, apart from the plugins.

// Whether the scorer has code for the plugin: kube-scheduler's in-tree
// plugins it runs, and kscore's Concentrate.
bool IsInTreePluginRun(absl::string_view name);
std::vector<std::string> InTreePluginsRun();  // in name order

// Validates the args of a plugin IsInTreePluginRun names, with the decoder
// its factory uses (same checks, same messages); OK for any other name.
absl::Status ValidateInTreePluginArgs(absl::string_view name,
                                      const YamlField& args);

// kube-scheduler v1.37's in-tree plugins the scorer does not run (the shim
// does their job, or they are not supported yet), with kube-scheduler's
// defaulted args as a YAML mapping ("" when the plugin takes none).
struct PluginNotRun {
  std::string name;
  std::string default_args;
};
std::vector<PluginNotRun> InTreePluginsNotRun();

// Args of a plugin the scorer does not run could never take effect, so they
// are refused, except fields that restate kube-scheduler's default (as a
// dump of its effective configuration does): ignoring those changes nothing.
absl::Status CheckArgsOfPluginNotRun(const PluginConfigEntry& e,
                                     const std::string& defaults_yaml);

// Every pluginConfig entry of every profile that names an in-tree plugin,
// checked as the scorer checks it; the first error names the field. Other
// names are left alone: out-of-tree plugins of a custom scorer are known to
// it only.
absl::Status ValidatePluginConfig(const SchedulerConfig& config);

}  // namespace kscore::model

#endif  // KSCORE_MODEL_PLUGIN_ARGS_IN_TREE_H_
