#ifndef KSCORE_SHIM_CACHE_TESTING_CANDIDATES_H_
#define KSCORE_SHIM_CACHE_TESTING_CANDIDATES_H_

// For tests: the candidates a cycle sends, as messages.

#include <string>
#include <vector>

#include "kscore/scorer/v1/scorer.pb.h"
#include "shim/cache/cache.h"

namespace kscore::testing {

// Cache::AppendCandidates's nodes, parsed back; the number appended (0 when
// the bytes do not parse).
inline size_t FillCandidates(
    const cache::Cache& cache, const objects::PodInfo& incoming,
    const std::vector<std::string>& label_keys, size_t start, size_t count,
    google::protobuf::RepeatedPtrField<scorer::v1::Node>* out,
    bool with_labels = true,
    const cache::ClusterIndex::Prepared* prepared = nullptr) {
  std::string wire;
  const size_t appended = cache.AppendCandidates(
      incoming, label_keys, start, count, with_labels,
      scorer::v1::EvaluateRequest::kNodesFieldNumber, &wire, nullptr, prepared);
  scorer::v1::EvaluateRequest parsed;
  if (!parsed.ParseFromString(wire)) return 0;
  for (scorer::v1::Node& node : *parsed.mutable_nodes()) {
    out->Add(std::move(node));
  }
  return appended;
}

}  // namespace kscore::testing

#endif  // KSCORE_SHIM_CACHE_TESTING_CANDIDATES_H_
