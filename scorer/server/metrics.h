#ifndef KSCORE_SCORER_SERVER_METRICS_H_
#define KSCORE_SCORER_SERVER_METRICS_H_

#include <array>
#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "grpcpp/support/status.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "scorer/framework/profile.h"
#include "scorer/server/scorer_service.h"

namespace kscore::server {

// kscore_scorer_calls_total{method, code}: each replica's load and errors.
// Every method's OK series exists from the start, at 0, so rates and
// per-replica comparisons work before the first call.
class CallMetrics final : public CallObserver {
 public:
  explicit CallMetrics(prometheus::Registry& registry);
  void OnCall(std::string_view method, grpc::StatusCode code) override;

 private:
  prometheus::Family<prometheus::Counter>& calls_;
};

// scheduler_framework_extension_point_duration_seconds{extension_point,
// status, profile}, kube-scheduler's stable metric, for the points the
// scorer runs. A series appears at its first observation, as upstream's.
class ExtensionPointMetrics final : public framework::ExtensionPointObserver {
 public:
  // `profiles`: the schedulerNames served, whose series are looked up
  // without the family's lock after their first observation.
  ExtensionPointMetrics(prometheus::Registry& registry,
                        const std::vector<std::string>& profiles);

  void OnExtensionPoint(model::ExtensionPoint point, framework::Code code,
                        const std::string& profile,
                        absl::Duration took) override;

 private:
  static constexpr int kPoints = 4;  // PreFilter, Filter, PreScore, Score
  static constexpr int kCodes = 5;   // framework::Code's values
  using Slots = std::array<std::atomic<prometheus::Histogram*>,
                           static_cast<size_t>(kPoints* kCodes)>;

  prometheus::Histogram& Series(model::ExtensionPoint point,
                                framework::Code code,
                                const std::string& profile);

  prometheus::Family<prometheus::Histogram>& family_;
  // Immutable after construction; the slots fill in once each.
  absl::flat_hash_map<std::string, std::unique_ptr<Slots>> slots_;
};

}  // namespace kscore::server

#endif  // KSCORE_SCORER_SERVER_METRICS_H_
