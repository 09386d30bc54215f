#ifndef KSCORE_SHIM_SCHEDULER_BATCHING_H_
#define KSCORE_SHIM_SCHEDULER_BATCHING_H_

// Batching of equivalent pods: after a whole cycle of a pod that looked at
// every node, the scorer replica that normalised it keeps the raw scores (a
// session, pb::SessionUpdate), and the next pod of the same template sends
// only the nodes that changed since (Cache::ChangedSince): the replica
// re-evaluates them and normalises over every node, deciding what a whole
// cycle would. Upstream batches (OpportunisticBatch) only when the last pod
// made its node infeasible; this covers any change, packing included.

#include <cstdint>
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

// What the shim remembers of one session: which node each slot is, and how
// far the session is up to date.
struct BatchSession {
  uint64_t id = 0;
  uint32_t generation = 0;
  uint64_t seq = 0;                // Cache::ChangeSeq the slots reflect
  std::string cluster;             // the cluster data, encoded
  std::vector<std::string> slots;  // slot -> node
  absl::flat_hash_map<std::string, int32_t> slot_of;
};

// The sessions by pod template (TemplateKey), the most recent few.
// Thread-safe: a session is taken out while its cycle runs.
class Batches {
 public:
  explicit Batches(size_t capacity = 16);
  uint64_t NewId();
  std::optional<BatchSession> Take(const std::string& key);
  void Put(const std::string& key, BatchSession s);

 private:
  const size_t capacity_;
  mutable absl::Mutex mu_;
  std::mt19937_64 ids_ ABSL_GUARDED_BY(mu_);
  std::list<std::pair<std::string, BatchSession>> lru_ ABSL_GUARDED_BY(mu_);
};

// Whether this pod's cycle may be batched: the scorer's profile batches,
// the cycle looks at every node (its window is the whole cluster), the
// pod's plan asks nothing whose answers move with other nodes' pods (no
// query, no existing pod's term), no nomination, and no explanation of
// every node is asked for.
bool Batchable(const CycleInput& in, const Window& w, const CyclePlan& plan);

// The batched cycle: nullopt when it cannot run (no session for the
// template, other changes, the scorer lacks the session, an error, or no
// node fits: then the whole cycle runs, and says why).
std::optional<CycleResult> RunBatched(const CycleInput& in, const Window& w,
                                      const CyclePlan& plan,
                                      const std::string& key, uint64_t seq,
                                      scorer_client::Scorer& scorer);

// After a whole cycle that kept a session (plan.keep_session): remembers
// its slots, the feasible nodes in order.
void RememberSession(const CycleInput& in, const CyclePlan& plan,
                     const std::string& key, uint64_t seq,
                     const CandidateVerdicts& ev);

}  // namespace kscore::scheduler

#endif  // KSCORE_SHIM_SCHEDULER_BATCHING_H_
