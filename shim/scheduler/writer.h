#ifndef KSCORE_SHIM_SCHEDULER_WRITER_H_
#define KSCORE_SHIM_SCHEDULER_WRITER_H_

#include <atomic>
#include <cstddef>
#include <functional>
#include <string>

#include "shim/kube/client.h"
#include "shim/kube/write_bodies.h"
#include "shim/scheduler/in_flight_limit.h"

namespace kscore::scheduler {

// The shim's one path for API writes. Bindings, events and status patches
// all go out with Client::DoAsync (HTTP/2 streams on the client's I/O
// thread, no thread each), each lane under its own in-flight limit: under a
// burst the API server serves bindings first and feedback follows, in order.
class Writer {
 public:
  enum class Lane { kBindings, kFeedback };
  struct Options {
    // Bindings in flight at most; more wait their turn, none is dropped.
    int max_bindings_in_flight = 64;
    // Events and status patches in flight. kube-scheduler's events
    // broadcaster gives each event a goroutine of its own (only the client's
    // rate limit holds them back); written that way beside the bindings,
    // events delay them (bench/results/README.md, runs 021625 and 055811).
    int max_feedback_in_flight = 2;
    // Beyond this many waiting, feedback is dropped and counted
    // (kube-scheduler's broadcaster drops beyond 1000).
    size_t max_feedback_queued = 100000;
  };
  struct Request {
    const char* method;
    std::string path;
    kube::WriteBody body;
    // Accept header; the body's content type when empty.
    std::string accept;
    // Asked when the request's turn comes, if set: false skips it, and
    // `done` gets CANCELLED (a status patch for a pod bound meanwhile).
    std::function<bool()> wanted;
    // Waits ahead of the lane's requests sent without it: a pending pod's
    // condition or nominated node does not wait behind a burst's events.
    bool ahead = false;
  };

  Writer(kube::Client* client, Options options);
  // Drops the feedback still waiting (logged), then waits for every request
  // in flight.
  ~Writer();

  // Sends `request` now or when its lane has room; `done` gets the outcome
  // on the client's I/O thread. False (and `done` never called) when the
  // feedback lane is full.
  bool Send(Lane lane, Request request, kube::Client::Done done);
  // Until nothing of `lane` is in flight or waiting.
  void WaitIdle(Lane lane);
  // Logs a write that failed (transport error or non-2xx), naming it with
  // `what` ("event for default/web-1"); true if it failed. A skipped one
  // (CANCELLED) is logged at debug level.
  static bool LogIfFailed(const absl::StatusOr<kube::Response>& r,
                          const std::string& what);

  // Feedback requests dropped so far (lane full, or waiting at shutdown).
  uint64_t dropped() const { return dropped_.load(); }

 private:
  InFlightLimit& LaneLimit(Lane lane) {
    return lane == Lane::kBindings ? bindings_ : feedback_;
  }

  kube::Client* client_;
  const size_t max_feedback_queued_;
  InFlightLimit bindings_;
  InFlightLimit feedback_;
  std::atomic<uint64_t> dropped_{0};
};

}  // namespace kscore::scheduler

#endif  // KSCORE_SHIM_SCHEDULER_WRITER_H_
