#ifndef KSCORE_SHIM_SCHEDULER_PREEMPTION_EXECUTOR_H_
#define KSCORE_SHIM_SCHEDULER_PREEMPTION_EXECUTOR_H_

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
  // Victims' writes use the bindings lane: they are what frees the room,
  // and that lane drops nothing.
  void Preempt(std::shared_ptr<const objects::PodInfo> preemptor,
               const Preemption& p);

  // Upstream's IsPodRunningPreemption (checked in its PreEnqueue): true
  // while the preemption the pod `key` set off is under way: a victim's
  // calls are not answered yet, or a victim they deleted is still in the
  // cache and not being deleted. Such a pod is not tried: a try before the
  // cache sees its victims go finds no room and preempts again elsewhere.
  // A victim's deletion event moves it back; a preemption that failed
  // partway, or whose victims the cache saw go before their calls were
  // answered, activates it at once (upstream's Activate).
  bool Preempting(const std::string& key) const;

 private:
  using PodPtr = std::shared_ptr<const objects::PodInfo>;
  struct Running {
    int outstanding = 0;  // victims whose calls are not answered yet
    bool failed = false;
    std::vector<std::string> victims;  // their cache keys
  };
  void Delete(const PodPtr& preemptor, const std::string& node,
              const Preemption::Victim& victim);
  // The cache still holds one of r's victims, not being deleted.
  bool AnyVictimLive(const Running& r) const;
  // A victim's calls are answered (`ok`: deleted, or already gone).
  void Answered(const std::string& preemptor, bool ok);

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
