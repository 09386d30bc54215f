#ifndef KSCORE_MODEL_NODE_KEY_H_
#define KSCORE_MODEL_NODE_KEY_H_

// A node's content key (pb::Node::content_key): what the shim sends instead
// of a node the scorer already holds, and what the scorer checks a node sent
// in full against before keeping it.

#include <string>

#include "absl/strings/string_view.h"
#include "kscore/scorer/v1/scorer.pb.h"

namespace kscore::model {

namespace pb = ::kscore::scorer::v1;

// The length of a content key: the first 16 bytes of a SHA-256.
inline constexpr size_t kNodeKeyBytes = 16;

// The parts of a Node a cycle adds for its pod, never part of the key: the
// label counts for the pod's labels, the plan's counts and the images.
void ClearCycleParts(pb::Node& node);
bool HasCycleParts(const pb::Node& node);

// `m`'s deterministic encoding (map entries sorted), appended to `out`:
// what content keys and session keys are made of.
void AppendDeterministic(const google::protobuf::MessageLite& m,
                         std::string* out);

// The key of `node`: SHA-256 of its deterministic encoding without the
// cycle's parts and without content_key, truncated to kNodeKeyBytes.
std::string NodeContentKey(const pb::Node& node);

// NodeContentKey in parts, for a holder whose Node object changes seldom and
// whose pod aggregates change with every pod. A deterministic encoding is
// its fields in number order, so the node's key is the SHA-256 of `head`
// (name, labels, taints, unschedulable, allocatable), the aggregates
// numbered before declared_features (requested, non_zero_requested,
// pod_count, used_ports), `middle` (declared_features) and the aggregates
// numbered after it (csi_drivers, has_csi_node, volume_error).
struct NodeKeyParts {
  std::string head;
  std::string middle;
};
// The parts of `object`'s fields from the Node object (any other is left
// out: see ClearAggregates).
NodeKeyParts NodeKeyPartsOf(const pb::Node& object);
// `node` without the aggregates and the cycle's parts: the Node object's
// fields only.
void ClearAggregates(pb::Node& node);
// The encodings of `aggregates` (a Node with only aggregates) before and
// after declared_features, appended to `low` and `high`.
void AppendAggregates(const pb::Node& aggregates, std::string* low,
                      std::string* high);
// NodeContentKey of the node made of `parts` and the aggregates encoded as
// AppendAggregates does.
std::string NodeContentKey(const NodeKeyParts& parts, absl::string_view low,
                           absl::string_view high);

}  // namespace kscore::model

#endif  // KSCORE_MODEL_NODE_KEY_H_
