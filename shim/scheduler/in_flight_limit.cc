#include "shim/scheduler/in_flight_limit.h"

#include <atomic>
#include <memory>
#include <utility>

namespace kscore::scheduler {

bool InFlightLimit::Run(Task task, bool ahead) {
  {
    absl::MutexLock lock(&mu_);
    if (in_flight_ >= max_in_flight_) {
      if (queued_ahead_.size() + queued_.size() >= max_queued_) return false;
      (ahead ? queued_ahead_ : queued_).push_back(std::move(task));
      return true;
    }
    ++in_flight_;
  }
  Start(std::move(task));
  return true;
}

// A task that calls `done` before returning hands its slot on in this
// loop, not by recursion, so that a run of tasks that end at once (a
// request no longer wanted) keeps the stack flat.
void InFlightLimit::Start(Task task) {
  while (task) {
    // 0: running; 1: done before returning; 2: returned first.
    auto state = std::make_shared<std::atomic<int>>(0);
    task([this, state] {
      int running = 0;
      if (state->compare_exchange_strong(running, 1)) return;
      if (Task next = TakeNext()) Start(std::move(next));
    });
    int running = 0;
    if (state->compare_exchange_strong(running, 2)) return;
    task = TakeNext();
  }
}

InFlightLimit::Task InFlightLimit::TakeNext() {
  absl::MutexLock lock(&mu_);
  std::deque<Task>& from = queued_ahead_.empty() ? queued_ : queued_ahead_;
  if (from.empty()) {
    --in_flight_;  // WaitIdle may go on now
    return nullptr;
  }
  Task next = std::move(from.front());
  from.pop_front();
  return next;  // takes over the finished task's slot
}

size_t InFlightLimit::DropQueued() {
  absl::MutexLock lock(&mu_);
  const size_t n = queued_ahead_.size() + queued_.size();
  queued_ahead_.clear();
  queued_.clear();
  return n;
}

void InFlightLimit::WaitIdle() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](int* in_flight) { return *in_flight == 0; }, &in_flight_));
}

}  // namespace kscore::scheduler
