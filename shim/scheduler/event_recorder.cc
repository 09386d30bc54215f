#include "shim/scheduler/event_recorder.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace kscore::scheduler {
namespace {

// POSTs the event. Free of the recorder: a series' 404 answer may come
// back while the shim stops (the writer outlives the recorder).
void CreateEvent(Writer* writer, bool protobuf, const kube::EventFields& e) {
  Writer::Request req;
  req.method = "POST";
  req.path = absl::StrCat("/apis/events.k8s.io/v1/namespaces/", e.namespace_,
                          "/events");
  req.body = kube::EventBody(protobuf, e);
  writer->Send(Writer::Lane::kFeedback, std::move(req),
               [what = absl::StrCat("event for ", e.regarding.namespace_, "/",
                                    e.regarding.name)](
                   const absl::StatusOr<kube::Response>& r) {
                 Writer::LogIfFailed(r, what);
               });
}

}  // namespace

EventRecorder::EventRecorder(Writer* writer, bool protobuf, Options options)
    : writer_(writer), protobuf_(protobuf), options_(std::move(options)) {
  const absl::Time now = options_.now();
  next_finish_ = now + options_.finish_after;
  next_refresh_ = now + options_.refresh_every;
}

std::string EventRecorder::Key(const kube::EventFields& e) {
  const kube::ObjectRef& r = e.regarding;
  const kube::ObjectRef& rel = e.related;
  return absl::StrCat(e.type, "\x1f", e.action, "\x1f", e.reason, "\x1f",
                      e.reporting_controller, "\x1f", e.reporting_instance,
                      "\x1f", r.api_version, "\x1f", r.kind, "\x1f",
                      r.namespace_, "\x1f", r.name, "\x1f", r.uid, "\x1f",
                      r.resource_version, "\x1f", rel.namespace_, "\x1f",
                      rel.name, "\x1f", rel.uid);
}

void EventRecorder::Record(kube::EventFields event) {
  const absl::Time now = options_.now();
  kube::EventFields series;
  {
    absl::MutexLock lock(&mu_);
    auto [it, inserted] = cache_.try_emplace(Key(event), Entry{event});
    if (!inserted) {
      kube::EventFields& cached = it->second.event;
      cached.series_last_observed = now;
      if (cached.series_count > 0) {  // counted; written later
        ++cached.series_count;
        return;
      }
      cached.series_count = 2;
      series = cached;
    }
  }
  if (series.series_count == 0) {
    CreateEvent(writer_, protobuf_, event);
  } else {
    WriteSeries(series);
  }
}

void EventRecorder::WriteSeries(const kube::EventFields& e) {
  Writer::Request req;
  req.method = "PATCH";
  req.path = absl::StrCat("/apis/events.k8s.io/v1/namespaces/", e.namespace_,
                          "/events/", e.name);
  req.body = kube::EventSeriesPatch(e);
  req.accept = "application/json";
  writer_->Send(Writer::Lane::kFeedback, std::move(req),
                [writer = writer_, protobuf = protobuf_,
                 e](const absl::StatusOr<kube::Response>& r) {
                  if (r.ok() && r->status == 404) {
                    // The event is gone: create it with its series.
                    CreateEvent(writer, protobuf, e);
                    return;
                  }
                  Writer::LogIfFailed(r, absl::StrCat("event series for ",
                                                      e.regarding.namespace_,
                                                      "/", e.regarding.name));
                });
}

void EventRecorder::Tick() {
  const absl::Time now = options_.now();
  std::vector<kube::EventFields> writes;
  {
    absl::MutexLock lock(&mu_);
    if (now >= next_refresh_) {
      next_refresh_ = now + options_.refresh_every;
      for (const auto& [key, entry] : cache_) {
        if (entry.event.series_count > 0) writes.push_back(entry.event);
      }
    }
    if (now >= next_finish_) {
      next_finish_ = now + options_.finish_after;
      const absl::Time cutoff = now - options_.finish_after;
      absl::erase_if(cache_, [&](const auto& kv) {
        const kube::EventFields& e = kv.second.event;
        if (e.series_count == 0) return e.event_time < cutoff;
        if (e.series_last_observed >= cutoff) return false;
        writes.push_back(e);  // the series ended: write its final count
        return true;
      });
    }
  }
  for (const kube::EventFields& e : writes) WriteSeries(e);
}

size_t EventRecorder::cached() const {
  absl::MutexLock lock(&mu_);
  return cache_.size();
}

}  // namespace kscore::scheduler
