#include "shim/scheduler/feedback.h"

#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "nlohmann/json.hpp"

namespace kscore::scheduler {
namespace {

std::string MicroTime(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", t, absl::UTCTimeZone());
}

std::string RandomSuffix() {
  thread_local std::mt19937_64 rng(std::random_device{}());
  return absl::StrFormat("%016x", rng());
}

absl::Status Check(const absl::StatusOr<kube::Response>& r, const char* what) {
  if (!r.ok()) return r.status();
  if (r->status >= 200 && r->status < 300) return absl::OkStatus();
  return absl::UnknownError(
      absl::StrCat(what, ": HTTP ", r->status, ": ", r->body.substr(0, 300)));
}

}  // namespace

absl::Status Feedback::Event(const cache::PodInfo& pod, const char* type,
                             const char* reason, const std::string& note) {
  nlohmann::json ev = {
      {"apiVersion", "events.k8s.io/v1"},
      {"kind", "Event"},
      {"metadata",
       {{"name", absl::StrCat(pod.name, ".", RandomSuffix())},
        {"namespace", pod.namespace_}}},
      {"eventTime", MicroTime(absl::Now())},
      {"reportingController", pod.scheduler_name},
      {"reportingInstance", absl::StrCat(pod.scheduler_name, "-", hostname_)},
      {"action", "Scheduling"},
      {"reason", reason},
      {"type", type},
      {"regarding",
       {{"apiVersion", "v1"},
        {"kind", "Pod"},
        {"namespace", pod.namespace_},
        {"name", pod.name},
        {"uid", pod.uid},
        {"resourceVersion", pod.resource_version}}},
      // The API server caps notes at 1kB.
      {"note", note.size() > 1024 ? note.substr(0, 1021) + "..." : note},
  };
  return Check(client_->Do("POST",
                           absl::StrCat("/apis/events.k8s.io/v1/namespaces/",
                                        pod.namespace_, "/events"),
                           ev.dump()),
               "create event");
}

absl::Status Feedback::Scheduled(const cache::PodInfo& pod,
                                 const std::string& node) {
  return Event(pod, "Normal", "Scheduled",
               absl::StrCat("Successfully assigned ", pod.namespace_, "/",
                            pod.name, " to ", node));
}

absl::Status Feedback::FailedScheduling(const cache::PodInfo& pod,
                                        const std::string& message) {
  return Event(pod, "Warning", "FailedScheduling", message);
}

absl::Status Feedback::MarkUnschedulable(const cache::PodInfo& pod,
                                         const std::string& reason,
                                         const std::string& message) {
  nlohmann::json patch = {
      {"status",
       {{"conditions",
         {{{"type", "PodScheduled"},
           {"status", "False"},
           {"reason", reason},
           {"message", message},
           {"lastProbeTime", nullptr},
           {"lastTransitionTime",
            absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::Now(),
                             absl::UTCTimeZone())}}}}}}};
  return Check(
      client_->Do("PATCH",
                  absl::StrCat("/api/v1/namespaces/", pod.namespace_, "/pods/",
                               pod.name, "/status"),
                  patch.dump(), "application/strategic-merge-patch+json"),
      "patch pod status");
}

}  // namespace kscore::scheduler
