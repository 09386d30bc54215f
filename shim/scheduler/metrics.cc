#include "shim/scheduler/metrics.h"

namespace kscore::scheduler {
namespace {

// Prometheus' ExponentialBuckets(start, factor, count), as upstream's.
prometheus::Histogram::BucketBoundaries Exponential(double start, double factor,
                                                    int count) {
  prometheus::Histogram::BucketBoundaries b;
  for (int i = 0; i < count; ++i, start *= factor) b.push_back(start);
  return b;
}

}  // namespace

Metrics::Metrics() : registry(std::make_shared<prometheus::Registry>()) {
  attempts = &prometheus::BuildCounter()
                  .Name("scheduler_schedule_attempts_total")
                  .Help("Number of attempts to schedule pods, by the result.")
                  .Register(*registry);
  attempt_duration =
      &prometheus::BuildHistogram()
           .Name("scheduler_scheduling_attempt_duration_seconds")
           .Help(
               "Scheduling attempt latency in seconds (scheduling algorithm + "
               "binding)")
           .Register(*registry);
  pending = &prometheus::BuildGauge()
                 .Name("scheduler_pending_pods")
                 .Help(
                     "Number of pending pods, by the queue type. 'active' "
                     "means number of pods in activeQ; 'backoff' means "
                     "number of pods in backoffQ; 'unschedulable' means "
                     "number of pods in unschedulablePods that the "
                     "scheduler attempted to schedule and failed; 'gated' "
                     "is the number of unschedulable pods that the "
                     "scheduler never attempted to schedule because they "
                     "are gated.")
                 .Register(*registry);
  sli_duration =
      &prometheus::BuildHistogram()
           .Name("scheduler_pod_scheduling_sli_duration_seconds")
           .Help(
               "E2e latency for a pod being scheduled, from the time the "
               "pod enters the scheduling queue and might involve multiple "
               "scheduling attempts.")
           .Register(*registry);
  pod_attempts =
      &prometheus::BuildHistogram()
           .Name("scheduler_pod_scheduling_attempts")
           .Help("Number of attempts to successfully schedule a pod.")
           .Register(*registry)
           .Add({}, Exponential(1, 2, 5));
  RegisterOwn();
  incoming = &prometheus::BuildCounter()
                  .Name("scheduler_queue_incoming_pods_total")
                  .Help(
                      "Number of pods added to scheduling queues by event "
                      "and queue type.")
                  .Register(*registry);
  unschedulable =
      &prometheus::BuildGauge()
           .Name("scheduler_unschedulable_pods")
           .Help(
               "The number of unschedulable pods broken down by plugin name. "
               "A pod will increment the gauge for all plugins that caused "
               "it to not schedule and so this metric have meaning only "
               "when broken down by plugin.")
           .Register(*registry);
  extension_point_duration =
      &prometheus::BuildHistogram()
           .Name("scheduler_framework_extension_point_duration_seconds")
           .Help(
               "Latency for running all plugins of a specific extension "
               "point.")
           .Register(*registry);
}

// kscore's own families (kscore_*), beside kube-scheduler's.
void Metrics::RegisterOwn() {
  batched = &prometheus::BuildCounter()
                 .Name("kscore_batched_cycles_total")
                 .Help(
                     "Scheduling cycles that re-evaluated only the nodes "
                     "changed since the last pod of the same template.")
                 .Register(*registry);
  answered_ahead =
      &prometheus::BuildCounter()
           .Name("kscore_cycles_answered_ahead_total")
           .Help(
               "Batched cycles decided by an answer the scorer gave ahead, "
               "with an earlier pod's call (also in "
               "kscore_batched_cycles_total).")
           .Register(*registry);
  volume_stage_errors =
      &prometheus::BuildCounter()
           .Name("scheduler_volume_scheduling_stage_error_total")
           .Help("Volume scheduling stage error count")
           .Register(*registry);
  binds = &prometheus::BuildCounter()
               .Name("kscore_binds_total")
               .Help("Bindings by result (bound, conflict, error).")
               .Register(*registry);
  scorer = &prometheus::BuildGauge()
                .Name("kscore_scorer")
                .Help(
                    "Scorer client counters: calls, failures, request_bytes, "
                    "response_bytes, hint_calls (QueueingHint, also in "
                    "calls); profile_checks (ListProfiles rounds), "
                    "refusals (rounds that refused the scorer: replicas "
                    "disagree, unreachable), refused (1 while refused).")
                .Register(*registry);
  leader = &prometheus::BuildGauge()
                .Name("kscore_leader")
                .Help("1 while this shim is the leader.")
                .Register(*registry)
                .Add({});
}

void Metrics::ExtensionPoint(absl::string_view point, absl::string_view status,
                             const std::string& profile, double seconds) {
  // Upstream's: 0.1ms with the last bucket [~200ms, Inf).
  static const prometheus::Histogram::BucketBoundaries kBuckets =
      Exponential(0.0001, 2, 12);
  extension_point_duration
      ->Add({{"extension_point", std::string(point)},
             {"status", std::string(status)},
             {"profile", profile}},
            kBuckets)
      .Observe(seconds);
}

void Metrics::SetUnschedulable(
    const std::map<std::pair<std::string, std::string>, int>& by_plugin) {
  absl::MutexLock lock(&mu_);
  for (const auto& key : unschedulable_series_) {
    if (!by_plugin.contains(key)) {
      unschedulable->Add({{"profile", key.first}, {"plugin", key.second}})
          .Set(0);
    }
  }
  for (const auto& [key, count] : by_plugin) {
    unschedulable->Add({{"profile", key.first}, {"plugin", key.second}})
        .Set(count);
    unschedulable_series_.insert(key);
  }
}

void Metrics::Incoming(absl::string_view queue, absl::string_view event) {
  incoming->Add({{"queue", std::string(queue)}, {"event", std::string(event)}})
      .Increment();
}

void Metrics::Attempt(const std::string& result, const std::string& profile,
                      double seconds) {
  attempts->Add({{"result", result}, {"profile", profile}}).Increment();
  static const prometheus::Histogram::BucketBoundaries kBuckets =
      Exponential(0.001, 2, 15);
  attempt_duration->Add({{"result", result}, {"profile", profile}}, kBuckets)
      .Observe(seconds);
}

void Metrics::Scheduled(int attempts, double sli_seconds) {
  pod_attempts->Observe(attempts);
  static const prometheus::Histogram::BucketBoundaries kBuckets =
      Exponential(0.01, 2, 20);
  // Capped, as upstream's, against a high cardinality.
  const std::string label = attempts >= 15 ? "15+" : std::to_string(attempts);
  sli_duration->Add({{"attempts", label}}, kBuckets).Observe(sli_seconds);
}

}  // namespace kscore::scheduler
