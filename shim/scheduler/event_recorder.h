#ifndef KSCORE_SHIM_SCHEDULER_EVENT_RECORDER_H_
#define KSCORE_SHIM_SCHEDULER_EVENT_RECORDER_H_

#include <cstddef>
#include <functional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "shim/kube/write_bodies.h"
#include "shim/scheduler/writer.h"

namespace kscore::scheduler {

// Writes events.k8s.io/v1 events as client-go's events recorder
// (tools/events) does for kube-scheduler. An event isomorphic to a cached
// one (same type, action, reason, reporting controller and instance, and
// regarding object, its resourceVersion included) is not created again:
// the second makes the first a series (count 2, written at once with a
// PATCH), later ones only count in memory. A series' count is written when
// the series ends (no repeat for `finish_after`, checked that often) and
// every `refresh_every`; a singleton is forgotten after `finish_after`.
// Everything goes through the writer's feedback lane.
class EventRecorder {
 public:
  struct Options {
    absl::Duration finish_after = absl::Minutes(6);
    absl::Duration refresh_every = absl::Minutes(30);
    std::function<absl::Time()> now = [] { return absl::Now(); };
  };

  EventRecorder(Writer* writer, bool protobuf, Options options);

  // `event.name` must be unique (the first of a series keeps it).
  void Record(kube::EventFields event);
  // Finishes and refreshes series when due; call periodically.
  void Tick();
  size_t cached() const;

 private:
  struct Entry {
    kube::EventFields event;  // series_count 0: a singleton so far
  };
  static std::string Key(const kube::EventFields& e);
  // PATCHes the series; creates the event with it if it is gone (404).
  void WriteSeries(const kube::EventFields& e);

  Writer* writer_;
  const bool protobuf_;
  const Options options_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Entry> cache_ ABSL_GUARDED_BY(mu_);
  absl::Time next_finish_ ABSL_GUARDED_BY(mu_);
  absl::Time next_refresh_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kscore::scheduler

#endif  // KSCORE_SHIM_SCHEDULER_EVENT_RECORDER_H_
