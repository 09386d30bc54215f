#include "shim/queue/scheduling_queue.h"

namespace kscore::queue {

absl::Duration SchedulingQueue::BackoffFor(int attempts) const {
  absl::Duration d = options_.initial_backoff;
  for (int i = 1; i < attempts; ++i) {
    d *= 2;
    if (d >= options_.max_backoff) return options_.max_backoff;
  }
  return std::min(d, options_.max_backoff);
}

void SchedulingQueue::Incoming(absl::string_view queue,
                               absl::string_view event) const {
  if (options_.on_incoming) options_.on_incoming(queue, event);
}

void SchedulingQueue::ActivateLocked(Entry& e, absl::string_view event) {
  if (e.where == Where::kUnschedulable) unschedulable_.erase(e.pod.info->key);
  e.where = Where::kActive;
  e.pod.timestamp = options_.now();
  active_.insert({-e.pod.info->priority, e.pod.timestamp, e.pod.info->key});
  Incoming("active", event);
}

void SchedulingQueue::BackoffOrActivateLocked(Entry& e,
                                              absl::string_view event) {
  absl::Time until = e.pod.timestamp + BackoffFor(e.pod.attempts);
  if (e.pod.attempts > 0 && until > options_.now()) {
    if (e.where == Where::kUnschedulable) unschedulable_.erase(e.pod.info->key);
    e.where = Where::kBackoff;
    e.backoff_until = until;
    Incoming("backoff", event);
  } else {
    ActivateLocked(e, event);
  }
}

void SchedulingQueue::RemoveFromActiveLocked(const Entry& e) {
  if (e.where == Where::kActive) {
    active_.erase({-e.pod.info->priority, e.pod.timestamp, e.pod.info->key});
  }
}

void SchedulingQueue::AddOrUpdate(std::shared_ptr<const cache::PodInfo> pod) {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(pod->key);
  if (it == entries_.end()) {
    Entry& e = entries_[pod->key];
    e.pod.info = std::move(pod);
    ActivateLocked(e, kUnscheduledPodAdd);
    return;
  }
  Entry& e = it->second;
  switch (e.where) {
    case Where::kInFlight:
      // A pod created again under the same name while the old one was in
      // flight must not be lost with the old one.
      if (pod->uid != e.pod.info->uid) e.deleted_in_flight = false;
      e.pending_update = std::move(pod);
      break;
    case Where::kActive:
      RemoveFromActiveLocked(e);
      e.pod.info = std::move(pod);
      active_.insert({-e.pod.info->priority, e.pod.timestamp, e.pod.info->key});
      break;
    case Where::kBackoff:
      e.pod.info = std::move(pod);
      break;
    case Where::kUnschedulable:
      e.pod.info = std::move(pod);
      BackoffOrActivateLocked(e, kUnscheduledPodUpdate);
      break;
  }
}

void SchedulingQueue::Delete(const std::string& key) {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return;
  if (it->second.where == Where::kInFlight) {
    it->second.deleted_in_flight = true;
    return;
  }
  RemoveFromActiveLocked(it->second);
  unschedulable_.erase(key);
  entries_.erase(it);
}

std::optional<SchedulingQueue::QueuedPod> SchedulingQueue::Pop(
    absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return closed_ || !active_.empty();
  };
  mu_.AwaitWithTimeout(absl::Condition(&ready), timeout);
  if (closed_ || active_.empty()) return std::nullopt;
  ActiveKey top = *active_.begin();
  active_.erase(active_.begin());
  Entry& e = entries_.at(std::get<2>(top));
  e.where = Where::kInFlight;
  e.pod.attempts++;
  if (e.pod.initial_attempt == absl::Time())
    e.pod.initial_attempt = options_.now();
  e.pod.cycle = move_cycle_;
  return e.pod;
}

void SchedulingQueue::Done(const std::string& key, const std::string& uid) {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return;
  Entry& e = it->second;
  if (e.where == Where::kInFlight && e.pending_update != nullptr &&
      !uid.empty() && e.pending_update->uid != uid && !e.deleted_in_flight) {
    e.pod = QueuedPod{std::move(e.pending_update), 0, {}, {}, 0};
    e.pending_update = nullptr;
    ActivateLocked(e, kUnscheduledPodAdd);
    return;
  }
  entries_.erase(it);
}

void SchedulingQueue::Requeue(QueuedPod pod, bool unschedulable) {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(pod.info->key);
  if (it == entries_.end()) return;
  Entry& e = it->second;
  if (e.deleted_in_flight) {
    entries_.erase(it);
    return;
  }
  e.pod = std::move(pod);
  if (e.pending_update != nullptr) e.pod.info = std::move(e.pending_update);
  e.pending_update = nullptr;
  e.pod.timestamp = options_.now();
  // Something changed in the cluster while this pod was being scheduled:
  // retry after backoff instead of waiting for another event.
  if (unschedulable && e.pod.cycle == move_cycle_) {
    e.where = Where::kUnschedulable;
    unschedulable_.insert(e.pod.info->key);
    e.unschedulable_since = options_.now();
    Incoming("unschedulable", kScheduleAttemptFailure);
    return;
  }
  BackoffOrActivateLocked(e, kScheduleAttemptFailure);
}

void SchedulingQueue::MoveAllToActiveOrBackoff(absl::string_view event) {
  absl::MutexLock lock(&mu_);
  ++move_cycle_;
  std::vector<std::string> keys(unschedulable_.begin(), unschedulable_.end());
  for (const std::string& key : keys) {
    BackoffOrActivateLocked(entries_.at(key), event);
  }
}

void SchedulingQueue::Flush() {
  absl::MutexLock lock(&mu_);
  const absl::Time now = options_.now();
  for (auto& [key, e] : entries_) {
    if (e.where == Where::kBackoff && e.backoff_until <= now) {
      ActivateLocked(e, kBackoffComplete);
    } else if (e.where == Where::kUnschedulable &&
               now - e.unschedulable_since >= options_.max_unschedulable) {
      BackoffOrActivateLocked(e, kUnschedulableTimeout);
    }
  }
}

SchedulingQueue::Sizes SchedulingQueue::sizes() const {
  absl::MutexLock lock(&mu_);
  Sizes s;
  for (const auto& [key, e] : entries_) {
    switch (e.where) {
      case Where::kActive:
        s.active++;
        break;
      case Where::kBackoff:
        s.backoff++;
        break;
      case Where::kUnschedulable:
        s.unschedulable++;
        break;
      case Where::kInFlight:
        s.in_flight++;
        break;
    }
  }
  return s;
}

bool SchedulingQueue::Contains(const std::string& key) const {
  absl::MutexLock lock(&mu_);
  return entries_.contains(key);
}

void SchedulingQueue::Close() {
  absl::MutexLock lock(&mu_);
  closed_ = true;
}

}  // namespace kscore::queue
