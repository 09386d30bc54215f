#ifndef KSCORE_SHIM_SCHEDULER_HINTS_H_
#define KSCORE_SHIM_SCHEDULER_HINTS_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "shim/queue/scheduling_queue.h"
#include "shim/scheduler/profiles.h"
#include "shim/scorer_client/scorer.h"

namespace kscore::scheduler {

// Asks the scorer's QueueingHint about the pods a cluster event may move
// (the queue's HintJobs): one call per event and profile, one query per pod
// template and rejecting plugins, on its own thread so that the informers
// never wait for the scorer; then hands the answers to the queue. A failed
// call, or a profile the scorer cannot serve now, moves every pod asked
// about, as kube-scheduler treats a hint's error as Queue. Thread-safe.
class HintAsker {
 public:
  HintAsker(Profiles* profiles, scorer_client::Scorer* scorer,
            queue::SchedulingQueue* queue)
      : profiles_(profiles), scorer_(scorer), queue_(queue) {}
  ~HintAsker() { Stop(); }

  void Start();
  // Drops the jobs not answered yet (called at shutdown: the queue goes
  // with the process).
  void Stop();
  // From the queue (Options::ask_hints), on any thread.
  void Ask(queue::SchedulingQueue::HintJob job);
  // One job, on the caller's thread.
  void Answer(const queue::SchedulingQueue::HintJob& job);

 private:
  Profiles* profiles_;
  scorer_client::Scorer* scorer_;
  queue::SchedulingQueue* queue_;
  absl::Mutex mu_;
  std::deque<queue::SchedulingQueue::HintJob> jobs_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread worker_;
};

}  // namespace kscore::scheduler

#endif  // KSCORE_SHIM_SCHEDULER_HINTS_H_
