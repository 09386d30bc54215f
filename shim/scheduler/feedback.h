#ifndef KSCORE_SHIM_SCHEDULER_FEEDBACK_H_
#define KSCORE_SHIM_SCHEDULER_FEEDBACK_H_

#include <functional>
#include <optional>
#include <string>

#include "nlohmann/json.hpp"
#include "shim/objects/objects.h"
#include "shim/scheduler/event_recorder.h"
#include "shim/scheduler/writer.h"

namespace kscore::scheduler {

// What a person sees: events.k8s.io/v1 events in kube-scheduler's wording and
// the pod's PodScheduled condition. Everything is sent through the Writer's
// feedback lane without waiting (events folded into series as client-go's
// recorder folds them); a failure is logged.
class Feedback {
 public:
  // protobuf: events are sent in the Kubernetes protobuf encoding (else
  // JSON), as clientConnection.contentType says.
  Feedback(Writer* writer, std::string hostname, bool protobuf = false,
           EventRecorder::Options events = EventRecorder::Options())
      : writer_(writer),
        hostname_(std::move(hostname)),
        recorder_(writer, protobuf, std::move(events)) {}

  // "Successfully assigned default/web-1 to node-1".
  void Scheduled(const objects::PodInfo& pod, const std::string& node);
  void FailedScheduling(const objects::PodInfo& pod,
                        const std::string& message);
  // PodScheduled=False with reason Unschedulable (or SchedulerError), and
  // with `nominated_node` status.nominatedNodeName in the same patch ("":
  // cleared), as kube-scheduler's updatePod writes both. `pending`, if set,
  // is asked when the patch's turn comes: a pod bound or gone meanwhile is
  // not patched (the API server refuses a nomination on a bound pod).
  void MarkUnschedulable(
      const objects::PodInfo& pod, const std::string& reason,
      const std::string& message,
      const std::optional<std::string>& nominated_node = std::nullopt,
      std::function<bool()> pending = nullptr);
  // status.nominatedNodeName alone ("": cleared); `pending` as above.
  void SetNominatedNode(const std::string& namespace_, const std::string& name,
                        const std::string& node,
                        std::function<bool()> pending = nullptr);
  // The victim's event (upstream's PreemptPod): "Preempted by pod <uid> on
  // node <node>", regarding the victim, related to the preemptor.
  void Preempted(const kube::ObjectRef& victim,
                 const objects::PodInfo& preemptor, const std::string& node);
  // Merges `annotations` (name -> value) into the pod's metadata (a merge
  // patch of the pod, on the feedback lane): --record-scores.
  void Annotate(const objects::PodInfo& pod, nlohmann::json annotations);
  // Writes event series' counts when due (EventRecorder); call periodically.
  void Tick() { recorder_.Tick(); }

 private:
  void Event(const objects::PodInfo& pod, const char* type, const char* action,
             const char* reason, const std::string& note);
  // Written by `scheduler` (its reporting controller and instance).
  void Event(const std::string& scheduler, kube::ObjectRef regarding,
             kube::ObjectRef related, const char* type, const char* action,
             const char* reason, const std::string& note);
  void PatchStatus(const std::string& namespace_, const std::string& name,
                   nlohmann::json status, std::string what,
                   std::function<bool()> wanted);

  Writer* writer_;
  std::string hostname_;
  EventRecorder recorder_;
};

}  // namespace kscore::scheduler

#endif  // KSCORE_SHIM_SCHEDULER_FEEDBACK_H_
