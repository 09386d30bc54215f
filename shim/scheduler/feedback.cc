#include "shim/scheduler/feedback.h"

#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "nlohmann/json.hpp"
#include "shim/kube/protobuf_codec.h"
#include "shim/kube/write_bodies.h"
#include "spdlog/spdlog.h"

namespace kscore::scheduler {
namespace {

std::string RandomSuffix() {
  thread_local std::mt19937_64 rng(std::random_device{}());
  return absl::StrFormat("%016x", rng());
}

absl::Status Check(const absl::StatusOr<kube::Response>& r, const char* what) {
  if (!r.ok()) return r.status();
  if (r->status >= 200 && r->status < 300) return absl::OkStatus();
  return absl::UnknownError(
      absl::StrCat(what, ": HTTP ", r->status, ": ",
                   kube::ErrorBodyText(r->body).substr(0, 300)));
}

}  // namespace

Feedback::Request Feedback::EventRequest(const cache::PodInfo& pod,
                                         const char* type, const char* action,
                                         const char* reason,
                                         const std::string& note) const {
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
  return {absl::StrCat("/apis/events.k8s.io/v1/namespaces/", pod.namespace_,
                       "/events"),
          kube::EventBody(protobuf_, ev)};
}

absl::Status Feedback::Event(const cache::PodInfo& pod, const char* type,
                             const char* action, const char* reason,
                             const std::string& note) {
  const Request req = EventRequest(pod, type, action, reason, note);
  return Check(client_->DoAs("POST", req.path, req.body.data,
                             req.body.content_type, req.body.content_type),
               "create event");
}

Feedback::~Feedback() {
  const size_t dropped = events_.DropQueued() + dropped_.load();
  if (dropped > 0) {
    spdlog::warn("{} Scheduled event(s) not sent (shutting down or queue full)",
                 dropped);
  }
  events_.WaitIdle();
}

void Feedback::Scheduled(const cache::PodInfo& pod, const std::string& node) {
  auto req = std::make_shared<Request>(
      EventRequest(pod, "Normal", "Binding", "Scheduled",
                   absl::StrCat("Successfully assigned ", pod.namespace_, "/",
                                pod.name, " to ", node)));
  const bool queued = events_.Run([this, req,
                                   key = pod.key](std::function<void()> done) {
    client_->DoAsync(
        "POST", req->path, req->body.data, req->body.content_type,
        req->body.content_type,
        [key, done = std::move(done)](const absl::StatusOr<kube::Response>& r) {
          if (absl::Status s = Check(r, "create event"); !s.ok()) {
            spdlog::warn("event for {}: {}", key, std::string(s.message()));
          }
          done();
        });
  });
  if (!queued && dropped_++ % 1000 == 0) {
    spdlog::warn("{} Scheduled events queued: dropping the event for {}",
                 kMaxEventsQueued, pod.key);
  }
}

absl::Status Feedback::FailedScheduling(const cache::PodInfo& pod,
                                        const std::string& message) {
  return Event(pod, "Warning", "Scheduling", "FailedScheduling", message);
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
