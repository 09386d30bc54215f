#include "shim/scheduler/metrics.h"

namespace kscore::scheduler {

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
                 .Help("Number of pending pods, by the queue type.")
                 .Register(*registry);
  binds = &prometheus::BuildCounter()
               .Name("kscore_binds_total")
               .Help("Bindings by result (bound, conflict, error).")
               .Register(*registry);
  scorer = &prometheus::BuildGauge()
                .Name("kscore_scorer")
                .Help(
                    "Scorer client counters: calls, failures, request_bytes, "
                    "response_bytes; profile_checks (ListProfiles rounds), "
                    "refusals (rounds that refused the scorer: replicas "
                    "disagree, unreachable), refused (1 while refused).")
                .Register(*registry);
  leader = &prometheus::BuildGauge()
                .Name("kscore_leader")
                .Help("1 while this shim is the leader.")
                .Register(*registry)
                .Add({});
}

void Metrics::Attempt(const std::string& result, const std::string& profile,
                      double seconds) {
  attempts->Add({{"result", result}, {"profile", profile}}).Increment();
  static const prometheus::Histogram::BucketBoundaries kBuckets = {
      0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064,
      0.128, 0.256, 0.512, 1.024, 2.048, 4.096};
  attempt_duration->Add({{"result", result}, {"profile", profile}}, kBuckets)
      .Observe(seconds);
}

}  // namespace kscore::scheduler
