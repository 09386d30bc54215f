#include "shim/queue/scheduling_queue.h"

#include "model/cluster_event.h"
#include "shim/queue/pod_events.h"

namespace kscore::queue {

namespace pb = ::kscore::scorer::v1;

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

SchedulingQueue::Strategy SchedulingQueue::Classify(
    const QueuedPod& pod, const pb::ClusterEvent& event,
    std::vector<std::string>* ask) {
  if (model::IsWildCard(event)) return Strategy::kMove;
  if (pod.unschedulable_plugins.empty() || pod.plugin_events == nullptr) {
    return Strategy::kMove;
  }
  bool hinted = false;
  for (const std::string& plugin : pod.unschedulable_plugins) {
    auto it = pod.plugin_events->find(plugin);
    if (it == pod.plugin_events->end()) return Strategy::kMove;
    bool asked = false;
    for (const pb::ClusterEvent& registered : it->second) {
      if (!model::MatchClusterEvents(registered, event)) continue;
      if (!registered.hinted()) return Strategy::kMove;
      hinted = true;
      if (ask != nullptr && !asked) ask->push_back(plugin);
      asked = true;
    }
  }
  return hinted ? Strategy::kAsk : Strategy::kSkip;
}

SchedulingQueue::BackoffKey SchedulingQueue::BackoffKeyOf(const Entry& e) {
  return {e.backoff_until, -e.pod.info->priority, e.pod.timestamp,
          e.pod.info->key};
}

void SchedulingQueue::LeaveBackoffLocked(const Entry& e) {
  if (e.where == Where::kBackoff) backoff_.erase(BackoffKeyOf(e));
}

void SchedulingQueue::ActivateLocked(Entry& e, absl::string_view event) {
  if (e.where == Where::kUnschedulable) unschedulable_.erase(&e);
  e.gate = nullptr;
  LeaveBackoffLocked(e);
  e.parked = false;
  e.where = Where::kActive;
  e.pod.timestamp = options_.now();
  active_.insert({-e.pod.info->priority, e.pod.timestamp, e.pod.info->key});
  Incoming("active", event);
}

void SchedulingQueue::BackoffOrActivateLocked(Entry& e,
                                              absl::string_view event) {
  if (e.gate != nullptr) {
    if (!closed_ && e.where == Where::kUnschedulable && e.gate()) return;
    e.gate = nullptr;
  }
  absl::Time until = e.pod.timestamp + BackoffFor(e.pod.attempts);
  e.parked = false;
  if (e.pod.attempts > 0 && until > options_.now()) {
    if (e.where == Where::kUnschedulable) unschedulable_.erase(&e);
    LeaveBackoffLocked(e);
    e.where = Where::kBackoff;
    e.backoff_until = until;
    if (!e.pod.unschedulable_plugins.empty()) backoff_.insert(BackoffKeyOf(e));
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

void SchedulingQueue::AddOrUpdate(std::shared_ptr<const objects::PodInfo> pod) {
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
    case Where::kBackoff: {
      const bool listed = backoff_.erase(BackoffKeyOf(e)) > 0;
      e.pod.info = std::move(pod);
      if (listed) backoff_.insert(BackoffKeyOf(e));
      break;
    }
    case Where::kUnschedulable: {
      std::vector<pb::ClusterEvent> events =
          PodUpdateEvents(*e.pod.info, *pod, pb::EVENT_RESOURCE_TARGET_POD);
      e.pod.info = std::move(pod);
      for (const pb::ClusterEvent& ev : events) {
        if (WorthRequeuing(e.pod, ev)) {
          BackoffOrActivateLocked(e, model::EventLabel(ev));
          break;
        }
      }
      break;
    }
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
  LeaveBackoffLocked(it->second);
  unschedulable_.erase(&it->second);
  entries_.erase(it);
}

SchedulingQueue::QueuedPod SchedulingQueue::PopLocked(Entry& e) {
  e.where = Where::kInFlight;
  e.pod.attempts++;
  if (e.pod.initial_attempt == absl::Time())
    e.pod.initial_attempt = options_.now();
  e.pod.cycle = events_seen_;
  e.pod.scorer_answers = scorer_answers_;
  in_flight_cycles_.insert(e.pod.cycle);
  return e.pod;
}

std::optional<SchedulingQueue::QueuedPod> SchedulingQueue::Pop(
    absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return closed_ || !active_.empty() || !backoff_.empty();
  };
  mu_.AwaitWithTimeout(absl::Condition(&ready), timeout);
  if (closed_) return std::nullopt;
  if (!active_.empty()) {
    ActiveKey top = *active_.begin();
    active_.erase(active_.begin());
    return PopLocked(entries_.at(std::get<2>(top)));
  }
  if (backoff_.empty()) return std::nullopt;
  // Nothing is active: rather than idle, try the pod whose backoff ends
  // first (kube-scheduler's SchedulerPopFromBackoffQ).
  BackoffKey first = *backoff_.begin();
  backoff_.erase(backoff_.begin());
  Incoming("active", kPopFromBackoffQ);
  return PopLocked(entries_.at(std::get<3>(first)));
}

std::vector<std::shared_ptr<const objects::PodInfo>>
SchedulingQueue::PeekActive(size_t k) const {
  std::vector<std::shared_ptr<const objects::PodInfo>> out;
  absl::MutexLock lock(&mu_);
  out.reserve(std::min(k, active_.size()));
  for (auto it = active_.begin(); it != active_.end() && out.size() < k; ++it)
    out.push_back(entries_.at(std::get<2>(*it)).pod.info);
  return out;
}

void SchedulingQueue::LeaveFlightLocked(uint64_t cycle) {
  if (auto it = in_flight_cycles_.find(cycle); it != in_flight_cycles_.end()) {
    in_flight_cycles_.erase(it);
  }
  if (in_flight_cycles_.empty()) {
    recent_events_.clear();
    return;
  }
  const uint64_t oldest = *in_flight_cycles_.begin();
  while (!recent_events_.empty() && recent_events_.front().first <= oldest) {
    recent_events_.pop_front();
  }
}

void SchedulingQueue::Done(const std::string& key, const std::string& uid) {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return;
  Entry& e = it->second;
  if (e.where == Where::kInFlight) LeaveFlightLocked(e.pod.cycle);
  if (e.where == Where::kInFlight && e.pending_update != nullptr &&
      !uid.empty() && e.pending_update->uid != uid && !e.deleted_in_flight) {
    e.pod =
        QueuedPod{std::move(e.pending_update), 0, {}, {}, 0, {}, nullptr, 0};
    e.pending_update = nullptr;
    ActivateLocked(e, kUnscheduledPodAdd);
    return;
  }
  entries_.erase(it);
}

bool SchedulingQueue::MovedInFlightLocked(
    const QueuedPod& pod, const objects::PodInfo* update) const {
  if (pod.cycle < events_lost_upto_) return true;  // cannot tell: retry
  for (const auto& [seq, event] : recent_events_) {
    if (seq > pod.cycle && WorthRequeuing(pod, event)) return true;
  }
  if (update != nullptr) {
    for (const pb::ClusterEvent& ev :
         PodUpdateEvents(*pod.info, *update, pb::EVENT_RESOURCE_TARGET_POD)) {
      if (WorthRequeuing(pod, ev)) return true;
    }
  }
  return false;
}

SchedulingQueue::Entry* SchedulingQueue::ReturnLocked(QueuedPod pod,
                                                      bool unschedulable,
                                                      bool* moved) {
  auto it = entries_.find(pod.info->key);
  if (it == entries_.end()) return nullptr;
  Entry& e = it->second;
  // Something that may make it fit happened while this pod was being
  // scheduled: retry after backoff instead of waiting for another event.
  *moved = unschedulable && MovedInFlightLocked(pod, e.pending_update.get());
  if (e.where == Where::kInFlight) LeaveFlightLocked(pod.cycle);
  if (e.deleted_in_flight) {
    entries_.erase(it);
    return nullptr;
  }
  e.pod = std::move(pod);
  if (e.pending_update != nullptr) e.pod.info = std::move(e.pending_update);
  e.pending_update = nullptr;
  e.pod.timestamp = options_.now();
  if (!unschedulable) e.pod.unschedulable_plugins.clear();
  return &e;
}

void SchedulingQueue::Requeue(QueuedPod pod, bool unschedulable) {
  absl::MutexLock lock(&mu_);
  bool moved = false;
  Entry* e = ReturnLocked(std::move(pod), unschedulable, &moved);
  if (e == nullptr) return;
  if (unschedulable && !moved) {
    WaitLocked(*e);
    return;
  }
  BackoffOrActivateLocked(*e, kScheduleAttemptFailure);
}

void SchedulingQueue::WaitLocked(Entry& e) {
  e.where = Where::kUnschedulable;
  unschedulable_.insert(&e);
  e.unschedulable_since = options_.now();
  Incoming("unschedulable", kScheduleAttemptFailure);
}

void SchedulingQueue::RequeueGated(QueuedPod pod, std::function<bool()> gate) {
  absl::MutexLock lock(&mu_);
  bool moved = false;
  Entry* e = ReturnLocked(std::move(pod), true, &moved);
  if (e == nullptr) return;
  e->gate = std::move(gate);
  WaitLocked(*e);
}

void SchedulingQueue::RequeueUnreachable(QueuedPod pod) {
  absl::MutexLock lock(&mu_);
  const bool answered = pod.scorer_answers != scorer_answers_;
  bool moved = false;
  Entry* e = ReturnLocked(std::move(pod), false, &moved);
  if (e == nullptr) return;
  if (answered) {
    ActivateLocked(*e, kScorerAvailable);
    return;
  }
  BackoffOrActivateLocked(*e, kScheduleAttemptFailure);
  e->parked = e->where == Where::kBackoff;
}

void SchedulingQueue::ScorerAnswered() {
  absl::MutexLock lock(&mu_);
  ++scorer_answers_;
  for (auto& [key, e] : entries_) {
    if (e.where == Where::kBackoff && e.parked) {
      ActivateLocked(e, kScorerAvailable);
    }
  }
}

void SchedulingQueue::MoveAllToActiveOrBackoff(
    const pb::ClusterEvent& event, const EventObjects& objects,
    std::optional<int32_t> max_priority) {
  HintJob job;
  {
    absl::MutexLock lock(&mu_);
    ++events_seen_;
    if (!in_flight_cycles_.empty()) {
      recent_events_.emplace_back(events_seen_, event);
      if (recent_events_.size() > kMaxRecentEvents) {
        events_lost_upto_ = recent_events_.front().first;
        recent_events_.pop_front();
      }
    }
    if (unschedulable_.empty()) return;
    const bool can_ask = options_.ask_hints && !objects.empty();
    const std::string label = model::EventLabel(event);
    std::vector<Entry*> moving;
    for (Entry* entry : unschedulable_) {
      Entry& e = *entry;
      const QueuedPod& pod = e.pod;
      if (max_priority.has_value() && pod.info->priority > *max_priority) {
        continue;
      }
      // A pod whose gate says true stays whatever the event: its hints
      // are not asked for. The gate opens only with a later event or an
      // Activate, so the pod misses none that could move it; once open,
      // it is done with.
      if (e.gate != nullptr) {
        if (!closed_ && e.gate()) continue;
        e.gate = nullptr;
      }
      std::vector<std::string> ask;
      switch (Classify(pod, event, &ask)) {
        case Strategy::kSkip:
          break;
        case Strategy::kMove:
          moving.push_back(&e);
          break;
        case Strategy::kAsk:
          if (!can_ask) {
            moving.push_back(&e);
            break;
          }
          job.pods.push_back(pod);
          job.pods.back().unschedulable_plugins = std::move(ask);
          break;
      }
    }
    for (Entry* e : moving) BackoffOrActivateLocked(*e, label);
  }
  if (job.pods.empty()) return;
  job.event = event;
  job.objects = objects;
  options_.ask_hints(std::move(job));
}

void SchedulingQueue::Activate(const std::string& key) {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return;
  if (it->second.where == Where::kBackoff ||
      it->second.where == Where::kUnschedulable) {
    ActivateLocked(it->second, kForceActivate);
  }
}

void SchedulingQueue::ApplyHints(const HintJob& job,
                                 const std::vector<bool>& queue) {
  absl::MutexLock lock(&mu_);
  const std::string label = model::EventLabel(job.event);
  for (size_t i = 0; i < job.pods.size() && i < queue.size(); ++i) {
    if (!queue[i]) continue;
    const QueuedPod& asked = job.pods[i];
    auto it = entries_.find(asked.info->key);
    // Still the same pod, still waiting since the event: another attempt
    // already saw the cluster after it.
    if (it == entries_.end() || it->second.where != Where::kUnschedulable ||
        it->second.pod.attempts != asked.attempts ||
        it->second.pod.info->uid != asked.info->uid) {
      continue;
    }
    BackoffOrActivateLocked(it->second, label);
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

std::map<std::pair<std::string, std::string>, int>
SchedulingQueue::UnschedulableByPlugin() const {
  absl::MutexLock lock(&mu_);
  std::map<std::pair<std::string, std::string>, int> out;
  for (const Entry* e : unschedulable_) {
    const QueuedPod& pod = e->pod;
    for (const std::string& plugin : pod.unschedulable_plugins) {
      ++out[{pod.info->scheduler_name, plugin}];
    }
  }
  return out;
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
