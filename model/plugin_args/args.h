#ifndef KSCORE_MODEL_PLUGIN_ARGS_ARGS_H_
#define KSCORE_MODEL_PLUGIN_ARGS_ARGS_H_

#include <initializer_list>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "model/yaml_decode.h"

namespace kscore::model {

// What the args of every in-tree plugin share, as kube-scheduler decodes a
// pluginConfig entry strictly: a mapping of apiVersion, kind and the
// plugin's own fields, whose kind, when given, is "<plugin>Args".

// Errors unless `args` (when present) holds only apiVersion, kind and
// `fields`, and its kind names `plugin`'s args.
absl::Status ExpectArgsMap(const YamlField& args, absl::string_view plugin,
                           std::initializer_list<absl::string_view> fields);

// Errors unless args.kind, when given, is "<plugin>Args".
absl::Status CheckArgsKind(const YamlField& args, absl::string_view plugin);

// A plugin that takes no args: absent, or only apiVersion and kind.
absl::Status ExpectNoArgs(const YamlField& args);

}  // namespace kscore::model

#endif  // KSCORE_MODEL_PLUGIN_ARGS_ARGS_H_
