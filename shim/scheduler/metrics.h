#ifndef KSCORE_SHIM_SCHEDULER_METRICS_H_
#define KSCORE_SHIM_SCHEDULER_METRICS_H_

#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace kscore::scheduler {

// Prometheus metrics, with kube-scheduler's names where they overlap.
struct Metrics {
  Metrics();

  // result: scheduled | unschedulable | error
  void Attempt(const std::string& result, const std::string& profile,
               double seconds);
  // A pod bound after `attempts` attempts, `sli_seconds` after its first
  // (kube-scheduler's pod_scheduling_attempts and SLI duration).
  void Scheduled(int attempts, double sli_seconds);
  // A pod entered `queue` because of `event` (kube-scheduler's
  // scheduler_queue_incoming_pods_total{queue,event}).
  void Incoming(absl::string_view queue, absl::string_view event);
  // Unschedulable pods per (profile, plugin) now; series seen before and
  // absent now read 0 (scheduler_unschedulable_pods{plugin,profile}).
  void SetUnschedulable(
      const std::map<std::pair<std::string, std::string>, int>& by_plugin);
  // All plugins of one extension point ran for `profile`'s pod: the shim
  // runs Bind (kube-scheduler's DefaultBinder), status "Success" or "Error"
  // (scheduler_framework_extension_point_duration_seconds).
  void ExtensionPoint(absl::string_view point, absl::string_view status,
                      const std::string& profile, double seconds);

  std::shared_ptr<prometheus::Registry> registry;
  prometheus::Family<prometheus::Counter>* attempts;
  prometheus::Family<prometheus::Histogram>* attempt_duration;
  prometheus::Family<prometheus::Gauge>* pending;
  prometheus::Family<prometheus::Histogram>* sli_duration;
  prometheus::Histogram* pod_attempts;
  prometheus::Family<prometheus::Counter>* binds;
  prometheus::Family<prometheus::Gauge>* scorer;
  prometheus::Gauge* leader;
  prometheus::Family<prometheus::Counter>* incoming;
  prometheus::Family<prometheus::Gauge>* unschedulable;
  // Cycles that reused a session (batching.h), by profile.
  prometheus::Family<prometheus::Counter>* batched;
  // Of those, the cycles an answer given ahead decided, without a call.
  prometheus::Family<prometheus::Counter>* answered_ahead;
  // Upstream's scheduler_volume_scheduling_stage_error_total: Reserve
  // ("assume") and PreBind ("bind") failures of VolumeBinding.
  prometheus::Family<prometheus::Counter>* volume_stage_errors;

 private:
  void RegisterOwn();

  absl::Mutex mu_;
  std::set<std::pair<std::string, std::string>> unschedulable_series_
      ABSL_GUARDED_BY(mu_);
  prometheus::Family<prometheus::Histogram>* extension_point_duration;
};

}  // namespace kscore::scheduler

#endif  // KSCORE_SHIM_SCHEDULER_METRICS_H_
