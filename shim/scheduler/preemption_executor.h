#ifndef KSCORE_SHIM_SCHEDULER_PREEMPTION_EXECUTOR_H_
#define KSCORE_SHIM_SCHEDULER_PREEMPTION_EXECUTOR_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "shim/cache/cache.h"
#include "shim/scheduler/cycle.h"
#include "shim/scheduler/feedback.h"
#include "shim/scheduler/writer.h"

namespace kscore::scheduler {

// Carries out a preemption PostFilter decided, as upstream's Executor does
// (prepareCandidateAsync, PreemptPod), off the scheduling thread: every
// call goes through the Writer and is chained on the API client's I/O
// thread. Failures are logged; the preemptor stays queued either way.
class PreemptionExecutor {
 public:
  // `ours` tells the schedulerNames whose pods this shim schedules;
  // `activate` sends a pending pod (by key) to be tried now.
  PreemptionExecutor(Writer* writer, Feedback* feedback, cache::Cache* cache,
                     std::function<bool(const std::string&)> ours,
                     std::function<void(const std::string&)> activate)
      : writer_(writer),
        feedback_(feedback),
        cache_(cache),
        ours_(std::move(ours)),
        activate_(std::move(activate)) {}

  // For `preemptor`, nominated to p.node:
  // - our pods of lower priority nominated to that node lose their
  //   nomination (in the cache and in their status): they may no longer
  //   fit there, and look elsewhere (other schedulers' pods are theirs);
  // - each victim not already being deleted gets the DisruptionTarget
  //   condition (status patch), is deleted (with its uid as precondition,
  //   so a pod re-created under the name is spared) and gets a Preempted
  //   event. A victim already gone (404) is skipped; a failed patch leaves
  //   the victim alone, as upstream.
  // As upstream, every victim but the last goes at once, and the last once
  // their calls are answered (none if one failed), so that its deletion
  // event, which the preemptor waits for, comes after the others'.
  // Victims' writes use the bindings lane: they are what frees the room,
  // and that lane drops nothing.
  void Preempt(std::shared_ptr<const objects::PodInfo> preemptor,
               const Preemption& p);

  // Upstream's IsPodRunningPreemption (checked in its PreEnqueue): true
  // while the preemption the pod `key` set off is under way: a victim's
  // calls are not answered yet, or the last victim is still in the cache
  // and not being deleted. Such a pod is not tried: a try before the cache
  // sees its victims go finds no room, and is not eligible to preempt while
  // they terminate. The last victim's deletion event moves it back; a
  // preemption that failed partway, or whose last victim the cache saw go
  // before its calls were answered, activates it at once (upstream's
  // Activate).
  bool Preempting(const std::string& key) const;
  // Preempting(key) as a gate for the queue, which asks it of every waiting
  // preemptor at every cluster event: while a victim's calls are not
  // answered it says true without a lookup.
  std::function<bool()> Gate(const std::string& key) const;

 private:
  using PodPtr = std::shared_ptr<const objects::PodInfo>;
  struct Running {
    // Calls not answered yet: the other victims', then the last one's.
    int outstanding = 0;
    bool last_round = false;  // the last victim's calls were sent
    bool failed = false;
    Preemption::Victim last;  // deleted once the others are answered
    // True while !last_round || outstanding > 0: read by Gate without the
    // lock; false once those calls are answered or the entry goes.
    std::shared_ptr<std::atomic<bool>> calls_pending =
        std::make_shared<std::atomic<bool>>(true);
  };
  // Erases running_'s entry `it`, opening the gates that read it.
  void EraseLocked(absl::flat_hash_map<std::string, Running>::iterator it) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The same by key, if it is there.
  void EraseLocked(const std::string& key) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A victim's DisruptionTarget condition, then (Delete) its deletion.
  void Evict(const PodPtr& preemptor, const std::string& node,
             const Preemption::Victim& victim);
  void Delete(const PodPtr& preemptor, const std::string& node,
              const Preemption::Victim& victim);
  // The cache still holds r's last victim, not being deleted.
  bool LastVictimLive(const Running& r) const;
  // A victim's calls are answered (`ok`: deleted, or already gone).
  void Answered(const PodPtr& preemptor, const std::string& node, bool ok);

  Writer* writer_;
  Feedback* feedback_;
  cache::Cache* cache_;
  std::function<bool(const std::string&)> ours_;
  std::function<void(const std::string&)> activate_;
  mutable absl::Mutex mu_;
  mutable absl::flat_hash_map<std::string, Running> running_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace kscore::scheduler

#endif  // KSCORE_SHIM_SCHEDULER_PREEMPTION_EXECUTOR_H_
