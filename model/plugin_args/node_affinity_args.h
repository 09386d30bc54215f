#ifndef KSCORE_MODEL_PLUGIN_ARGS_NODE_AFFINITY_ARGS_H_
#define KSCORE_MODEL_PLUGIN_ARGS_NODE_AFFINITY_ARGS_H_

#include "absl/status/statusor.h"
#include "kscore/scorer/v1/scorer.pb.h"
#include "model/yaml_decode.h"

namespace kscore::model {

// NodeAffinityArgs: affinity added to every pod of the profile.
struct NodeAffinityArgs {
  ::kscore::scorer::v1::NodeAffinity added_affinity;
};

// Decodes and validates (ValidateNodeAffinityArgs): malformed terms are
// errors naming the term; empty terms and preferred terms of weight 0 are
// not looked into, as kube-scheduler does not.
absl::StatusOr<NodeAffinityArgs> DecodeNodeAffinityArgs(const YamlField& args);

}  // namespace kscore::model

#endif  // KSCORE_MODEL_PLUGIN_ARGS_NODE_AFFINITY_ARGS_H_
