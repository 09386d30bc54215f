#ifndef KSCORE_SHIM_SCHEDULER_PREEMPTION_EXECUTOR_H_
#define KSCORE_SHIM_SCHEDULER_PREEMPTION_EXECUTOR_H_

#include <functional>
#include <memory>
#include <string>

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
  // `ours` tells the schedulerNames whose pods this shim schedules.
  PreemptionExecutor(Writer* writer, Feedback* feedback, cache::Cache* cache,
                     std::function<bool(const std::string&)> ours)
      : writer_(writer),
        feedback_(feedback),
        cache_(cache),
        ours_(std::move(ours)) {}

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
  void Preempt(std::shared_ptr<const cache::PodInfo> preemptor,
               const Preemption& p);

 private:
  using PodPtr = std::shared_ptr<const cache::PodInfo>;
  void Delete(const PodPtr& preemptor, const std::string& node,
              const Preemption::Victim& victim);

  Writer* writer_;
  Feedback* feedback_;
  cache::Cache* cache_;
  std::function<bool(const std::string&)> ours_;
};

}  // namespace kscore::scheduler

#endif  // KSCORE_SHIM_SCHEDULER_PREEMPTION_EXECUTOR_H_
