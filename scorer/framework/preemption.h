#ifndef KSCORE_SCORER_FRAMEWORK_PREEMPTION_H_
#define KSCORE_SCORER_FRAMEWORK_PREEMPTION_H_

// kube-scheduler's preemption machinery (framework/preemption): the dry run
// of removing a potential node's lower-priority pods, the search over the
// potential nodes and the pick among the candidates. What a preemption
// plugin decides (which pods to remove, in which order, whether the pod may
// preempt at all) is the plugin's: PreemptionPolicy, as upstream's
// preemption.Interface.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "kscore/scorer/v1/scorer.pb.h"
#include "scorer/framework/cycle_state.h"
#include "scorer/framework/plugin.h"
#include "scorer/framework/status.h"

namespace kscore::framework {

class Profile;

// A node where removing `victims` lets the pod fit, with the numbers
// upstream's pickOneNodeForPreemption compares (pb::PreemptionCandidate).
struct Candidate {
  int node = 0;              // index into PreemptRequest.nodes
  std::vector<int> victims;  // into that node's pods, most important first
  int32_t pdb_violations = 0;
  int32_t highest_priority = 0;
  int64_t sum_priorities = 0;  // Σ (priority + 2^31)
  int64_t earliest_start_of_highest_unix_nanos = 0;
};

// What a PostFilter plugin decided: Success with the chosen candidate, or
// why not. The status's reasons hold upstream's message
// ("preemption: ...").
struct PostFilterResult {
  PluginStatus status;
  int chosen = -1;                    // into candidates
  std::vector<Candidate> candidates;  // in request order
  // The dry run passed every node sent without stopping, and the request
  // left potential nodes out (PreemptResponse.partial).
  bool partial = false;
};

// Everything one Preempt call knows, shared by every step of it.
struct PreemptionInput {
  const pb::PreemptRequest* request = nullptr;
  const Profile* profile = nullptr;
  // The pod's PreFilter over the request's cluster data, and its outcome.
  const CycleState* state = nullptr;
  PluginStatus pre_filter;
  // The query bases of the pod's plan (CycleState::QueryBase), for states
  // bound to a changed copy of the cluster data.
  absl::flat_hash_map<std::string, int> query_bases;
  // Start time of pods that report none (upstream reads the clock).
  absl::Time now;
};

// One potential node during the dry run: its aggregates less the pods
// removed so far, and the pod's Filter against them. Removing a pod
// subtracts what it adds to the node (requests, a pod, its host ports) and
// to the answers of the pod's plan (its matched queries in the node's
// domain and the clusters' totals, where the least count of a domain may
// fall to this one; its existing terms), as upstream's NodeInfo.RemovePod
// and PreFilterExtensions.RemovePod do; adding it back undoes that.
// Not thread-safe; the changed cluster data it may share with the next node
// is restored when it is destroyed.
class DryRunNode {
 public:
  // `cluster` is a copy of the request's cluster data the node may change
  // (nullptr when none of its pods is counted there).
  DryRunNode(const PreemptionInput& in, int index, pb::ClusterData* cluster);
  ~DryRunNode();
  DryRunNode(const DryRunNode&) = delete;
  DryRunNode& operator=(const DryRunNode&) = delete;

  int index() const { return index_; }
  const pb::Node& node() const { return node_; }
  int size() const { return static_cast<int>(removed_.size()); }
  const pb::VictimPod& pod(int i) const { return source_->pods(i); }
  bool removed(int i) const { return removed_[i]; }

  void Remove(int i);
  void Add(int i);
  // The pod against the node as it is now: Success, or the first rejecting
  // Filter plugin's status (upstream's RunFilterPluginsWithNominatedPods;
  // nominated pods are in the aggregates). PreFilter runs again over the
  // changed cluster data when a removed pod is counted in it, which is what
  // upstream's RemovePod/AddPod extensions keep up to date.
  absl::StatusOr<PluginStatus> Filter();

 private:
  void Apply(int i, int sign);
  // A pod's in-tree disks off (sign -1) or back on node_.disks.
  void ApplyDisks(const pb::VictimPod& p, int sign);
  // One more (sign -1) or one fewer of the users of the node's CSI volume
  // `k` removed: once all are, it stops counting in node_.csi_drivers and
  // node_.volumes_in_use (what upstream's NodeVolumeLimits counts from the
  // node's pods and VolumeAttachments).
  void ApplyCsiVolume(int32_t k, int sign);
  void AddAttached(const std::string& driver, int delta);

  const PreemptionInput& in_;
  const int index_;
  const pb::PreemptionNode* source_;
  pb::Node node_;
  pb::ClusterData* cluster_;
  std::vector<bool> removed_;
  // node_.term_counts index by term.
  absl::flat_hash_map<int32_t, int> term_slot_;
  // Removed pods counted in the cluster data: PreFilter must run again.
  int counted_removed_ = 0;
  std::vector<int32_t> touched_queries_;
  std::vector<int32_t> touched_terms_;
  // Per pod.volume_claims index, the removed pods' claim_refs to it.
  std::vector<int64_t> freed_claim_refs_;
  // Per source_->csi_volumes index, how many of its users are removed.
  std::vector<int32_t> csi_removed_;
};

// What a preemption plugin decides (upstream's preemption.Interface, less
// the extenders' parts).
class PreemptionPolicy {
 public:
  virtual ~PreemptionPolicy() = default;
  // How many candidates the search looks for before it stops, given the
  // number of potential nodes (at most that many).
  virtual int32_t NumCandidates(int32_t num_potential_nodes) const = 0;
  // "" when the pod may preempt; otherwise why not, in upstream's words.
  virtual std::string IneligibleReason(const pb::PreemptRequest& req) const = 0;
  // The fewest pods to remove from `node` for the pod to fit, or the status
  // that says it cannot (UnschedulableAndUnresolvable with no pod to remove,
  // or Filter's rejection with all of them removed). `victims` are indices
  // into the node's pods, most important first.
  struct Victims {
    PluginStatus status;
    std::vector<int> victims;
    int32_t pdb_violations = 0;
  };
  virtual absl::StatusOr<Victims> SelectVictimsOnNode(
      const PreemptionInput& in, DryRunNode& node) const = 0;
};

// kube-scheduler's PostFilter plugin: in kscore, one that preempts (the
// Preempt call's contract). When `in.pre_filter` is not success, no node
// fits whatever is removed (DryRunNode::Filter says so).
class PostFilterPlugin : public virtual Plugin {
 public:
  virtual absl::StatusOr<PostFilterResult> PostFilter(
      const PreemptionInput& in) const = 0;
};

// Upstream's Evaluator.Preempt, less the actuation: eligibility, the dry
// run over the request's nodes in order (stopping as DryRunPreemption does
// once it has NumCandidates candidates, one of them without PDB
// violations), and the pick. Messages are without the plugin's prefix.
// InvalidArgument for requests whose parts do not add up.
absl::StatusOr<PostFilterResult> Preempt(const PreemptionPolicy& policy,
                                         const PreemptionInput& in);

// Upstream's pickOneNodeForPreemption over the candidates: fewest PDB
// violations, lowest highest priority, lowest sum of priorities, fewest
// victims, latest start among the highest-priority victims; ties go to
// the first. -1 when there is none.
int PickOneNodeForPreemption(absl::Span<const Candidate> candidates);

// InvalidArgument naming the field when the request's nodes, pods and
// budgets are not what a dry run can use: indices out of range, counts
// below what the pods add, negative amounts, pods not of lower priority.
absl::Status ValidatePreemptRequest(const pb::PreemptRequest& req);

}  // namespace kscore::framework

#endif  // KSCORE_SCORER_FRAMEWORK_PREEMPTION_H_
