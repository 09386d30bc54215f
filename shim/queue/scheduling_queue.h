#ifndef KSCORE_SHIM_QUEUE_SCHEDULING_QUEUE_H_
#define KSCORE_SHIM_QUEUE_SCHEDULING_QUEUE_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/node_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "kscore/scorer/v1/scorer.pb.h"
#include "shim/objects/objects.h"

namespace kscore::queue {

// Per PreFilter/Filter plugin of a profile, the cluster events that may make
// a pod it rejected schedulable (the scorer's PluginInfo.events).
using PluginEvents =
    absl::flat_hash_map<std::string,
                        std::vector<::kscore::scorer::v1::ClusterEvent>>;

// A cluster event's object before and after, as the informers hand them
// (null when absent): nodes for node events, the other pod for assigned-pod
// events. The plugins' queueing hints read them.
struct EventObjects {
  std::shared_ptr<const objects::NodeInfo> old_node, new_node;
  std::shared_ptr<const objects::PodInfo> old_pod, new_pod;
  bool empty() const { return !old_node && !new_node && !old_pod && !new_pod; }
};

// kube-scheduler's scheduling queue: activeQ (priority, then age), backoffQ
// (exponential per-pod backoff) and the unschedulable pods, moved back by a
// cluster event that one of the plugins that rejected the pod registers
// (queueing hints at the level of EventsToRegister), or after a ceiling.
// When activeQ is empty, Pop takes the pod whose backoff ends first among
// those that plugins rejected (SchedulerPopFromBackoffQ). Every pending pod
// is in exactly one place (a queue, or in flight in a cycle), so none is
// lost or scheduled twice. Thread-safe.
class SchedulingQueue {
 public:
  struct HintJob;
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
    // Handed the pods an event may move only if their plugins' hints say so
    // (HintJob); the answer comes back through ApplyHints. Unset: such
    // pods move at once.
    std::function<void(HintJob)> ask_hints;
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
  static constexpr absl::string_view kPopFromBackoffQ = "PopFromBackoffQ";
  static constexpr absl::string_view kForceActivate = "ForceActivate";
  // Not kube-scheduler's: the scorer answers again (ScorerAnswered).
  static constexpr absl::string_view kScorerAvailable = "ScorerAvailable";

  struct QueuedPod {
    std::shared_ptr<const objects::PodInfo> info;
    int attempts = 0;            // scheduling attempts so far
    absl::Time timestamp;        // when it last entered activeQ (ordering)
    absl::Time initial_attempt;  // first Pop, for latency metrics
    uint64_t cycle = 0;          // events seen before its Pop
    // Why the last attempt failed: kube-scheduler's UnschedulablePlugins
    // (empty after an error), and what the profile's plugins register.
    std::vector<std::string> unschedulable_plugins;
    std::shared_ptr<const PluginEvents> plugin_events;
    // ScorerAnswered calls before its Pop.
    uint64_t scorer_answers = 0;
  };

  // The unschedulable pods whose rejectors registered `event` only with
  // hinted registrations, to be asked about (plugins: those rejectors).
  struct HintJob {
    ::kscore::scorer::v1::ClusterEvent event;
    EventObjects objects;
    std::vector<QueuedPod> pods;
  };

  struct Sizes {
    size_t active = 0, backoff = 0, unschedulable = 0, in_flight = 0;
  };

  explicit SchedulingQueue(Options options) : options_(std::move(options)) {}

  // A pending pod was added or changed. A queued pod keeps its place; an
  // unschedulable one moves back when the change (PodUpdateEvents, as
  // TargetPod) is an event its rejectors register; a pod in flight gets the
  // new object when it comes back.
  void AddOrUpdate(std::shared_ptr<const objects::PodInfo> pod);
  // The pod is gone or no longer ours to schedule (deleted, bound).
  void Delete(const std::string& key);

  // Blocks until a pod is active or timeout passes (nullopt) or Close().
  std::optional<QueuedPod> Pop(absl::Duration timeout);
  // The pods Pop would hand out next from activeQ, in order, at most `k`:
  // a hint (the queue may change before they are popped).
  std::vector<std::shared_ptr<const objects::PodInfo>> PeekActive(
      size_t k) const;
  // The cycle for this pod ended with the pod bound. If the pod was replaced
  // meanwhile (deleted and created again under the same name, another uid),
  // the new one is queued instead of forgotten.
  void Done(const std::string& key, const std::string& uid = "");
  // The cycle failed. Unschedulable pods (pod.unschedulable_plugins says
  // why) wait for a cluster event (or the ceiling); other failures (scorer
  // down, bind error) back off. A cluster event that came while the pod was
  // in flight and that its rejectors register sends it to backoff.
  void Requeue(QueuedPod pod, bool unschedulable);
  // The cycle failed only because the scorer did not answer (UNAVAILABLE):
  // the pod backs off as after an error, parked, and goes back to active
  // as soon as ScorerAnswered(), without waiting for the rest of its
  // backoff (which grew while the scorer was away). If the scorer answered
  // while the pod was in flight, it is active at once.
  void RequeueUnreachable(QueuedPod pod);
  // Upstream's PreEnqueue said no (DefaultPreemption: the pod's preemption
  // is under way): the pod waits in unschedulable, the attempt not
  // counted, and an event that would move it leaves it there while `gate`
  // says true (asked under the queue's lock, so it must not call the
  // queue), without asking for its hints. Activate moves it regardless.
  void RequeueGated(QueuedPod pod, std::function<bool()> gate);
  // The scorer answers again: the parked pods are active at once.
  void ScorerAnswered();

  // A cluster event (node added/updated, pod deleted...): the unschedulable
  // pods it may make fit go to backoff or active, the others stay.
  // Pods whose rejectors registered it only with hinted registrations stay
  // until the hints (Options::ask_hints) say so, when `objects` are given.
  // With `max_priority`, only pods of that priority or lower are considered
  // (upstream's getLEPriorityPreCheck: a nominated pod that went frees room
  // only for the pods it kept out).
  void MoveAllToActiveOrBackoff(
      const ::kscore::scorer::v1::ClusterEvent& event,
      const EventObjects& objects = {},
      std::optional<int32_t> max_priority = std::nullopt);
  // Sends the pod `key`, if waiting (backoff or unschedulable), to activeQ
  // now (upstream's Activate, event "ForceActivate").
  void Activate(const std::string& key);
  // The hints' answer for job.pods, in order: those still unschedulable
  // since the job was made and answered true move.
  void ApplyHints(const HintJob& job, const std::vector<bool>& queue);

  // What `event` does for `pod`: kube-scheduler's isPodWorthRequeuing.
  // kMove for a pod without rejectors (an error), a rejector the profile
  // does not describe, a wildcard event or a matching registration without
  // a hint; kAsk when only hinted registrations match (`ask` gets their
  // plugins); kSkip when none does.
  enum class Strategy { kSkip, kMove, kAsk };
  static Strategy Classify(const QueuedPod& pod,
                           const ::kscore::scorer::v1::ClusterEvent& event,
                           std::vector<std::string>* ask = nullptr);
  static bool WorthRequeuing(const QueuedPod& pod,
                             const ::kscore::scorer::v1::ClusterEvent& event) {
    return Classify(pod, event) != Strategy::kSkip;
  }
  // Moves expired backoff pods to active and long-waiting unschedulable pods
  // back; call periodically (every second, as kube-scheduler).
  void Flush();

  absl::Duration BackoffFor(int attempts) const;
  Sizes sizes() const;
  // Unschedulable pods per (profile, rejecting plugin): a pod counts for
  // each of its plugins (kube-scheduler's scheduler_unschedulable_pods).
  std::map<std::pair<std::string, std::string>, int> UnschedulableByPlugin()
      const;
  bool Contains(const std::string& key) const;
  void Close();

 private:
  using ActiveKey = std::tuple<int32_t /*-priority*/, absl::Time, std::string>;
  // Pods that plugins rejected, in backoff: by backoff end, then as activeQ.
  using BackoffKey =
      std::tuple<absl::Time, int32_t /*-priority*/, absl::Time, std::string>;
  enum class Where { kActive, kBackoff, kUnschedulable, kInFlight };
  struct Entry {
    QueuedPod pod;
    Where where = Where::kActive;
    absl::Time backoff_until;
    absl::Time unschedulable_since;
    std::shared_ptr<const objects::PodInfo> pending_update;  // while in flight
    bool deleted_in_flight = false;
    // In backoff after failing to reach the scorer (RequeueUnreachable).
    bool parked = false;
    // Set by RequeueGated while the pod waits in unschedulable.
    std::function<bool()> gate;
  };

  void ActivateLocked(Entry& e, absl::string_view event)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A returned pod waits in unschedulable for an event (or the ceiling).
  void WaitLocked(Entry& e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void BackoffOrActivateLocked(Entry& e, absl::string_view event)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Incoming(absl::string_view queue, absl::string_view event) const;
  void RemoveFromActiveLocked(const Entry& e)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Leaves the backoff set (if there) before the entry moves or goes.
  void LeaveBackoffLocked(const Entry& e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  static BackoffKey BackoffKeyOf(const Entry& e);
  QueuedPod PopLocked(Entry& e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A pod's cycle is over without a binding: its entry, holding `pod` (and
  // the update that came meanwhile), or null when it was deleted in flight
  // (then dropped). `moved` is told whether an event since its Pop may
  // make it schedulable (only asked when `unschedulable`).
  Entry* ReturnLocked(QueuedPod pod, bool unschedulable, bool* moved)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The pod popped at `cycle` is back: events older than every pod still
  // in flight are dropped.
  void LeaveFlightLocked(uint64_t cycle) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether an event since `pod`'s Pop (or `update`, the pod's own change
  // meanwhile) may make it schedulable.
  bool MovedInFlightLocked(const QueuedPod& pod,
                           const objects::PodInfo* update) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Options options_;
  mutable absl::Mutex mu_;
  // A node map: unschedulable_ points into it.
  absl::node_hash_map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);
  std::set<ActiveKey> active_ ABSL_GUARDED_BY(mu_);
  // Pods in backoff that plugins rejected (Pop takes them when active_ is
  // empty); pods that failed on an error back off outside it.
  std::set<BackoffKey> backoff_ ABSL_GUARDED_BY(mu_);
  // The unschedulable pods' entries, so a cluster event touches only them.
  absl::flat_hash_set<Entry*> unschedulable_ ABSL_GUARDED_BY(mu_);
  // Cluster events so far; those since the oldest in-flight pod's Pop are
  // kept, so a pod coming back unschedulable sees what happened meanwhile.
  uint64_t events_seen_ ABSL_GUARDED_BY(mu_) = 0;
  std::deque<std::pair<uint64_t, ::kscore::scorer::v1::ClusterEvent>>
      recent_events_ ABSL_GUARDED_BY(mu_);
  std::multiset<uint64_t> in_flight_cycles_ ABSL_GUARDED_BY(mu_);
  // At most this many are kept; a pod popped before the last one dropped
  // (events_lost_upto_) is retried as if one of them mattered.
  static constexpr size_t kMaxRecentEvents = 4096;
  uint64_t events_lost_upto_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t scorer_answers_ ABSL_GUARDED_BY(mu_) = 0;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace kscore::queue

#endif  // KSCORE_SHIM_QUEUE_SCHEDULING_QUEUE_H_
