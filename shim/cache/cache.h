#ifndef KSCORE_SHIM_CACHE_CACHE_H_
#define KSCORE_SHIM_CACHE_CACHE_H_

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/node_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "model/node_key.h"
#include "shim/cache/cluster_index.h"
#include "shim/cache/resource_sum.h"
#include "shim/cache/volume_use.h"
#include "shim/cache/volumes.h"
#include "shim/objects/objects.h"
#include "shim/objects/storage.h"

namespace kscore::cache {

// How a candidate node goes on the wire: whole; whole with its content key
// (pb::Node::content_key), so the scorer keeps it; or by its key alone, for
// a scorer that keeps nodes (the cycle's parts are sent either way).
enum class NodeForm { kFull, kFullWithKey, kKey };

// The shim's picture of the cluster: nodes, and per node the aggregates of the
// pods on it (bound and assumed) that the scorer contract carries, kept
// incrementally so a cycle costs O(candidate nodes), never O(pods).
// Thread-safe.
class Cache {
 public:
  Cache();
  Cache(const Cache&) = delete;
  Cache& operator=(const Cache&) = delete;

  void UpsertNode(pb::Node node, std::vector<objects::NodeImage> images = {});
  void RemoveNode(const std::string& name);

  // A pod the API server says is assigned (spec.nodeName set). Replaces an
  // assumed copy of the same pod.
  void UpsertAssignedPod(const objects::PodInfo& pod);
  void RemovePod(const std::string& key);

  // Counts the pod on `node` before the binding is confirmed, so the next
  // cycles see it. False if the pod is already in the cache.
  bool AssumePod(const objects::PodInfo& pod, const std::string& node);
  // Undoes AssumePod after a failed binding (no-op if confirmed meanwhile).
  void ForgetPod(const std::string& key);
  // The node a pod is bound or assumed on, or "".
  std::string NodeOf(const std::string& key) const;
  // The pod `key` is counted on a node and not being deleted.
  bool HoldsLivePod(const std::string& key) const;

  size_t NodeCount() const;

  // Nominations, upstream's nominator: the node a preemption nominated a
  // pending pod to. Until the pod binds, is deleted or is nominated
  // elsewhere, its requests, host ports and one pod are added to that
  // node's aggregates in the candidates built for pods of lower or equal
  // priority (not for itself; upstream's addGENominatedPods), so they do not
  // take the room freed for it. non_zero_requested stays as it is: upstream
  // scores nodes without nominated pods.
  //
  // The shim's own nomination, before the API shows it; "" drops it.
  void Nominate(const objects::PodInfo& pod, const std::string& node);
  // A pending pod as the informer shows it: status.nominatedNodeName, read
  // as upstream's UpdateNominatedPod does (a nomination made in memory stays
  // while the API shows none before nor after).
  void UpdatePendingPod(const objects::PodInfo& pod);
  // Drops a nomination (the pod may no longer fit where it was nominated).
  void DropNomination(const std::string& key);
  // Where the pod is nominated, or "".
  std::string NominatedNode(const std::string& key) const;
  struct NominatedPod {
    std::string key;
    std::string namespace_;
    std::string name;
    std::string uid;
    int32_t priority = 0;
    std::string scheduler_name;
  };
  // How many nodes have a pod nominated to them.
  size_t NominatedNodeCount() const;
  // The pods nominated to `node` (upstream's NominatedPodsForNode), by key.
  std::vector<NominatedPod> NominatedPodsOn(const std::string& node) const;

  // Namespaces' labels and the Services and controllers whose selectors
  // kube-scheduler's default spreading reads (ClusterIndex).
  void UpsertNamespace(const std::string& name, const model::LabelMap& l);
  void RemoveNamespace(const std::string& name);
  void UpsertWorkload(objects::WorkloadKind kind, const std::string& ns,
                      const std::string& name, bool has_selector,
                      const pb::LabelSelector& selector);
  void RemoveWorkload(objects::WorkloadKind kind, const std::string& ns,
                      const std::string& name);

  // PodDisruptionBudgets, which preemption reads (upstream lists them all
  // from its informer). A budget is known by namespace and name.
  void UpsertPdb(std::shared_ptr<const objects::PdbInfo> pdb);
  void RemovePdb(const std::string& ns, const std::string& name);
  size_t PdbCount() const;
  // The budgets that protect `pod`, sorted by name: those of its namespace
  // whose selector matches its labels, as upstream's
  // FilterVictimsWithPDBViolation matches them. A pod without labels has
  // none, and a budget with an unset, empty or malformed selector protects
  // no pod there (selector.Empty() is skipped).
  std::vector<std::shared_ptr<const objects::PdbInfo>> PdbsCovering(
      const objects::PodInfo& pod) const;

  // NodeVolumeLimits' objects: a node's CSINode (known by the node's name)
  // and VolumeAttachments. With the pods' claims resolved through volumes()
  // (kept current as claims, volumes and classes change), they make each
  // node's pb::Node::csi_drivers.
  void UpsertCsiNode(const objects::CsiNodeInfo& n);
  void RemoveCsiNode(const std::string& name);
  void UpsertAttachment(const objects::AttachmentInfo& a);
  void RemoveAttachment(const std::string& name);

  // The storage objects (their informers feed them) and what Reserve
  // assumed of them.
  Volumes& volumes() { return volumes_; }
  const Volumes& volumes() const { return volumes_; }

  // The pod message a profile's requests carry: the pod's own, with what
  // pod_data asks for added (namespace labels, workload selectors, the
  // claims' volumes) or left out (images).
  pb::Pod PodFor(const objects::PodInfo& pod,
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
  // pod's plan (query_counts, term_counts, images). For a pod with in-tree
  // disks, each node carries those of its pods' that may conflict (disks).
  //
  // `form` says whether nodes go whole, whole with their content key, or
  // by their key; a node with nominated pods the incoming pod yields to
  // always goes whole (its content is not the key's). With `replica` (0 to
  // 63, the scorer replica the request goes to), a node goes by key only
  // once it went whole with its current key to that replica: the cache
  // remembers where each key went (the replica may still have dropped it,
  // and answers missing_nodes).
  size_t AppendCandidates(const objects::PodInfo& incoming,
                          const std::vector<std::string>& label_keys,
                          size_t start, size_t count, bool with_labels,
                          int field_number, std::string* out,
                          std::vector<std::string>* names = nullptr,
                          const ClusterIndex::Prepared* prepared = nullptr,
                          NodeForm form = NodeForm::kFull,
                          int replica = -1) const;
  // The same for the named nodes (those still present), in that order;
  // with `whole`, nodes[i] goes whole with its key where whole[i] is set.
  size_t AppendNamed(const objects::PodInfo& incoming,
                     const std::vector<std::string>& label_keys,
                     const std::vector<std::string>& nodes, bool with_labels,
                     int field_number, std::string* out,
                     std::vector<std::string>* names,
                     const ClusterIndex::Prepared* prepared,
                     NodeForm form = NodeForm::kFull,
                     const std::vector<bool>* whole = nullptr,
                     int replica = -1) const;

  // PostFilter's view for a preemptor (PreemptRequest.nodes): each of
  // `nodes` still present, in that order, as Evaluate gets it for the
  // preemptor (AppendNamed, nominated pods it yields to included), with its
  // pods of lower priority: what each adds to the aggregates, exactly as
  // counted, and with `prepared` (made for `pod` and `plan`) what it adds
  // to the plan's answers. Adding stops before a node whose pods would take
  // the victims past `max_victims` (the first node is always added).
  // Returns the number of nodes added. Encoded: PreemptRequest.nodes fields
  // appended to `out`, built without a message; and into `sent`, per node
  // added, its name and its victims' namespace, name, uid and terminating
  // (what reading the answer needs).
  size_t EncodePreemptionNodes(
      const objects::PodInfo& preemptor, const pb::Pod& pod,
      const std::vector<std::string>& label_keys,
      const std::vector<std::string>& nodes, bool with_labels,
      const pb::PlanResponse& plan, const ClusterIndex::Prepared* prepared,
      size_t max_victims, std::string* out,
      google::protobuf::RepeatedPtrField<pb::PreemptionNode>* sent) const;
  // NodeVolumeLimits' part of a PreemptionNode whose pods (the victims) are
  // filled in: the CSI volumes they use on `node` (pn->csi_volumes) and each
  // victim's indices into them. `preemptor` is the pod preempting (its
  // volumes are matched against those).
  void AddCandidateCsiVolumes(const std::string& node, const pb::Pod& preemptor,
                              pb::PreemptionNode* pn) const;
  // A node's pods of lower priority than `priority`, for
  // PreemptRequest.nominated_node_pods: identity and priority, and as
  // `terminating` upstream's PodTerminatingByPreemption (being deleted
  // because a scheduler preempted it), the only thing read of them.
  std::vector<pb::VictimPod> LowerPriorityPods(const std::string& node,
                                               int32_t priority) const;
  // The PodDisruptionBudgets of `namespaces` whose selector may protect a
  // pod (PreemptRequest.pdbs), by namespace as given, then by name.
  std::vector<pb::DisruptionBudget> DisruptionBudgetsIn(
      const std::vector<std::string>& namespaces) const;
  // Every present node's name, in candidate order (start 0).
  std::vector<std::string> NodeNames() const;

  // Changes, for batching equivalent pods: a counter every change to a node
  // as a candidate reads it (its aggregates, label counts) advances, and
  // whether the candidates changed in any other way (a node came or went,
  // a namespace changed) since a value of it; a nomination counts as a
  // change of its node.
  uint64_t ChangeSeq() const;
  // The present nodes changed since `seq` (ChangeSeq's), each once, into
  // `names`; false when something else changed too, or the changes are
  // older than the cache remembers (then every node counts as changed).
  bool ChangedSince(uint64_t seq, std::vector<std::string>* names) const;
  // For batching over a share of the nodes: each named node's position in
  // the candidate order (AppendCandidates' `start`), -1 when it is not
  // there, into `positions`; returns the node count. Positions hold until
  // ChangedSince says something else changed.
  size_t PositionsOf(const std::vector<std::string>& names,
                     std::vector<int32_t>* positions) const;
  // The names at `positions` (each below NodeCount()).
  std::vector<std::string> NamesAt(const std::vector<int32_t>& positions) const;
  // ClusterIndex::DomainPeers under the cache's lock: the nodes that share
  // a changed node's domain of a key `prepared` reads, appended to `names`.
  bool DomainPeers(const ClusterIndex::Prepared& prepared,
                   std::vector<std::string>* names) const;
  // The nodes running countable pods of namespace `ns` labelled key=value
  // (the label counts AppendCandidates adds), into `names`.
  void NodesCounting(const std::string& ns, const std::string& key,
                     const std::string& value,
                     std::vector<std::string>* names) const;

 private:
  // What a pod contributes to its node; kept so updates and deletes can
  // subtract exactly what was added.
  struct PodEntry {
    std::string node;
    std::string namespace_;
    // What preemption reads of a pod (VictimPod).
    std::string name;
    std::string uid;
    int32_t priority = 0;
    std::optional<absl::Time> start_time;
    bool deleting = false;
    bool preempted_by_scheduler = false;
    bool assumed = false;
    bool countable = false;  // counted in label counts
    pb::Resources requests;
    pb::Resources non_zero;
    std::vector<pb::HostPort> host_ports;
    std::vector<std::pair<std::string, std::string>> labels;
    ClusterIndex::PodRef ref;   // what the cluster index counted
    VolumeUse::PodUse volumes;  // what volume_use_ counted
    // NodeVolumeLimits: for a running pod with claims or in-tree volumes,
    // its namespace, name, uid, claims and in-tree volumes (to resolve them
    // again), the CSI volumes they resolved to (counted on the node), an
    // in-tree volume's failed translation (upstream's error, reported on
    // the node) and the storage objects read (Volumes::Dep).
    std::shared_ptr<const pb::Pod> claims;
    std::vector<Volumes::Attachable> csi;
    std::string csi_error;
    std::vector<std::string> csi_deps;
  };
  // Whether `e`, made of a bound pod, adds to its node what `kept` does
  // (same node and aggregates, and the same index read but for the labels).
  static bool SameAggregates(const PodEntry& kept, const PodEntry& e);
  struct NodeEntry {
    bool present = false;  // a Node object exists (pods may arrive first)
    size_t pos = 0;        // index in order_ (and slab_) while present
    std::string zone;      // ZoneKey of its labels, while present
    int32_t pod_count = 0;
    std::vector<std::string> pods;         // keys of the pods counted here
    std::vector<const PodEntry*> entries;  // and their entries, in order
    ResourceSum requested;
    ResourceSum non_zero;
    std::vector<pb::HostPort> used_ports;
    // The node's images (ClusterIndex's), as a key to notice a change.
    std::string images_key;
    // The static part encoded (name, labels, taints, unschedulable,
    // allocatable, declared features), with and without labels, and the
    // same as content key parts (without labels first).
    std::string static_labeled;
    std::string static_unlabeled;
    model::NodeKeyParts key_parts[2];
    // The whole Node as sent, without and with labels: the static part
    // followed by the encoded aggregates (protobuf merges concatenated
    // encodings field by field). One contiguous string per node, so a cycle
    // copies each candidate in one go.
    std::string wire[2];
    // Their content keys (model::NodeContentKey), and the replicas each
    // went to whole (bit r: replica r; the unlabeled one lives in the slab
    // slot when the node fits one).
    std::string key[2];
    mutable uint64_t sent[2] = {0, 0};
    // The node as the last pod that yields to pods nominated here saw it
    // (their aggregates added), without and with labels: its aggregates'
    // encoding, the whole, its key and the replicas it went to. Kept while
    // the same pods yield, so such a node too goes by key.
    struct Yielding {
      std::string aggregates, wire, key;
      uint64_t sent = 0;
      // What it was built for: the nominations here (NominatedHere::seq),
      // the node's own key, and the pod's priority and whether it is one
      // of them; `yields` false when that pod yields to none of them.
      uint64_t seq = 0;
      std::string own_key;
      int32_t priority = 0;
      bool self = false;
      bool yields = false;
    };
    mutable Yielding yielding[2];
    // NodeVolumeLimits. Whether a CSINode exists, and its drivers; per
    // distinct CSI volume in use here (by unique name), who uses it; per
    // driver the distinct volumes counted (CsiDriverUse::attached); and per
    // pod here whose in-tree volume fails translation, upstream's error.
    bool has_csi_node = false;
    std::vector<objects::CsiNodeInfo::Driver> csi_node;
    struct CsiVolume {
      std::string driver;    // the pods'
      int32_t pods = 0;      // pods here using it
      std::string attacher;  // a VolumeAttachment's
      int32_t attachments = 0;
    };
    absl::flat_hash_map<std::string, CsiVolume> csi_volumes;
    absl::flat_hash_map<std::string, int32_t> csi_attached;
    std::map<std::string, std::string> csi_errors;  // by pod key
    // Nothing but a pod, CSINode or VolumeAttachment keeps it here.
    bool Unused() const {
      return !present && pod_count == 0 && !has_csi_node &&
             csi_volumes.empty() && csi_errors.empty();
    }
  };

  // A pending pod's nomination and what it would hold on the node.
  struct Nomination {
    NominatedPod pod;
    std::string node;
    // status.nominatedNodeName as the informer last showed it.
    std::string api_node;
    pb::Resources requests;
    std::vector<pb::HostPort> host_ports;
  };
  void NominateLocked(const objects::PodInfo& pod, const std::string& node,
                      const std::string* api_node)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DropNominationLocked(const std::string& key)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The aggregates, which follow the static part in `wire`; with
  // `nominated`, that node's nominated pods the incoming pod yields to added
  // (null when it yields to none).
  struct Yielded;
  static pb::Node Aggregates(const NodeEntry& n, const Yielded* nominated);
  static std::string EncodeAggregates(const NodeEntry& n,
                                      const Yielded* nominated) {
    return Aggregates(n, nominated).SerializeAsString();
  }
  // A budget in namespace `ns` selects pods (DisruptionBudgetsIn sends it).
  bool BudgetsSelectLocked(const std::string& ns) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // n.yielding for its form with `aggregates` (EncodeAggregates with the
  // pods yielded to), rebuilt with a new key when they or the node differ.
  NodeEntry::Yielding& YieldingLocked(const NodeEntry& n, bool with_labels,
                                      std::string aggregates) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The keys of the pods nominated to a node.
  struct NominatedHere {
    std::vector<std::string> keys;
    uint64_t seq = 0;  // nomination_changes_ at its last change
  };
  // Those of the pods nominated to a node (`here`) that `incoming` yields
  // to.
  bool YieldedLocked(const NominatedHere& here,
                     const objects::PodInfo& incoming, Yielded* out) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // n.yielding for `incoming` when pods are nominated to n (`here`): kept
  // while nothing it was built for changed, else built again. Null when
  // `incoming` yields to none of them.
  NodeEntry::Yielding* YieldingFor(const NodeEntry& n,
                                   const NominatedHere& here,
                                   const objects::PodInfo& incoming,
                                   bool with_labels) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Re-encodes the aggregates into `wire` (and the node's slab_ slot) after
  // a node or pod change.
  void Encode(NodeEntry* n) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void WriteSlotLocked(const NodeEntry& n) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Where the replicas a node's key went to are kept, for `variant`.
  char* SentLocked(const NodeEntry& n, int variant) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The entry for a node name, created empty (not present) if missing.
  NodeEntry& EntryLocked(const std::string& name)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  void AddLocked(const std::string& key, PodEntry entry)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A pod as PreemptRequest carries it; with `prepared`, its plan parts.
  void VictimLocked(const PodEntry& e, const pb::Pod* pod,
                    const pb::PlanResponse* plan,
                    const ClusterIndex::Prepared* prepared,
                    pb::VictimPod* out) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void SubtractLocked(const std::string& key)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Counts (delta 1) or uncounts (-1) `e`'s labels on its node `n`.
  void CountLabelsLocked(const PodEntry& e, NodeEntry* n, int delta)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // `kept` with the labels of `pod` (`labels`, as MakeEntry lists them),
  // its node's content unchanged.
  void RelabelLocked(PodEntry* kept, const objects::PodInfo& pod,
                     std::vector<std::pair<std::string, std::string>> labels)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // NodeVolumeLimits' bookkeeping (csi_usage.cc).
  // Resolves a new entry's claims (CSI volumes and the objects read).
  void ResolveCsiLocked(PodEntry* e) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // AddCandidateCsiVolumes with the victims' entries, one per pn->pods,
  // in order (null for a pod not here), and the preemptor's volumes'
  // unique names (InUseNamesLocked).
  void CandidateCsiVolumesLocked(const NodeEntry& n,
                                 const std::vector<const PodEntry*>& victims,
                                 const std::vector<std::string>& in_use,
                                 pb::PreemptionNode* pn) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Counts (+1) or uncounts (-1) a pod's volumes on `n` and keeps deps_.
  void CountCsiLocked(const std::string& key, const PodEntry& e, NodeEntry* n,
                      int sign) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Adds `delta` pods (or attachments, with `attacher`) to one volume.
  static void UseCsiVolume(NodeEntry* n, const std::string& unique,
                           const std::string& driver, int32_t delta,
                           bool attacher);
  // A claim, volume or class changed (Volumes::SetOnChange).
  void StorageChanged(const std::string& dep);
  void ResolvePodLocked(const std::string& key)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ResolveAttachmentLocked(const std::string& name)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DropAttachmentLocked(const std::string& name)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The incoming pod's attachable volumes' unique names (volumes_in_use).
  std::vector<std::string> InUseNamesLocked(const objects::PodInfo& incoming)
      const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::vector<std::string> InUseNamesLocked(const pb::Pod& pod) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  static void AddInUse(const NodeEntry& n, const std::vector<std::string>& in,
                       pb::Node* extra);
  // Erases `it` when nothing keeps it (NodeEntry::Unused), else re-encodes.
  void SettleLocked(
      absl::flat_hash_map<std::string, std::unique_ptr<NodeEntry>>::iterator it)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  // ChangeSeq and ChangedSince: the counter, the last value at which the
  // candidates changed other than by a node's aggregates, and the nodes
  // whose aggregates changed, with the counter's value then (the newest
  // kChangeLog; `forgotten` is the last one dropped).
  static constexpr size_t kChangeLog = size_t{1} << 16;
  uint64_t seq_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t structure_seq_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t forgotten_seq_ ABSL_GUARDED_BY(mu_) = 0;
  std::deque<std::pair<uint64_t, std::string>> changes_ ABSL_GUARDED_BY(mu_);
  void StructureChangedLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    structure_seq_ = ++seq_;
  }
  void NodeChangedLocked(const NodeEntry& n) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void NominationChangedLocked(const std::string& node)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
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
  // entry), then the replicas its key went to (NodeEntry::sent[0], 8
  // bytes), then the content key (model::kNodeKeyBytes), then the bytes.
  static constexpr size_t kSlot = 128;
  static constexpr size_t kSlotHead = 1 + sizeof(uint64_t) + 16;
  mutable std::vector<char> slab_ ABSL_GUARDED_BY(mu_);
  // A node map: NodeEntry::entries point into it.
  absl::node_hash_map<std::string, PodEntry> pods_ ABSL_GUARDED_BY(mu_);
  ClusterIndex index_ ABSL_GUARDED_BY(mu_);
  VolumeUse volume_use_ ABSL_GUARDED_BY(mu_);
  Volumes volumes_;  // its own lock
  // A budget, and whether its selector can protect any pod (decided once).
  struct PdbEntry {
    std::shared_ptr<const objects::PdbInfo> info;
    bool selects = false;
  };
  // namespace -> name -> budget (ordered by name, as PdbsCovering answers).
  absl::flat_hash_map<std::string, std::map<std::string, PdbEntry>> pdbs_
      ABSL_GUARDED_BY(mu_);
  // One candidate's bytes: `fixed` (its encoding from the slab or entry)
  // followed by the label counts and plan answers for the incoming pod.
  // Unless the node has nominated pods the incoming pod yields to: then its
  // static part and aggregates with them added.
  struct Wanted;
  void AppendOneLocked(const NodeEntry* entry, absl::string_view fixed,
                       absl::string_view key, NodeForm form, char* sent,
                       uint64_t replica_bit, const objects::PodInfo& incoming,
                       bool with_labels, const std::vector<Wanted>& wanted,
                       const ClusterIndex::Prepared* prepared,
                       const std::vector<std::string>& in_use, uint32_t tag,
                       std::string* out, std::vector<std::string>* names) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::vector<Wanted> WantedLocked(const objects::PodInfo& incoming,
                                   const std::vector<std::string>& label_keys)
      const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // "namespace\0key\0value" -> node -> count of countable pods there with
  // that label. Kept cache-wide rather than per node: a cycle looks up the
  // incoming pod's value once and then asks a map of a few nodes, without
  // touching the other candidates' entries.
  absl::flat_hash_map<std::string,
                      absl::flat_hash_map<const NodeEntry*, int64_t>>
      label_counts_ ABSL_GUARDED_BY(mu_);
  // Pending pods' nominations by pod key, and their keys by node (empty in
  // a cluster without preemption: then candidates cost no lookup).
  absl::flat_hash_map<std::string, Nomination> nominations_
      ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, NominatedHere> nominated_on_
      ABSL_GUARDED_BY(mu_);
  uint64_t nomination_changes_ ABSL_GUARDED_BY(mu_) = 0;
  // VolumeAttachments by name: the node, and the unique name and attacher
  // counted there ("" when it names no CSI volume).
  struct Attachment {
    objects::AttachmentInfo info;
    std::string unique;
  };
  absl::flat_hash_map<std::string, Attachment> attachments_
      ABSL_GUARDED_BY(mu_);
  // Volumes::DepKey -> who read it: "p" + pod key, "a" + attachment name.
  absl::flat_hash_map<std::string, absl::flat_hash_set<std::string>> deps_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace kscore::cache

#endif  // KSCORE_SHIM_CACHE_CACHE_H_
