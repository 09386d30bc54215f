#include "shim/scheduler/writer.h"

#include <memory>
#include <utility>

#include "shim/kube/protobuf_codec.h"
#include "spdlog/spdlog.h"

namespace kscore::scheduler {

Writer::Writer(kube::Client* client, Options options)
    : client_(client),
      max_feedback_queued_(options.max_feedback_queued),
      bindings_(options.max_bindings_in_flight),
      feedback_(options.max_feedback_in_flight, options.max_feedback_queued) {}

Writer::~Writer() {
  const size_t dropped = feedback_.DropQueued();
  dropped_ += dropped;
  if (dropped_.load() > 0) {
    spdlog::warn(
        "{} event(s) or status patch(es) not sent (queue full or "
        "shutting down)",
        dropped_.load());
  }
  bindings_.WaitIdle();
  feedback_.WaitIdle();
}

bool Writer::Send(Lane lane, Request request, kube::Client::Done done) {
  const bool ahead = request.ahead;
  auto req = std::make_shared<Request>(std::move(request));
  auto then = std::make_shared<kube::Client::Done>(std::move(done));
  const bool queued = LaneLimit(lane).Run(
      [this, req, then](std::function<void()> finished) {
        if (req->wanted && !req->wanted()) {
          (*then)(absl::CancelledError("no longer wanted"));
          finished();
          return;
        }
        const std::string& type = req->body.content_type;
        client_->DoAsync(req->method, req->path, std::move(req->body.data),
                         type, req->accept.empty() ? type : req->accept,
                         [req, then, finished = std::move(finished)](
                             absl::StatusOr<kube::Response> r) {
                           (*then)(std::move(r));
                           finished();
                         });
      },
      ahead);
  if (!queued && dropped_++ % 1000 == 0) {
    spdlog::warn("{} events or status patches waiting: dropping {} {}",
                 max_feedback_queued_, req->method, req->path);
  }
  return queued;
}

void Writer::WaitIdle(Lane lane) { LaneLimit(lane).WaitIdle(); }

bool Writer::LogIfFailed(const absl::StatusOr<kube::Response>& r,
                         const std::string& what) {
  if (absl::IsCancelled(r.status())) {
    spdlog::debug("{}: skipped, {}", what, std::string(r.status().message()));
    return true;
  }
  if (!r.ok()) {
    spdlog::warn("{}: {}", what, std::string(r.status().message()));
    return true;
  }
  if (r->status < 200 || r->status >= 300) {
    spdlog::warn("{}: HTTP {}: {}", what, r->status,
                 kube::ErrorBodyText(r->body).substr(0, 300));
    return true;
  }
  return false;
}

}  // namespace kscore::scheduler
