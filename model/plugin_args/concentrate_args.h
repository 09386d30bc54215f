#ifndef KSCORE_MODEL_PLUGIN_ARGS_CONCENTRATE_ARGS_H_
#define KSCORE_MODEL_PLUGIN_ARGS_CONCENTRATE_ARGS_H_

#include <string>

#include "absl/status/statusor.h"
#include "model/yaml_decode.h"

namespace kscore::model {

// ConcentrateArgs, kscore's own plugin: pods sharing a value of label_key
// go to the same nodes.
struct ConcentrateArgs {
  std::string label_key = "app";
  bool reject_everything = false;
};

// Decodes, defaults and validates; absent args give the defaults.
absl::StatusOr<ConcentrateArgs> DecodeConcentrateArgs(const YamlField& args);

}  // namespace kscore::model

#endif  // KSCORE_MODEL_PLUGIN_ARGS_CONCENTRATE_ARGS_H_
