#include "shim/scheduler/in_flight_limit.h"

#include <utility>

namespace kscore::scheduler {

bool InFlightLimit::Run(Task task) {
  {
    absl::MutexLock lock(&mu_);
    if (in_flight_ >= max_in_flight_) {
      if (queued_.size() >= max_queued_) return false;
      queued_.push_back(std::move(task));
      return true;
    }
    ++in_flight_;
  }
  Start(std::move(task));
  return true;
}

void InFlightLimit::Start(Task task) {
  task([this] {
    Task next;
    {
      absl::MutexLock lock(&mu_);
      if (queued_.empty()) {
        --in_flight_;  // WaitIdle may go on now
        return;
      }
      next = std::move(queued_.front());
      queued_.pop_front();
    }
    Start(std::move(next));  // takes over this one's slot
  });
}

size_t InFlightLimit::DropQueued() {
  absl::MutexLock lock(&mu_);
  const size_t n = queued_.size();
  queued_.clear();
  return n;
}

void InFlightLimit::WaitIdle() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](int* in_flight) { return *in_flight == 0; }, &in_flight_));
}

}  // namespace kscore::scheduler
