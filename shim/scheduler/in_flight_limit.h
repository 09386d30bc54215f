#ifndef KSCORE_SHIM_SCHEDULER_IN_FLIGHT_LIMIT_H_
#define KSCORE_SHIM_SCHEDULER_IN_FLIGHT_LIMIT_H_

#include <cstddef>
#include <deque>
#include <functional>
#include <limits>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace kscore::scheduler {

// Runs asynchronous tasks (API requests sent with Client::DoAsync) at most
// `max_in_flight` at a time; the others wait in order of submission, those
// run `ahead` before the rest, and each finished task's slot goes to the
// next one.
class InFlightLimit {
 public:
  // A task starts its work and calls `done` exactly once when it is over
  // (from any thread, possibly before returning).
  using Task = std::function<void(std::function<void()> done)>;

  explicit InFlightLimit(int max_in_flight,
                         size_t max_queued = std::numeric_limits<size_t>::max())
      : max_in_flight_(max_in_flight < 1 ? 1 : max_in_flight),
        max_queued_(max_queued) {}

  // Starts `task` now, or queues it (`ahead`: behind the tasks queued ahead
  // only); false (and the task dropped) when max_queued tasks already wait.
  bool Run(Task task, bool ahead = false);
  // Drops the tasks still waiting; returns how many.
  size_t DropQueued();
  // Until no task is in flight (and so none waits).
  void WaitIdle();

 private:
  void Start(Task task);
  // The next waiting task, which takes over a finished one's slot; or
  // null, the slot given back.
  Task TakeNext();

  const int max_in_flight_;
  const size_t max_queued_;
  absl::Mutex mu_;
  int in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  std::deque<Task> queued_ahead_ ABSL_GUARDED_BY(mu_);
  std::deque<Task> queued_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kscore::scheduler

#endif  // KSCORE_SHIM_SCHEDULER_IN_FLIGHT_LIMIT_H_
