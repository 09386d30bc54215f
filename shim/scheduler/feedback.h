#ifndef KSCORE_SHIM_SCHEDULER_FEEDBACK_H_
#define KSCORE_SHIM_SCHEDULER_FEEDBACK_H_

#include <atomic>
#include <string>

#include "absl/status/status.h"
#include "shim/cache/objects.h"
#include "shim/kube/client.h"
#include "shim/kube/write_bodies.h"
#include "shim/scheduler/in_flight_limit.h"

namespace kscore::scheduler {

// What a person sees: events.k8s.io/v1 events in kube-scheduler's wording and
// the pod's PodScheduled condition.
class Feedback {
 public:
  // protobuf: events are sent in the Kubernetes protobuf encoding (else
  // JSON), as clientConnection.contentType says.
  Feedback(kube::Client* client, std::string hostname, bool protobuf = false)
      : client_(client), hostname_(std::move(hostname)), protobuf_(protobuf) {}

  // At most this many Scheduled events in flight; the rest queue in order,
  // so that under a burst the API server serves bindings first and the
  // events follow. kube-scheduler's events broadcaster gives each event a
  // goroutine of its own (only the client's rate limit holds them back);
  // written that way beside the bindings, events delay them
  // (bench/results/README.md, runs 021625 and 055811).
  static constexpr int kMaxEventsInFlight = 2;
  // Beyond this many queued, new Scheduled events are dropped and counted
  // (kube-scheduler's broadcaster drops beyond 1000).
  static constexpr size_t kMaxEventsQueued = 100000;

  // Waits for the events in flight; queued ones are dropped (logged).
  ~Feedback();

  // "Successfully assigned default/web-1 to node-1", sent without waiting
  // (DoAsync: on the client's I/O thread, beside the bindings); a failure is
  // logged.
  void Scheduled(const cache::PodInfo& pod, const std::string& node);
  absl::Status FailedScheduling(const cache::PodInfo& pod,
                                const std::string& message);
  // PodScheduled=False with reason Unschedulable (or SchedulerError).
  absl::Status MarkUnschedulable(const cache::PodInfo& pod,
                                 const std::string& reason,
                                 const std::string& message);

 private:
  struct Request {
    std::string path;
    kube::WriteBody body;
  };
  Request EventRequest(const cache::PodInfo& pod, const char* type,
                       const char* action, const char* reason,
                       const std::string& note) const;
  absl::Status Event(const cache::PodInfo& pod, const char* type,
                     const char* action, const char* reason,
                     const std::string& note);

  kube::Client* client_;
  std::string hostname_;
  bool protobuf_;
  InFlightLimit events_{kMaxEventsInFlight, kMaxEventsQueued};
  std::atomic<uint64_t> dropped_{0};  // Scheduled events past the queue
};

}  // namespace kscore::scheduler

#endif  // KSCORE_SHIM_SCHEDULER_FEEDBACK_H_
