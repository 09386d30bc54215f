#ifndef KSCORE_SHIM_CACHE_CACHE_H_
#define KSCORE_SHIM_CACHE_CACHE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "shim/cache/cluster_index.h"
#include "shim/cache/objects.h"
#include "shim/cache/resource_sum.h"

namespace kscore::cache {

// The shim's picture of the cluster: nodes, and per node the aggregates of the
// pods on it (bound and assumed) that the scorer contract carries, kept
// incrementally so a cycle costs O(candidate nodes), never O(pods).
// Thread-safe.
class Cache {
 public:
  void UpsertNode(pb::Node node, std::vector<NodeImage> images = {});
  void RemoveNode(const std::string& name);

  // A pod the API server says is assigned (spec.nodeName set). Replaces an
  // assumed copy of the same pod.
  void UpsertAssignedPod(const PodInfo& pod);
  void RemovePod(const std::string& key);

  // Counts the pod on `node` before the binding is confirmed, so the next
  // cycles see it. False if the pod is already in the cache.
  bool AssumePod(const PodInfo& pod, const std::string& node);
  // Undoes AssumePod after a failed binding (no-op if confirmed meanwhile).
  void ForgetPod(const std::string& key);
  bool IsAssumed(const std::string& key) const;
  // The node a pod is bound or assumed on, or "".
  std::string NodeOf(const std::string& key) const;

  size_t NodeCount() const;

  // Namespaces' labels and the Services and controllers whose selectors
  // kube-scheduler's default spreading reads (ClusterIndex).
  void UpsertNamespace(const std::string& name, const framework::LabelMap& l);
  void RemoveNamespace(const std::string& name);
  void UpsertWorkload(WorkloadKind kind, const std::string& ns,
                      const std::string& name, bool has_selector,
                      const pb::LabelSelector& selector);
  void RemoveWorkload(WorkloadKind kind, const std::string& ns,
                      const std::string& name);

  // The pod message a profile's requests carry: the pod's own, with what
  // pod_data asks for added (namespace labels, workload selectors) or left
  // out (images).
  pb::Pod PodFor(const PodInfo& pod,
                 const std::vector<pb::PodData>& pod_data) const;

  // Answers a pod's plan (ClusterIndex::Prepare) from the current state.
  std::shared_ptr<const ClusterIndex::Prepared> Prepare(
      const pb::Pod& pod, const pb::PlanResponse& plan) const;

  // kube-scheduler's zone of a node (GetZoneKey): region and zone from the
  // topology labels (or their failure-domain.beta ones), "" without both.
  static std::string ZoneKey(
      const google::protobuf::Map<std::string, std::string>& labels);
  size_t PodCount() const;

  // Appends to `out`, already serialised, the candidate nodes
  // [start, start+count) (wrapping) of the node list as occurrences of the
  // message field `field_number` (a `repeated Node`, e.g. 3 of
  // EvaluateRequest), with the aggregates the scorer reads; label_counts for
  // `label_keys` use the incoming pod's namespace and values. Without
  // with_labels, node labels are left out (no enabled plugin reads them for
  // this pod). Returns the number of nodes appended; with `names`, their
  // names are appended to it in the same order.
  //
  // Each node's bytes are kept encoded (its static part when the Node
  // changes, its aggregates when a pod on it does), so a cycle copies bytes
  // instead of building and encoding hundreds of messages.
  //
  // With `prepared`, each node also carries its part of the answers to the
  // pod's plan (query_counts, term_counts, images).
  size_t AppendCandidates(
      const PodInfo& incoming, const std::vector<std::string>& label_keys,
      size_t start, size_t count, bool with_labels, int field_number,
      std::string* out, std::vector<std::string>* names = nullptr,
      const ClusterIndex::Prepared* prepared = nullptr) const;
  // The same for the named nodes (those still present), in that order.
  size_t AppendNamed(const PodInfo& incoming,
                     const std::vector<std::string>& label_keys,
                     const std::vector<std::string>& nodes, bool with_labels,
                     int field_number, std::string* out,
                     std::vector<std::string>* names,
                     const ClusterIndex::Prepared* prepared) const;

  // The same candidates as messages (AppendCandidates, parsed back): for
  // tests and tools.
  size_t FillCandidates(const PodInfo& incoming,
                        const std::vector<std::string>& label_keys,
                        size_t start, size_t count,
                        google::protobuf::RepeatedPtrField<pb::Node>* out,
                        bool with_labels = true,
                        const ClusterIndex::Prepared* prepared = nullptr) const;

 private:
  // What a pod contributes to its node; kept so updates and deletes can
  // subtract exactly what was added.
  struct PodEntry {
    std::string node;
    std::string namespace_;
    bool assumed = false;
    bool countable = false;  // counted in label counts
    pb::Resources requests;
    pb::Resources non_zero;
    std::vector<pb::HostPort> host_ports;
    std::vector<std::pair<std::string, std::string>> labels;
    ClusterIndex::PodRef ref;  // what the cluster index counted
  };
  struct NodeEntry {
    bool present = false;  // a Node object exists (pods may arrive first)
    size_t pos = 0;        // index in order_ (and slab_) while present
    std::string zone;      // ZoneKey of its labels, while present
    int32_t pod_count = 0;
    ResourceSum requested;
    ResourceSum non_zero;
    std::vector<pb::HostPort> used_ports;
    // The static part encoded (name, labels, taints, unschedulable,
    // allocatable), with and without labels.
    std::string static_labeled;
    std::string static_unlabeled;
    // The whole Node as sent, without and with labels: the static part
    // followed by the encoded aggregates (protobuf merges concatenated
    // encodings field by field). One contiguous string per node, so a cycle
    // copies each candidate in one go.
    std::string wire[2];
  };

  // Re-encodes the aggregates into `wire` (and the node's slab_ slot) after
  // a node or pod change.
  void Encode(NodeEntry* n) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void WriteSlotLocked(const NodeEntry& n) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The entry for a node name, created empty (not present) if missing.
  NodeEntry& EntryLocked(const std::string& name)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  void AddLocked(const std::string& key, PodEntry entry)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void SubtractLocked(const std::string& key)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  // Entries are boxed so `order_` can point at them across rehashes.
  absl::flat_hash_map<std::string, std::unique_ptr<NodeEntry>> nodes_
      ABSL_GUARDED_BY(mu_);
  // Present nodes by zone (kube-scheduler's node tree): zones in the order
  // they appeared, nodes in each in the order they were added.
  std::vector<std::pair<std::string, std::vector<NodeEntry*>>> zones_
      ABSL_GUARDED_BY(mu_);
  // Present nodes interleaved by zone (the first of each zone, then the
  // second of each...), as kube-scheduler lists its node tree, so a window
  // of percentageOfNodesToScore covers every zone; rebuilt from zones_ when
  // a node comes, goes or changes zone (lazily: the first read after).
  mutable std::vector<NodeEntry*> order_ ABSL_GUARDED_BY(mu_);
  mutable bool order_stale_ ABSL_GUARDED_BY(mu_) = false;
  void PlaceLocked(NodeEntry* n, const std::string& zone)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void UnplaceLocked(NodeEntry* n) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RebuildOrderLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The label-less encodings again, one fixed-size slot per node in order_'s
  // order, so a cycle reads its window of candidates sequentially instead of
  // chasing one heap object per node (cache misses were most of a cycle's
  // shim time at 5000 nodes). Slot: [0] length (0: too long, read the
  // entry), then the bytes.
  static constexpr size_t kSlot = 128;
  mutable std::vector<char> slab_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, PodEntry> pods_ ABSL_GUARDED_BY(mu_);
  ClusterIndex index_ ABSL_GUARDED_BY(mu_);
  // One candidate's bytes: `fixed` (its encoding from the slab or entry)
  // followed by the label counts and plan answers for the incoming pod.
  struct Wanted;
  void AppendOneLocked(const NodeEntry* entry, absl::string_view fixed,
                       const std::vector<Wanted>& wanted,
                       const ClusterIndex::Prepared* prepared, uint32_t tag,
                       std::string* out, std::vector<std::string>* names) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::vector<Wanted> WantedLocked(
      const PodInfo& incoming, const std::vector<std::string>& label_keys) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // "namespace\0key\0value" -> node -> count of countable pods there with
  // that label. Kept cache-wide rather than per node: a cycle looks up the
  // incoming pod's value once and then asks a map of a few nodes, without
  // touching the other candidates' entries.
  absl::flat_hash_map<std::string,
                      absl::flat_hash_map<const NodeEntry*, int64_t>>
      label_counts_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kscore::cache

#endif  // KSCORE_SHIM_CACHE_CACHE_H_
