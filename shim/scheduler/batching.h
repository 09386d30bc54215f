#ifndef KSCORE_SHIM_SCHEDULER_BATCHING_H_
#define KSCORE_SHIM_SCHEDULER_BATCHING_H_

// Batching of equivalent pods: after a whole cycle, the scorer replica that
// normalised it keeps the raw scores (a session, pb::SessionUpdate) and the
// shim every candidate's Filter verdict. The next pod of the same family
// (FamilyKey) walks its window over those verdicts and sends only the nodes
// that changed since (Cache::ChangedSince) or were not seen yet: the replica
// re-evaluates them and normalises over the window, deciding what a whole
// cycle would. Upstream batches (OpportunisticBatch) only when the last pod
// made its node infeasible; this covers any change, packing included.

#include <cstdint>
#include <deque>
#include <list>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "shim/scheduler/cycle.h"

namespace kscore::scheduler {

// What the shim remembers of one session: which node each slot is, what
// Filter said of each node (by its position in the cache's candidate order)
// since it last changed, and how far the session is up to date.
struct BatchSession {
  enum Verdict : int8_t { kUnknown = 0, kFits = 1, kRejected = 2 };
  uint64_t id = 0;
  uint32_t generation = 0;
  uint64_t seq = 0;        // Cache::ChangeSeq the verdicts reflect
  std::string cluster;     // model::SessionCluster's encoding
  std::string key;         // TemplateKey of the session's pod
  std::string namespace_;  // and its namespace and labels
  absl::flat_hash_map<std::string, std::string> labels;
  std::vector<std::string> slots;  // slot -> node
  std::vector<int32_t> slot_at;    // position -> slot, or -1
  std::vector<Verdict> verdict;    // position -> Filter's verdict
  // The replica's answers for the windows of later pods
  // (pb::SessionUpdate.ahead), newest last: the template each answers for,
  // the Cache::ChangeSeq of its call (its cluster data are the session's,
  // which a session keeps for life), the window's start, how many positions it
  // walks, numFeasibleNodesToFind then, and the answer (as an update's, with
  // the call's plugins). A pod of that template whose window starts there and
  // walks past no node changed since takes it without a call.
  struct Ahead {
    std::string key;
    uint64_t seq = 0;
    size_t first = 0;
    size_t scanned = 0;
    size_t to_find = 0;
    pb::EvaluateResponse answer;
  };
  std::deque<Ahead> ahead;
  // Pods of each template that called (a few templates at most).
  absl::flat_hash_map<std::string, int> seen;
};

// What the shim remembers of a cycle in which no node fit: each node's
// Filter verdict by its position in the cache's candidate order, as of a
// Cache::ChangeSeq, for the pod whose cycle it was (its nomination then
// counted on no node for it, and counts on its node for any other pod).
// The next pod of the same template (a retry included) asks again only for
// the nodes that changed since, and fails as a whole cycle would, with the
// same message, plugins and nodes for PostFilter; when one of them fits,
// the whole cycle runs.
struct RejectedNodes {
  uint64_t seq = 0;
  std::string cluster;    // model::SessionCluster's encoding
  std::string nominated;  // the pod's nominated node then
  std::vector<CandidateVerdicts::Kind> kinds;
  std::vector<int32_t> kind_at;  // position -> index into kinds
};

// The sessions by pod family (FamilyKey), the most recent few, and the
// rejections by TemplateKey. Thread-safe: an entry is taken out while its
// cycle runs.
class Batches {
 public:
  explicit Batches(size_t capacity = 16);
  uint64_t NewId();
  std::optional<BatchSession> Take(const std::string& key);
  void Put(const std::string& key, BatchSession s);
  std::optional<RejectedNodes> TakeRejected(const std::string& key);
  void PutRejected(const std::string& key, RejectedNodes r);

 private:
  const size_t capacity_;
  mutable absl::Mutex mu_;
  std::mt19937_64 ids_ ABSL_GUARDED_BY(mu_);
  std::list<std::pair<std::string, BatchSession>> lru_ ABSL_GUARDED_BY(mu_);
  std::list<std::pair<std::string, RejectedNodes>> rejected_
      ABSL_GUARDED_BY(mu_);
};

// A pod family's key: TemplateKey without the pod's label values. With no
// query and no existing pod's term in the plan, label values reach the
// plugins only through the label counts of the nodes, so a session follows
// pods of one family, sending again the nodes whose counts differ.
std::string FamilyKey(const ProfileInfo& profile, const pb::Pod& pod);
// The key a cycle's session is kept under: FamilyKey, or the TemplateKey
// when the plan asks for counts of the cluster's pods (which existing terms
// match, and what a query counts, may read the pod's label values).
std::string SessionFamily(const ProfileInfo& profile, const CyclePlan& plan);

// Whether this pod's cycle may be batched: the scorer's profile batches,
// the pod's scoring does not need every feasible node, no nomination, and
// no explanation of every node is asked for. A session re-sends the nodes
// that changed and, for the plan's queries and existing terms, every node
// sharing a changed node's domain (Cache::DomainPeers).

bool Batchable(const CycleInput& in, const CyclePlan& plan);

// The batched cycle: nullopt when it cannot run (no session for the
// family, other changes, the scorer lacks the session, an error, or no
// node fits: then the whole cycle runs, and says why). It walks the window
// as EvaluateBatches does, from w.first until w.to_find nodes fit, taking
// the verdicts it knows and asking the replica for the others, in rounds;
// the last round also asks for the windows of the pods CycleInput::upcoming
// marks. A pod of the template whose window is one of those, and walks past
// no node changed since that call, takes its answer without a call (the
// same template over the same raw scores: what a call would answer).
std::optional<CycleResult> RunBatched(const CycleInput& in, const Window& w,
                                      const CyclePlan& plan,
                                      const std::string& key, uint64_t seq,
                                      scorer_client::Scorer& scorer);

// Whether a cycle of this pod in which no node fits may be remembered and
// run again from the memo: batching is on, no explanation of every node is
// asked for, and the pod has no volumes (what the volume plugins read of
// the storage objects is not among the changes the memo follows).
bool RemembersRejections(const CycleInput& in, const CyclePlan& plan);

// The failing cycle over the template's RejectedNodes, into `ev` (as
// EvaluateBatches fills it over every node from w.first): true when every
// node is still rejected. False, `ev` untouched, when a whole cycle is due
// (no memo, other changes, more than half the nodes changed, a changed
// node fits, an error). `seq` is Cache::ChangeSeq before the cycle.
bool RunRejected(const CycleInput& in, const Window& w, const CyclePlan& plan,
                 uint64_t seq, scorer_client::Scorer& scorer,
                 CandidateVerdicts& ev);

// After a whole cycle (with ev.keep_kinds) in which Filter rejected every
// node: remembers each node's verdict for the template.
void RememberRejected(const CycleInput& in, const CyclePlan& plan, uint64_t seq,
                      const CandidateVerdicts& ev);

// After a whole cycle that kept a session (plan.keep_session): remembers
// its slots (the feasible nodes in order) and every candidate's verdict.
void RememberSession(const CycleInput& in, const CyclePlan& plan,
                     const std::string& key, uint64_t seq,
                     const CandidateVerdicts& ev);

}  // namespace kscore::scheduler

#endif  // KSCORE_SHIM_SCHEDULER_BATCHING_H_
