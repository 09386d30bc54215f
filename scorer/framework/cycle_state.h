#ifndef KSCORE_SCORER_FRAMEWORK_CYCLE_STATE_H_
#define KSCORE_SCORER_FRAMEWORK_CYCLE_STATE_H_

#include <any>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "kscore/scorer/v1/scorer.pb.h"

namespace kscore::framework {

// The per-pod scheduling state. It travels between the shim and the scorer as
// opaque bytes per plugin key, so any scorer replica can carry on a cycle
// another replica started. Decoded values are cached so a batch of nodes
// decodes a key once.
//
// A state type T provides:
//   std::string Encode() const;
//   static absl::StatusOr<T> Decode(absl::string_view bytes);
// Not thread-safe: one cycle is served by one thread.
class CycleState {
 public:
  using Bytes = absl::flat_hash_map<std::string, std::string>;

  CycleState() = default;
  explicit CycleState(Bytes bytes) : bytes_(std::move(bytes)) {}

  template <typename T>
  void Write(absl::string_view key, T value) {
    bytes_[key] = value.Encode();
    decoded_[key] = std::move(value);
  }

  // Returns the value under key, or NotFound / InvalidArgument naming the key.
  template <typename T>
  absl::StatusOr<const T*> Read(absl::string_view key) const {
    if (auto it = decoded_.find(key); it != decoded_.end()) {
      if (const T* value = std::any_cast<T>(&it->second)) return value;
    }
    auto it = bytes_.find(key);
    if (it == bytes_.end()) {
      return absl::NotFoundError(
          absl::StrCat("cycle_state has no key \"", key, "\""));
    }
    absl::StatusOr<T> value = T::Decode(it->second);
    if (!value.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cycle_state[\"", key, "\"]: ", value.status().message()));
    }
    std::any& slot = decoded_[key];
    slot = *std::move(value);
    return std::any_cast<T>(&slot);
  }

  const Bytes& bytes() const { return bytes_; }

  // What the shim prepared for the pod's plan (empty when it has none). Set
  // by the framework (Profile::BindCluster) before plugins run; the request
  // owns it.
  const ::kscore::scorer::v1::ClusterData& cluster() const {
    return cluster_ != nullptr
               ? *cluster_
               : ::kscore::scorer::v1::ClusterData::default_instance();
  }
  // The index of a plugin's first query in the plan, or -1 when the plugin
  // added none (or the cluster was not bound).
  int QueryBase(absl::string_view plugin) const {
    auto it = query_bases_.find(plugin);
    return it == query_bases_.end() ? -1 : it->second;
  }
  // Every plugin's query base (for binding another copy of the cluster
  // data alike).
  const absl::flat_hash_map<std::string, int>& query_bases() const {
    return query_bases_;
  }
  void BindCluster(const ::kscore::scorer::v1::ClusterData* cluster,
                   absl::flat_hash_map<std::string, int> query_bases) {
    cluster_ = cluster;
    query_bases_ = std::move(query_bases);
  }
  // In a preemption dry run, per Pod.volume_claims index, the references to
  // that claim by the pods removed so far (VictimPod.claim_refs): what
  // upstream's RemovePod takes off VolumeRestrictions' state. Empty
  // otherwise.
  absl::Span<const int64_t> freed_claim_refs() const { return freed_; }
  void BindFreedClaimRefs(absl::Span<const int64_t> freed) { freed_ = freed; }

 private:
  absl::Span<const int64_t> freed_;
  Bytes bytes_;
  const ::kscore::scorer::v1::ClusterData* cluster_ = nullptr;
  absl::flat_hash_map<std::string, int> query_bases_;
  mutable absl::flat_hash_map<std::string, std::any> decoded_;
};

}  // namespace kscore::framework

#endif  // KSCORE_SCORER_FRAMEWORK_CYCLE_STATE_H_
