#ifndef KSCORE_MODEL_NODE_KEY_H_
#define KSCORE_MODEL_NODE_KEY_H_

// A node's content key (pb::Node::content_key): what the shim sends instead
// of a node the scorer already holds, and what the scorer checks a node sent
// in full against before keeping it.

#include <string>

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

}  // namespace kscore::model

#endif  // KSCORE_MODEL_NODE_KEY_H_
