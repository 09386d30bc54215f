#ifndef KSCORE_SHIM_QUEUE_SCHEDULING_QUEUE_H_
#define KSCORE_SHIM_QUEUE_SCHEDULING_QUEUE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "shim/cache/objects.h"

namespace kscore::queue {

// kube-scheduler's scheduling queue: activeQ (priority, then age), backoffQ
// (exponential per-pod backoff) and the unschedulable pods, moved back on
// cluster events or after a ceiling. Every pending pod is in exactly one
// place (a queue, or in flight in a cycle), so none is lost or scheduled
// twice. Thread-safe.
class SchedulingQueue {
 public:
  struct Options {
    absl::Duration initial_backoff = absl::Seconds(1);
    absl::Duration max_backoff = absl::Seconds(10);
    // kube-scheduler's podMaxInUnschedulablePodsDuration.
    absl::Duration max_unschedulable = absl::Minutes(5);
    std::function<absl::Time()> now = [] { return absl::Now(); };
    // Told each time a pod enters a queue ("active", "backoff",
    // "unschedulable") and the event that sent it there, with
    // kube-scheduler's labels (scheduler_queue_incoming_pods_total).
    std::function<void(absl::string_view queue, absl::string_view event)>
        on_incoming;
  };

  // kube-scheduler's event labels for the queue's own moves.
  static constexpr absl::string_view kUnscheduledPodAdd = "UnscheduledPodAdd";
  static constexpr absl::string_view kUnscheduledPodUpdate =
      "UnscheduledPodUpdate";
  static constexpr absl::string_view kScheduleAttemptFailure =
      "ScheduleAttemptFailure";
  static constexpr absl::string_view kBackoffComplete = "BackoffComplete";
  static constexpr absl::string_view kUnschedulableTimeout =
      "UnschedulableTimeout";

  struct QueuedPod {
    std::shared_ptr<const cache::PodInfo> info;
    int attempts = 0;            // scheduling attempts so far
    absl::Time timestamp;        // when it last entered activeQ (ordering)
    absl::Time initial_attempt;  // first Pop, for latency metrics
    uint64_t cycle = 0;          // move-request cycle seen at Pop
  };

  struct Sizes {
    size_t active = 0, backoff = 0, unschedulable = 0, in_flight = 0;
  };

  explicit SchedulingQueue(Options options) : options_(std::move(options)) {}

  // A pending pod was added or changed. A queued pod keeps its place
  // (unschedulable ones move back since the change may make them fit); a pod
  // in flight gets the new object when it comes back.
  void AddOrUpdate(std::shared_ptr<const cache::PodInfo> pod);
  // The pod is gone or no longer ours to schedule (deleted, bound).
  void Delete(const std::string& key);

  // Blocks until a pod is active or timeout passes (nullopt) or Close().
  std::optional<QueuedPod> Pop(absl::Duration timeout);
  // The cycle for this pod ended with the pod bound. If the pod was replaced
  // meanwhile (deleted and created again under the same name, another uid),
  // the new one is queued instead of forgotten.
  void Done(const std::string& key, const std::string& uid = "");
  // The cycle failed. Unschedulable pods wait for a cluster event (or the
  // ceiling); other failures (scorer down, bind error) back off. A cluster
  // event that came while the pod was in flight sends it to backoff.
  void Requeue(QueuedPod pod, bool unschedulable);

  // A cluster event (node added/updated, pod deleted...) that may make
  // unschedulable pods fit: they go to backoff or active. `event` is its
  // kube-scheduler label ("NodeAdd", "AssignedPodDelete", ...).
  void MoveAllToActiveOrBackoff(absl::string_view event);
  // Moves expired backoff pods to active and long-waiting unschedulable pods
  // back; call periodically (every second, as kube-scheduler).
  void Flush();

  absl::Duration BackoffFor(int attempts) const;
  Sizes sizes() const;
  bool Contains(const std::string& key) const;
  void Close();

 private:
  using ActiveKey = std::tuple<int32_t /*-priority*/, absl::Time, std::string>;
  enum class Where { kActive, kBackoff, kUnschedulable, kInFlight };
  struct Entry {
    QueuedPod pod;
    Where where = Where::kActive;
    absl::Time backoff_until;
    absl::Time unschedulable_since;
    std::shared_ptr<const cache::PodInfo> pending_update;  // while in flight
    bool deleted_in_flight = false;
  };

  void ActivateLocked(Entry& e, absl::string_view event)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void BackoffOrActivateLocked(Entry& e, absl::string_view event)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Incoming(absl::string_view queue, absl::string_view event) const;
  void RemoveFromActiveLocked(const Entry& e)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Options options_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);
  std::set<ActiveKey> active_ ABSL_GUARDED_BY(mu_);
  // Keys of the unschedulable pods, so a cluster event touches only them.
  absl::flat_hash_set<std::string> unschedulable_ ABSL_GUARDED_BY(mu_);
  uint64_t move_cycle_ ABSL_GUARDED_BY(mu_) = 0;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace kscore::queue

#endif  // KSCORE_SHIM_QUEUE_SCHEDULING_QUEUE_H_
