#ifndef KSCORE_SHIM_CACHE_TESTING_CANDIDATES_H_
#define KSCORE_SHIM_CACHE_TESTING_CANDIDATES_H_

// For tests: the candidates a cycle sends and the nodes a Preempt call
// sends, as messages.

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

// Cache::EncodePreemptionNodes's nodes, parsed back; the number added (0
// when the bytes do not parse).
inline size_t FillPreemptionNodes(
    const cache::Cache& cache, const objects::PodInfo& preemptor,
    const scorer::v1::Pod& pod, const std::vector<std::string>& label_keys,
    const std::vector<std::string>& nodes, bool with_labels,
    const scorer::v1::PlanResponse& plan,
    const cache::ClusterIndex::Prepared* prepared, size_t max_victims,
    google::protobuf::RepeatedPtrField<scorer::v1::PreemptionNode>* out) {
  std::string wire;
  google::protobuf::RepeatedPtrField<scorer::v1::PreemptionNode> sent;
  const size_t added = cache.EncodePreemptionNodes(
      preemptor, pod, label_keys, nodes, with_labels, plan, prepared,
      max_victims, &wire, &sent);
  scorer::v1::PreemptRequest parsed;
  if (!parsed.ParseFromString(wire)) return 0;
  for (scorer::v1::PreemptionNode& node : *parsed.mutable_nodes()) {
    out->Add(std::move(node));
  }
  return added;
}

}  // namespace kscore::testing

#endif  // KSCORE_SHIM_CACHE_TESTING_CANDIDATES_H_
