#ifndef KSCORE_SHIM_SCHEDULER_FEEDBACK_H_
#define KSCORE_SHIM_SCHEDULER_FEEDBACK_H_

#include <string>

#include "shim/cache/objects.h"
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
  void Scheduled(const cache::PodInfo& pod, const std::string& node);
  void FailedScheduling(const cache::PodInfo& pod, const std::string& message);
  // PodScheduled=False with reason Unschedulable (or SchedulerError).
  void MarkUnschedulable(const cache::PodInfo& pod, const std::string& reason,
                         const std::string& message);
  // Writes event series' counts when due (EventRecorder); call periodically.
  void Tick() { recorder_.Tick(); }

 private:
  void Event(const cache::PodInfo& pod, const char* type, const char* action,
             const char* reason, const std::string& note);

  Writer* writer_;
  std::string hostname_;
  EventRecorder recorder_;
};

}  // namespace kscore::scheduler

#endif  // KSCORE_SHIM_SCHEDULER_FEEDBACK_H_
