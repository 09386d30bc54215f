#ifndef KSCORE_SHIM_SCHEDULER_SCHEDULER_H_
#define KSCORE_SHIM_SCHEDULER_SCHEDULER_H_

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "shim/cache/cache.h"
#include "shim/queue/scheduling_queue.h"
#include "shim/scheduler/batching.h"
#include "shim/scheduler/cycle.h"
#include "shim/scheduler/explain.h"
#include "shim/scheduler/feedback.h"
#include "shim/scheduler/metrics.h"
#include "shim/scheduler/preemption_executor.h"
#include "shim/scheduler/profiles.h"
#include "shim/scheduler/volume_binder.h"
#include "shim/scheduler/writer.h"
#include "shim/scorer_client/scorer.h"

namespace kscore::scheduler {

// The scheduling loop: pop a pod, ask the scorer, pick the node, assume it
// in the cache and bind asynchronously. It holds no placement rule.
class Scheduler {
 public:
  struct Options {
    int batch_size = 500;  // nodes per scorer call
    int schedule_workers = 1;
    // Bindings in the Kubernetes protobuf encoding (else JSON).
    bool protobuf = false;
    // A Preempt request stops adding nodes past this many victim pods
    // (--preemption-max-victim-pods).
    int preemption_max_victim_pods = 20000;
    // The last decisions kept for `kubectl kscore explain`, one per pod
    // (--explain-decisions; 0: none), each with this many best nodes'
    // per-plugin breakdown.
    int explain_decisions = 1000;
    int explain_top = 5;
    // kube-scheduler-simulator's result annotations on each scheduled pod
    // (--record-scores): the scorer then explains every feasible node.
    bool record_scores = false;
  };

  Scheduler(Options options, Profiles* profiles, cache::Cache* cache,
            queue::SchedulingQueue* queue, scorer_client::Scorer* scorer,
            Writer* writer, Feedback* feedback, Metrics* metrics);
  ~Scheduler();

  // Starts the workers; Stop() waits for them and for the bindings sent.
  void Start();
  void Stop();

  // One cycle for one pod (exposed for tests): RunCycle, then assume and
  // bind, or requeue with the failure. `rng` breaks ties between nodes.
  void ScheduleOne(queue::SchedulingQueue::QueuedPod qp, std::mt19937_64& rng);
  void ScheduleOne(queue::SchedulingQueue::QueuedPod qp);

  // The last decisions (kubectl kscore explain).
  const DecisionLog& decisions() const { return decisions_; }
  // A dry cycle for `pod` against the current snapshot (kubectl kscore
  // what-if): where it would go and why. Nothing is assumed, bound, queued
  // or written, and no decision is logged. InvalidArgument for a pod of a
  // profile this scheduler does not serve; the scorer's refusal otherwise.
  absl::StatusOr<std::shared_ptr<const Explanation>> WhatIf(
      const objects::PodInfo& pod);

  // Sends again the bindings that got no answer from the API server (all of
  // them when `all`, e.g. when it answers again; else those whose retry is
  // due, every kBindRetry). Call periodically.
  void RetryBindings(bool all);
  static constexpr absl::Duration kBindRetry = absl::Seconds(1);

 private:
  // Why a cycle or a binding failed, for the queue: no node fits, an
  // error, or a scorer that did not answer (the pod goes back to active as
  // soon as it answers again).
  enum class Cause { kError, kUnschedulable, kScorerUnreachable };
  // Requeues the pod with its FailedScheduling event and condition, and
  // sets its nomination (upstream's handleSchedulingFailure): in the cache
  // before the pod is back in the queue, so no later cycle misses it, and
  // in its status with the condition.
  void Fail(queue::SchedulingQueue::QueuedPod qp, const std::string& message,
            Cause cause, absl::Time start, const char* result,
            Nominating nominating = Nominating::kClear,
            const std::string& nominated_node = "");
  struct PendingBind {
    queue::SchedulingQueue::QueuedPod qp;
    std::string node;
    absl::Time start;  // of the scheduling attempt
    // Of the binding, for the Bind extension point's duration: monotonic.
    std::chrono::steady_clock::time_point bind_start;
    // With record_scores: what to write on the pod once bound.
    std::shared_ptr<const Explanation> record;
    // An earlier attempt got no answer: it may have been made.
    bool unanswered = false;
  };
  // Sends the binding through the writer's bindings lane.
  void Bind(queue::SchedulingQueue::QueuedPod qp, std::string node,
            absl::Time start,
            std::shared_ptr<const Explanation> record = nullptr);
  void Send(std::shared_ptr<PendingBind> b);
  // VolumeBinding's Reserve of the cycle's decisions: false (the pod
  // failed and is requeued) when a volume can no longer be promised.
  bool ReserveVolumes(queue::SchedulingQueue::QueuedPod& qp,
                      const CycleResult& r, absl::Time start,
                      std::optional<cache::Volumes::Reservation>* reserved);
  // PreBind (the reserved volumes written and bound), then Bind; on
  // failure the pod is forgotten and requeued with upstream's message.
  void PreBindThenBind(queue::SchedulingQueue::QueuedPod qp, std::string node,
                       absl::Time start,
                       std::shared_ptr<const Explanation> record,
                       cache::Volumes::Reservation reserved,
                       absl::Duration timeout);
  // Logs a cycle's explanation (trimmed when it holds every node); returns
  // it whole for record_scores.
  std::shared_ptr<const Explanation> Record(
      std::shared_ptr<Explanation> e,
      const queue::SchedulingQueue::QueuedPod& qp);
  // The breakdown each cycle asks the scorer for (CycleInput::explain_top).
  int32_t ExplainTop() const;
  // Which of the next pods in activeQ look like `pod`'s template (the same
  // namespace, scheduler, priority and labels): CycleInput::upcoming.
  std::vector<bool> Upcoming(const objects::PodInfo& pod) const;
  // A cycle of `pod` under `profile` as the options configure it, from the
  // round-robin position, with that breakdown.
  CycleInput CycleFor(const objects::PodInfo& pod, const ProfileInfo& profile,
                      std::mt19937_64& rng, int32_t explain_top,
                      bool explain_rejections);
  // The binding's outcome (on the client's I/O thread), then the next one.
  void Bound(const std::shared_ptr<PendingBind>& b,
             const absl::StatusOr<kube::Response>& r);

  Options options_;
  Profiles* profiles_;
  cache::Cache* cache_;
  queue::SchedulingQueue* queue_;
  scorer_client::Scorer* scorer_;
  Writer* writer_;
  Feedback* feedback_;
  Metrics* metrics_;
  // PreBind of the pods with claims to bind; stopped first.
  VolumeBinder volume_binder_;
  PreemptionExecutor preemption_;
  // Plans by pod template, shared by the workers.
  PlanCache plans_;
  Batches batches_;  // the scheduling loop's, not WhatIf's
  DecisionLog decisions_;
  std::atomic<size_t> next_start_{0};
  std::atomic<bool> stop_{false};
  std::vector<std::thread> workers_;
  // Bindings that got no answer, assumed still, with when to send again.
  absl::Mutex unanswered_mu_;
  std::vector<std::pair<absl::Time, std::shared_ptr<PendingBind>>> unanswered_
      ABSL_GUARDED_BY(unanswered_mu_);
};

}  // namespace kscore::scheduler

#endif  // KSCORE_SHIM_SCHEDULER_SCHEDULER_H_
