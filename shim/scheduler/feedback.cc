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

void Feedback::Event(const objects::PodInfo& pod, const char* type,
                     const char* action, const char* reason,
                     const std::string& note) {
  Event(pod.scheduler_name,
        {"v1", "Pod", pod.namespace_, pod.name, pod.uid, pod.resource_version},
        {}, type, action, reason, note);
}

void Feedback::Event(const std::string& scheduler, kube::ObjectRef regarding,
                     kube::ObjectRef related, const char* type,
                     const char* action, const char* reason,
                     const std::string& note) {
  kube::EventFields ev;
  ev.namespace_ = regarding.namespace_;
  ev.name = absl::StrCat(regarding.name, ".", RandomSuffix());
  ev.event_time = absl::Now();
  ev.reporting_controller = scheduler;
  ev.reporting_instance = absl::StrCat(scheduler, "-", hostname_);
  ev.action = action;
  ev.reason = reason;
  ev.type = type;
  // The API server caps notes at 1kB.
  ev.note = note.size() > 1024 ? note.substr(0, 1021) + "..." : note;
  ev.regarding = std::move(regarding);
  ev.related = std::move(related);
  recorder_.Record(std::move(ev));
}

void Feedback::Preempted(const kube::ObjectRef& victim,
                         const objects::PodInfo& preemptor,
                         const std::string& node) {
  Event(preemptor.scheduler_name, victim,
        {"v1", "Pod", preemptor.namespace_, preemptor.name, preemptor.uid, ""},
        "Normal", "Preempting", "Preempted",
        absl::StrCat("Preempted by pod ", preemptor.uid, " on node ", node));
}

void Feedback::Scheduled(const objects::PodInfo& pod, const std::string& node) {
  Event(pod, "Normal", "Binding", "Scheduled",
        absl::StrCat("Successfully assigned ", pod.namespace_, "/", pod.name,
                     " to ", node));
}

void Feedback::FailedScheduling(const objects::PodInfo& pod,
                                const std::string& message) {
  Event(pod, "Warning", "Scheduling", "FailedScheduling", message);
}

void Feedback::MarkUnschedulable(
    const objects::PodInfo& pod, const std::string& reason,
    const std::string& message,
    const std::optional<std::string>& nominated_node,
    std::function<bool()> pending) {
  nlohmann::json status = {
      {"conditions",
       {{{"type", "PodScheduled"},
         {"status", "False"},
         {"reason", reason},
         {"message", message},
         {"lastProbeTime", nullptr},
         {"lastTransitionTime",
          absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::Now(),
                           absl::UTCTimeZone())}}}}};
  if (nominated_node.has_value()) {
    status["nominatedNodeName"] = nominated_node->empty()
                                      ? nlohmann::json(nullptr)
                                      : nlohmann::json(*nominated_node);
  }
  PatchStatus(pod.namespace_, pod.name, std::move(status),
              absl::StrCat("condition for ", pod.key), std::move(pending));
}

void Feedback::SetNominatedNode(const std::string& namespace_,
                                const std::string& name,
                                const std::string& node,
                                std::function<bool()> pending) {
  PatchStatus(namespace_, name,
              {{"nominatedNodeName",
                node.empty() ? nlohmann::json(nullptr) : nlohmann::json(node)}},
              absl::StrCat("nominated node of ", namespace_, "/", name),
              std::move(pending));
}

void Feedback::Annotate(const objects::PodInfo& pod,
                        nlohmann::json annotations) {
  nlohmann::json patch = {
      {"metadata", {{"annotations", std::move(annotations)}}}};
  Writer::Request req;
  req.method = "PATCH";
  req.path =
      absl::StrCat("/api/v1/namespaces/", pod.namespace_, "/pods/", pod.name);
  req.body = {patch.dump(), "application/merge-patch+json"};
  req.accept = "application/json";
  writer_->Send(Writer::Lane::kFeedback, std::move(req),
                [what = absl::StrCat("score annotations of ", pod.key)](
                    const absl::StatusOr<kube::Response>& r) {
                  Writer::LogIfFailed(r, what);
                });
}

void Feedback::PatchStatus(const std::string& namespace_,
                           const std::string& name, nlohmann::json status,
                           std::string what, std::function<bool()> wanted) {
  nlohmann::json patch = {{"status", std::move(status)}};
  Writer::Request req;
  req.method = "PATCH";
  req.path = absl::StrCat("/api/v1/namespaces/", namespace_, "/pods/", name,
                          "/status");
  req.body = {patch.dump(), "application/strategic-merge-patch+json"};
  req.accept = "application/json";
  req.wanted = std::move(wanted);
  req.ahead = true;
  writer_->Send(
      Writer::Lane::kFeedback, std::move(req),
      [what = std::move(what)](const absl::StatusOr<kube::Response>& r) {
        Writer::LogIfFailed(r, what);
      });
}

}  // namespace kscore::scheduler
