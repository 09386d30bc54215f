#include "shim/scheduler/feedback.h"

#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "nlohmann/json.hpp"
#include "shim/kube/write_bodies.h"

namespace kscore::scheduler {
namespace {

std::string RandomSuffix() {
  thread_local std::mt19937_64 rng(std::random_device{}());
  return absl::StrFormat("%016x", rng());
}

}  // namespace

void Feedback::Event(const cache::PodInfo& pod, const char* type,
                     const char* action, const char* reason,
                     const std::string& note) {
  kube::EventFields ev;
  ev.namespace_ = pod.namespace_;
  ev.name = absl::StrCat(pod.name, ".", RandomSuffix());
  ev.event_time = absl::Now();
  ev.reporting_controller = pod.scheduler_name;
  ev.reporting_instance = absl::StrCat(pod.scheduler_name, "-", hostname_);
  ev.action = action;
  ev.reason = reason;
  ev.type = type;
  // The API server caps notes at 1kB.
  ev.note = note.size() > 1024 ? note.substr(0, 1021) + "..." : note;
  ev.regarding = {"v1",     "Pod",   pod.namespace_,
                  pod.name, pod.uid, pod.resource_version};
  recorder_.Record(std::move(ev));
}

void Feedback::Scheduled(const cache::PodInfo& pod, const std::string& node) {
  Event(pod, "Normal", "Binding", "Scheduled",
        absl::StrCat("Successfully assigned ", pod.namespace_, "/", pod.name,
                     " to ", node));
}

void Feedback::FailedScheduling(const cache::PodInfo& pod,
                                const std::string& message) {
  Event(pod, "Warning", "Scheduling", "FailedScheduling", message);
}

void Feedback::MarkUnschedulable(const cache::PodInfo& pod,
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
  Writer::Request req;
  req.method = "PATCH";
  req.path = absl::StrCat("/api/v1/namespaces/", pod.namespace_, "/pods/",
                          pod.name, "/status");
  req.body = {patch.dump(), "application/strategic-merge-patch+json"};
  req.accept = "application/json";
  writer_->Send(Writer::Lane::kFeedback, std::move(req),
                [what = absl::StrCat("condition for ", pod.key)](
                    const absl::StatusOr<kube::Response>& r) {
                  Writer::LogIfFailed(r, what);
                });
}

}  // namespace kscore::scheduler
