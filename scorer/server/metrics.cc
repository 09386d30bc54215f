#include "scorer/server/metrics.h"

#include <cctype>
#include <iterator>

#include "google/protobuf/descriptor.h"
#include "prometheus/histogram.h"

namespace kscore::server {
namespace {

using framework::Code;
using model::ExtensionPoint;

// gRPC's canonical code names, as grpcurl and the gRPC docs print them.
std::string_view CodeName(grpc::StatusCode code) {
  static constexpr std::string_view kNames[] = {"OK",
                                                "CANCELLED",
                                                "UNKNOWN",
                                                "INVALID_ARGUMENT",
                                                "DEADLINE_EXCEEDED",
                                                "NOT_FOUND",
                                                "ALREADY_EXISTS",
                                                "PERMISSION_DENIED",
                                                "RESOURCE_EXHAUSTED",
                                                "FAILED_PRECONDITION",
                                                "ABORTED",
                                                "OUT_OF_RANGE",
                                                "UNIMPLEMENTED",
                                                "INTERNAL",
                                                "UNAVAILABLE",
                                                "DATA_LOSS",
                                                "UNAUTHENTICATED"};
  const int i = static_cast<int>(code);
  return i >= 0 && i < static_cast<int>(std::size(kNames)) ? kNames[i]
                                                           : "UNKNOWN";
}

// Upstream's ExponentialBuckets(0.0001, 2, 12): 0.1ms up to ~200ms.
prometheus::Histogram::BucketBoundaries Buckets() {
  prometheus::Histogram::BucketBoundaries b;
  double bound = 0.0001;
  for (int i = 0; i < 12; ++i, bound *= 2) b.push_back(bound);
  return b;
}

// The slot of a point the scorer runs, or -1.
int PointIndex(ExtensionPoint p) {
  switch (p) {
    case ExtensionPoint::kPreFilter:
      return 0;
    case ExtensionPoint::kFilter:
      return 1;
    case ExtensionPoint::kPreScore:
      return 2;
    case ExtensionPoint::kScore:
      return 3;
    default:
      return -1;
  }
}

// kube-scheduler's extension_point label values (pkg/scheduler/metrics).
std::string PointLabel(ExtensionPoint p) {
  std::string name(model::ExtensionPointName(p));  // "preFilter"
  if (!name.empty()) name[0] = static_cast<char>(std::toupper(name[0]));
  return name;
}

}  // namespace

CallMetrics::CallMetrics(prometheus::Registry& registry)
    : calls_(prometheus::BuildCounter()
                 .Name("kscore_scorer_calls_total")
                 .Help("Scorer calls answered, by gRPC method and status code.")
                 .Register(registry)) {
  const google::protobuf::ServiceDescriptor* service =
      google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(
          pb::Scorer::service_full_name());
  for (int i = 0; service != nullptr && i < service->method_count(); ++i) {
    calls_.Add({{"method", service->method(i)->name()}, {"code", "OK"}});
  }
}

void CallMetrics::OnCall(std::string_view method, grpc::StatusCode code) {
  calls_
      .Add({{"method", std::string(method)},
            {"code", std::string(CodeName(code))}})
      .Increment();
}

ExtensionPointMetrics::ExtensionPointMetrics(
    prometheus::Registry& registry, const std::vector<std::string>& profiles)
    : family_(prometheus::BuildHistogram()
                  .Name("scheduler_framework_extension_point_duration_seconds")
                  .Help("Latency for running all plugins of a specific "
                        "extension point.")
                  .Register(registry)) {
  for (const std::string& p : profiles) {
    auto slots = std::make_unique<Slots>();
    for (auto& s : *slots) s.store(nullptr);
    slots_.emplace(p, std::move(slots));
  }
}

prometheus::Histogram& ExtensionPointMetrics::Series(
    ExtensionPoint point, Code code, const std::string& profile) {
  auto add = [&]() -> prometheus::Histogram& {
    return family_.Add({{"extension_point", PointLabel(point)},
                        {"status", std::string(framework::CodeName(code))},
                        {"profile", profile}},
                       Buckets());
  };
  const int p = PointIndex(point);
  const int c = static_cast<int>(code);
  auto it = slots_.find(profile);
  if (p < 0 || c < 0 || c >= kCodes || it == slots_.end()) return add();
  std::atomic<prometheus::Histogram*>& slot = (*it->second)[p * kCodes + c];
  prometheus::Histogram* h = slot.load(std::memory_order_acquire);
  if (h == nullptr) {
    // Family::Add returns the same series to every racing caller.
    h = &add();
    slot.store(h, std::memory_order_release);
  }
  return *h;
}

void ExtensionPointMetrics::OnExtensionPoint(ExtensionPoint point, Code code,
                                             const std::string& profile,
                                             absl::Duration took) {
  Series(point, code, profile).Observe(absl::ToDoubleSeconds(took));
}

}  // namespace kscore::server
