#ifndef KSCORE_SHIM_SCHEDULER_CYCLE_H_
#define KSCORE_SHIM_SCHEDULER_CYCLE_H_

// The scheduling cycle of one pod, without side effects on the cluster:
// kube-scheduler's schedulePod (findNodesThatFitPod, prioritizeNodes,
// selectHost) against the scorer. Assuming and binding are the Scheduler's.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "google/protobuf/map.h"
#include "model/fit_error.h"
#include "shim/cache/cache.h"
#include "shim/scheduler/explain.h"
#include "shim/scheduler/profiles.h"
#include "shim/scorer_client/scorer.h"

namespace kscore::scheduler {

namespace pb = ::kscore::scorer::v1;

// Why a cycle placed no pod: no node fits (an event reason Unschedulable,
// kube-scheduler's FitError message), or the cycle could not run (reason
// SchedulerError: the scorer unreachable, a plugin's Error, a bad answer).
struct Failure {
  enum class Kind { kUnschedulable, kError };
  Kind kind;
  std::string message;
  // A scorer replica refused the call for its configuration hash: the
  // profiles learnt from the scorer are stale.
  bool stale_profiles = false;
  // kUnschedulable: the plugins that rejected the pod (kube-scheduler's
  // UnschedulablePlugins, every call's together), sorted.
  std::vector<std::string> plugins = {};
  // kError: the scorer could not be reached (UNAVAILABLE), no other cause.
  bool unreachable = false;

  static Failure Unschedulable(std::string m,
                               std::vector<std::string> plugins = {}) {
    return {Kind::kUnschedulable, std::move(m), false, std::move(plugins),
            false};
  }
  static Failure Error(std::string m) {
    return {Kind::kError, std::move(m), false, {}, false};
  }
};

// What PostFilter decided (the scorer's Preempt): preempt `victims` to make
// room for the pod on `node`. Carried out by the Scheduler.
struct Preemption {
  std::string node;
  struct Victim {
    std::string namespace_;
    std::string name;
    std::string uid;
    bool terminating = false;  // being deleted already: nothing to send
  };
  std::vector<Victim> victims;
};

// What a failed cycle does to the pod's nomination (upstream's
// NominatingInfo): most failures clear it; PostFilter may set it (it
// preempted) or leave it (the pod waits for victims to go, or PostFilter
// could not run).
enum class Nominating { kClear, kKeep, kSet };

// The outcome of RunCycle: a node, or a failure.
struct CycleResult {
  std::string node{};                // empty on failure
  std::optional<Failure> failure{};  // set on failure
  // Where the next cycle's window starts (round robin), when this cycle got
  // as far as looking at every node it meant to.
  std::optional<size_t> next_start{};
  // On failure: the pod's nomination, and with kSet what to preempt.
  Nominating nominating = Nominating::kClear;
  std::optional<Preemption> preemption{};
  // With CycleInput::explain_top: what the cycle saw and why it decided.
  std::shared_ptr<Explanation> explanation{};
  // The node came from a batched cycle (batching.h).
  bool batched = false;
  // ... from an answer the scorer gave ahead, without a call.
  bool ahead = false;
  // No node fit, as the template's RejectedNodes and the nodes changed
  // since said (batching.h).
  bool reused_rejections = false;
  // For a pod whose claims are not all bound: VolumeBinding's decisions on
  // `node` (the scorer's), which Reserve assumes and PreBind writes.
  std::optional<pb::NodeVolumes> volumes{};

  bool ok() const { return !failure.has_value(); }
};

// A pod template's key: the profile, its configuration hash and the pod
// message without name and uid (deterministic bytes).
std::string TemplateKey(const ProfileInfo& profile, const pb::Pod& pod);

// Plans (pb::PlanResponse) by pod template: a plan depends only on the
// profile, the configuration and the pod message without its identity, so
// the replicas of a workload share one Plan call. Bounded; thread-safe.
class PlanCache {
 public:
  explicit PlanCache(size_t capacity = 4096) : capacity_(capacity) {}
  // `key` is TemplateKey(profile, pod).
  absl::StatusOr<pb::PlanResponse> Get(const ProfileInfo& profile,
                                       const std::string& key,
                                       const pb::Pod& pod,
                                       scorer_client::Scorer& scorer);
  size_t size() const;

 private:
  const size_t capacity_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, pb::PlanResponse> plans_
      ABSL_GUARDED_BY(mu_);
};

class Batches;

struct CycleInput {
  const objects::PodInfo* pod = nullptr;
  const ProfileInfo* profile = nullptr;
  const cache::Cache* cache = nullptr;
  size_t batch_size = 500;  // nodes per scorer call
  size_t start = 0;         // round-robin position (taken mod node count)
  std::mt19937_64* rng = nullptr;  // breaks ties between the best nodes
  PlanCache* plans = nullptr;      // when null, every cycle asks Plan
  // PostFilter's request stops adding nodes past this many victim pods.
  size_t max_victim_pods = 20000;
  // Not 0: fill CycleResult::explanation, with the per-plugin breakdown of
  // this many best nodes (negative: every feasible node), which the scorer
  // adds to the answers it gives anyway.
  int32_t explain_top = 0;
  // With explain_top: also each rejected node's plugin and message.
  bool explain_rejections = false;
  // Sessions for batching equivalent pods (batching.h); null: no batching.
  Batches* batches = nullptr;
  // Which of the next pods the queue holds look like this one's template
  // (upcoming()[i]: the i-th after it): a batched call asks the scorer for
  // their windows' answers ahead. Called only by a cycle that may ask for
  // them. A hint only: an answer serves a pod of the same template whose
  // window it is, whatever the queue did.
  std::function<std::vector<bool>()> upcoming{};
};

// What a cycle sends beyond the candidates: the pod message for the
// profile, and for a pod with a plan the answers to it.
struct CyclePlan {
  pb::Pod pod;
  std::string template_key;  // TemplateKey(profile, pod), once a cycle
  pb::PlanResponse plan;
  std::shared_ptr<const cache::ClusterIndex::Prepared> prepared;
  // Every request of the cycle carries Node.labels: the profile's rule for
  // this pod (ProfileInfo::NeedsNodeLabels), or the plan asks for them.
  bool node_labels = false;
  int32_t explain_top = 0;  // CycleInput::explain_top
  // Not 0: the call that normalises asks the scorer to keep a session of
  // this id (batching.h), and goes to the replica the id picks.
  uint64_t keep_session = 0;
  // How Evaluate's nodes go: by content key when the scorer keeps nodes.
  cache::NodeForm node_form = cache::NodeForm::kFull;
};

// The bytes every request of a cycle starts with: profile, pod, detail
// (DETAIL_TOTALS), the configuration hash the cycle is planned with, the
// plan's answers and explain_top. Fields appended later override (protobuf
// merging).
std::string RequestHead(const objects::PodInfo& pod, const ProfileInfo& profile,
                        const CyclePlan& plan);

// The fields an Evaluate request sets over its head (protobuf merging).
std::string EvaluateOverrides(bool skip_normalize, bool filter_only);

// A cycle's Evaluate requests, each the head (RequestHead, encoded once),
// then `overrides` (EvaluateOverrides, or "" for none), then the candidate
// nodes (Cache::AppendCandidates / AppendNamed) into `out`, whose names go
// to `names`. Each returns the number of nodes appended.
class EvaluateRequests {
 public:
  EvaluateRequests(const CycleInput& in, const CyclePlan& plan);
  // The candidates [first, first + count) of the node list (wrapping).
  // Nodes go as the plan says (CyclePlan::node_form) unless `form` is set.
  // With `replica`, the one the request goes to (Cache::AppendCandidates).
  size_t Window(absl::string_view overrides, size_t first, size_t count,
                std::string* out, std::vector<std::string>* names,
                std::optional<cache::NodeForm> form = std::nullopt,
                int replica = -1) const;
  // The named nodes still present, in that order.
  size_t Named(absl::string_view overrides,
               const std::vector<std::string>& nodes, std::string* out,
               std::vector<std::string>* names,
               std::optional<cache::NodeForm> form = std::nullopt,
               const std::vector<bool>* whole = nullptr,
               int replica = -1) const;

 private:
  const CycleInput& in_;
  const CyclePlan& plan_;
  const std::string head_;
};

// Sends Evaluate `requests` (request i to the replica `pins[i]` picks, when
// `pins` is not empty; scorer_client::Scorer::EvaluatePinned). A
// request a replica answers with missing_nodes (it lacks those nodes'
// content keys) is built again by `rebuild(i, whole, &request)` with the
// nodes `whole` marks (by position) whole, and sent again; if a replica
// still lacks some, once more with every node whole (`whole` null).
// `rebuild` returns false when the nodes are no longer those of the first
// request (the cluster changed meanwhile), and that request then fails.
using Rebuild =
    std::function<bool(size_t, const std::vector<bool>*, std::string*)>;
// The form of a rebuilt request's other nodes: by key, or with `whole`
// null, whole.
inline std::optional<cache::NodeForm> WholeForm(const std::vector<bool>* w) {
  return w == nullptr ? std::optional(cache::NodeForm::kFullWithKey)
                      : std::nullopt;
}
std::vector<absl::StatusOr<pb::EvaluateResponse*>> EvaluateResolving(
    scorer_client::Scorer& scorer, const std::vector<std::string>& requests,
    const Rebuild& rebuild, google::protobuf::Arena* arena,
    const std::vector<uint64_t>& pins = {});

// Some claim of the pod (its message's volumes) is not bound yet
// (upstream's arePodVolumesBound is false).
bool NeedsVolumeDecisions(const pb::Pod& pod);
// VolumeBinding's decisions for the pod on `node`: a one-node Evaluate with
// volume_decisions. Aborted when the node no longer takes the pod.
absl::StatusOr<pb::NodeVolumes> AskVolumeDecisions(
    const CycleInput& in, const CyclePlan& plan, const std::string& node,
    scorer_client::Scorer& scorer);

// Builds the pod message, asks for (or reuses) the plan and answers it.
absl::StatusOr<CyclePlan> PrepareCycle(const CycleInput& in,
                                       scorer_client::Scorer& scorer);

// Seam 1, the window: how many feasible nodes to find, among how many, from
// which node on.
struct Window {
  size_t all_nodes = 0;
  size_t to_find = 0;
  size_t first = 0;
};

// kube-scheduler's numFeasibleNodesToFind.
size_t NumFeasibleNodesToFind(int32_t percentage, size_t all_nodes);
Window PlanWindow(int32_t percentage, size_t all_nodes, size_t start);

// Seam 2, what the scorer said of the candidates, every batch together.
struct CandidateVerdicts {
  explicit CandidateVerdicts(size_t all_nodes)
      : all_nodes(all_nodes), fit_error(static_cast<int>(all_nodes)) {}

  size_t all_nodes;  // in the snapshot

  std::vector<std::string> names;  // every candidate sent, in order
  std::vector<size_t> feasible;    // indices into `names`
  std::vector<std::string> plugins;
  // The feasible nodes' raw scores, node after node (plugins.size() each).
  std::vector<int64_t> raw;
  // Totals per feasible node; filled by the call itself only when the cycle
  // took one call, else by Normalize.
  std::vector<int64_t> totals;
  google::protobuf::Map<std::string, std::string> cycle_state;
  model::FitErrorBuilder fit_error;             // the rejected nodes' reasons
  std::set<std::string> unschedulable_plugins;  // every call's, together
  size_t processed = 0;                         // candidates sent
  size_t calls = 0;                             // Evaluate calls made
  bool filtered_only = false;  // the calls ran Filter only (no scores yet)
  // For PostFilter: the candidates Filter found Unschedulable (not
  // UnschedulableAndUnresolvable), indices into `names`; the names of such
  // nodes from calls before `names` was replaced (FinishWithAllFeasible);
  // and PreFilter's code when it rejected the pod.
  std::vector<size_t> potential;
  std::vector<std::string> potential_before;
  pb::Code pre_filter_code = pb::CODE_SUCCESS;

  // For explanations (CycleInput::explain_top): the plugins' weights, the
  // scorer's breakdown of the best nodes (`node` indexes `names`), the
  // replicas that answered, and (explain_rejections) each rejected node.
  std::vector<int32_t> weights;
  struct Explained {
    size_t node = 0;
    int64_t total = 0;
    std::vector<int64_t> raw;
    std::vector<int64_t> normalized;
  };
  std::vector<Explained> explained;
  std::vector<std::string> replicas;
  bool keep_rejections = false;
  std::vector<Explanation::Rejection> rejections;

  // For the memo of a cycle in which no node fit (batching.h,
  // RejectedNodes), with keep_kinds: the distinct Filter verdicts and, per
  // candidate in `names`, its verdict's index (-1 for one that fit).
  struct Kind {
    pb::Code code = pb::CODE_UNSCHEDULABLE;
    std::string plugin;
    std::vector<std::string> reasons;
    bool operator==(const Kind&) const = default;
  };
  bool keep_kinds = false;
  std::vector<Kind> kinds;
  std::vector<int32_t> kind_of;
};

// The index in `kinds` of a rejected node's `status`, added when new.
int32_t KindIndex(const pb::Status& status,
                  std::vector<CandidateVerdicts::Kind>& kinds);

// Sends the window's candidates in batches of in.batch_size, more rounds
// while nodes are rejected and the window is not exhausted, into `ev`.
// With a plan whose score needs every feasible node, a cycle of several
// calls filters only, then FinishWithAllFeasible scores the feasible nodes
// in one call.
std::optional<Failure> EvaluateBatches(const CycleInput& in, const Window& w,
                                       const CyclePlan& plan,
                                       scorer_client::Scorer& scorer,
                                       CandidateVerdicts& ev);
std::optional<Failure> FinishWithAllFeasible(const CycleInput& in,
                                             const CyclePlan& plan,
                                             scorer_client::Scorer& scorer,
                                             CandidateVerdicts& ev);

// Reads one Evaluate answer for the candidates [base, end) of ev.names;
// `single` when it is the cycle's only call (its totals are the cycle's).
std::optional<Failure> CollectResponse(const pb::EvaluateResponse& resp,
                                       size_t base, size_t end, bool single,
                                       CandidateVerdicts& ev);

// Seam 3: totals for every feasible node. A cycle of several calls has its
// raw scores normalised together in one NormalizeScore call; without a
// score plugin every node totals 0.
std::optional<Failure> Normalize(const CycleInput& in, const CyclePlan& plan,
                                 scorer_client::Scorer& scorer,
                                 CandidateVerdicts& ev);

// Seam 4: the index (into totals) of the highest total, ties broken
// uniformly at random.
size_t SelectHost(absl::Span<const int64_t> totals, std::mt19937_64& rng);
// The -v=4 "why": the top three nodes with their totals and raw scores.
std::string ExplainChoice(const CandidateVerdicts& ev);
// An Explanation of `pod`: its identity, profile and the time, the rest to
// fill.
std::shared_ptr<Explanation> PodExplanation(const objects::PodInfo& pod);
// The Explanation of a cycle (CycleInput::explain_top) from its outcome and,
// when it got that far, its CandidateVerdicts.
std::shared_ptr<Explanation> Explain(const CycleInput& in,
                                     const CandidateVerdicts* ev,
                                     const CycleResult& result);

// A scorer call that failed: the transport's failure is "scorer
// unavailable: ..." (unreachable when UNAVAILABLE), the scorer's own error (a
// plugin's Error, a rejected request) keeps the scorer's wording.
Failure ScorerFailure(const absl::Status& s);

// Filter alone (filter_only) over the nodes `names`: the answer, on
// `arena`; NOT_FOUND when the cache no longer has one of them, else the
// call's failure.
absl::StatusOr<const pb::EvaluateResponse*> FilterNamed(
    const CycleInput& in, const CyclePlan& plan,
    const std::vector<std::string>& names, scorer_client::Scorer& scorer,
    google::protobuf::Arena* arena);

// Upstream's evaluateNominatedNode: the pod's nominated node alone, through
// PreFilter and Filter; true when it fits (the cycle then takes it without
// scoring). A failed call is logged and counts as not fitting.
bool EvaluateNominatedNode(const CycleInput& in, const CyclePlan& plan,
                           const std::string& node,
                           scorer_client::Scorer& scorer);

// Seams 1 to 4 for one pod, its nominated node first; for a pod no node
// took, PostFilter (preemption.h) when the profile has it.
CycleResult RunCycle(const CycleInput& in, scorer_client::Scorer& scorer);

}  // namespace kscore::scheduler

#endif  // KSCORE_SHIM_SCHEDULER_CYCLE_H_
