#include "shim/kube/informer.h"

#include <algorithm>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

namespace kscore::kube {
namespace {

constexpr absl::Duration kMinBackoff = absl::Milliseconds(100);
constexpr absl::Duration kMaxBackoff = absl::Seconds(30);

std::string Rv(const nlohmann::json& obj) {
  const auto meta = obj.find("metadata");
  if (meta == obj.end() || !meta->is_object()) return "";
  return meta->value("resourceVersion", "");
}

}  // namespace

NextStep AfterWatch(const absl::Status& watch_status, bool progressed) {
  const long http = HttpStatusOf(watch_status);
  if (http == 410) return NextStep::kRelist;
  if (watch_status.ok()) {
    return progressed ? NextStep::kRewatch : NextStep::kBackoffRewatch;
  }
  // 403, 500, ...: the list may be stale too. A dropped connection (or a
  // line we could not parse) only needs a new watch.
  return http != 0 ? NextStep::kBackoffRelist : NextStep::kBackoffRewatch;
}

absl::Status WatchErrorStatus(const nlohmann::json& status_object) {
  long code = 500;
  std::string message = status_object.dump();
  if (status_object.is_object()) {
    const auto c = status_object.find("code");
    if (c != status_object.end() && c->is_number_integer())
      code = c->get<long>();
    const auto m = status_object.find("message");
    if (m != status_object.end() && m->is_string())
      message = m->get<std::string>();
  }
  return HttpError(code, message);
}

Informer::Informer(Client* client, InformerOptions options)
    : client_(client), options_(std::move(options)) {}

Informer::~Informer() { Stop(); }

void Informer::Start() {
  thread_ = std::thread([this] { Run(); });
}

void Informer::Stop() {
  stop_ = true;
  if (!stopping_.HasBeenNotified()) stopping_.Notify();
  if (thread_.joinable()) thread_.join();
}

std::vector<ObjectPtr> Informer::List() const {
  absl::MutexLock lock(&mu_);
  return store_.List();
}

ObjectPtr Informer::Get(absl::string_view key) const {
  absl::MutexLock lock(&mu_);
  return store_.Get(key);
}

std::string Informer::ResourceVersion() const {
  absl::MutexLock lock(&mu_);
  return resource_version_;
}

std::string Informer::Query(absl::string_view extra) const {
  std::string q = absl::StrCat(options_.path, "?", extra);
  if (!options_.field_selector.empty()) {
    absl::StrAppend(&q,
                    "&fieldSelector=", QueryEscape(options_.field_selector));
  }
  if (!options_.label_selector.empty()) {
    absl::StrAppend(&q,
                    "&labelSelector=", QueryEscape(options_.label_selector));
  }
  return q;
}

void Informer::Run() {
  absl::Duration backoff = kMinBackoff;
  bool need_list = true;
  while (!stop_) {
    absl::Status st;
    NextStep next;
    if (need_list) {
      st = ListAll();
      next = st.ok() ? NextStep::kRewatch : NextStep::kBackoffRelist;
    } else {
      const absl::Time start = absl::Now();
      bool got_events = false;
      st = Watch(&got_events);
      if (stop_) break;
      ++watches_;
      next =
          AfterWatch(st, got_events || absl::Now() - start > absl::Seconds(1));
    }
    if (!st.ok() && !stop_) {
      spdlog::log(
          next == NextStep::kRelist ? spdlog::level::info : spdlog::level::warn,
          "informer {}: {}", options_.path, std::string(st.message()));
    }
    need_list = next == NextStep::kRelist || next == NextStep::kBackoffRelist;
    if (next == NextStep::kRewatch || next == NextStep::kRelist) {
      if (st.ok()) backoff = kMinBackoff;
      continue;
    }
    const absl::Duration wait =
        backoff * std::uniform_real_distribution<double>(1.0, 1.5)(rng_);
    backoff = std::min(backoff * 2, kMaxBackoff);
    stopping_.WaitForNotificationWithTimeout(wait);
  }
}

absl::Status Informer::ReadPage(const std::string& query,
                                const std::string& body,
                                std::vector<nlohmann::json>* items,
                                std::string* rv, std::string* cont) const {
  if (options_.protobuf && IsProtobufEnvelope(body)) {
    absl::StatusOr<DecodedList> list = DecodeList(body, options_.protobuf);
    if (!list.ok()) {
      return absl::InternalError(
          absl::StrCat("list ", query, ": ", list.status().message()));
    }
    *rv = std::move(list->resource_version);
    *cont = std::move(list->continue_token);
    for (nlohmann::json& item : list->items) items->push_back(std::move(item));
    return absl::OkStatus();
  }
  nlohmann::json list = nlohmann::json::parse(body, nullptr, false);
  if (list.is_discarded() || !list.is_object()) {
    return absl::InternalError(absl::StrCat("list ", query, ": not JSON"));
  }
  const nlohmann::json meta = list.value("metadata", nlohmann::json::object());
  *rv = meta.value("resourceVersion", "");
  *cont = meta.value("continue", "");
  for (nlohmann::json& item : list["items"]) items->push_back(std::move(item));
  return absl::OkStatus();
}

absl::Status Informer::ListAll() {
  std::vector<nlohmann::json> items;
  std::string cont;
  std::string rv;
  while (!stop_) {
    std::string q = Query("limit=500");
    if (!cont.empty()) absl::StrAppend(&q, "&continue=", QueryEscape(cont));
    absl::StatusOr<Response> resp = options_.protobuf
                                        ? client_->GetAs(q, kProtobufOrJson)
                                        : client_->Do("GET", q);
    if (!resp.ok()) return resp.status();
    if (resp->status == 410 && !cont.empty()) {
      // The continue token expired: start over from the first page.
      items.clear();
      cont.clear();
      continue;
    }
    if (resp->status != 200) {
      return HttpError(resp->status, ErrorBodyText(resp->body));
    }
    if (absl::Status s = ReadPage(q, resp->body, &items, &rv, &cont); !s.ok())
      return s;
    if (cont.empty()) break;
  }
  if (stop_) return absl::CancelledError("stopped");

  std::vector<Delta> deltas;
  {
    absl::MutexLock lock(&mu_);
    deltas = store_.Replace(std::move(items));
    resource_version_ = rv;
  }
  ++lists_;
  Dispatch(deltas);
  if (!synced_.exchange(true) && options_.handlers.on_synced) {
    options_.handlers.on_synced();
  }
  return absl::OkStatus();
}

absl::Status Informer::Watch(bool* got_events) {
  const int64_t timeout =
      options_.watch_timeout > absl::ZeroDuration()
          ? std::max<int64_t>(1, absl::ToInt64Seconds(options_.watch_timeout))
          : std::uniform_int_distribution<int64_t>(300, 600)(rng_);
  const std::string q = Query(absl::StrCat(
      "watch=true&allowWatchBookmarks=true&timeoutSeconds=", timeout,
      "&resourceVersion=", QueryEscape(ResourceVersion())));
  absl::Status event_error;
  auto on_event = [&](absl::StatusOr<WatchEvent> event) {
    if (!event.ok()) {
      event_error = event.status();
      return false;
    }
    if (event->type == WatchEvent::Type::kError) {
      event_error = WatchErrorStatus(event->object);
      return false;
    }
    *got_events = true;
    const std::string rv = Rv(event->object);
    std::vector<Delta> deltas;
    {
      absl::MutexLock lock(&mu_);
      deltas = store_.Apply(*std::move(event));
      if (!rv.empty()) resource_version_ = rv;
    }
    Dispatch(deltas);
    return true;
  };
  absl::Status st =
      options_.protobuf
          ? client_->StreamFrames(
                q, kProtobufWatch,
                [&](absl::string_view frame) {
                  return on_event(DecodeWatchFrame(frame, options_.protobuf));
                },
                &stop_)
          : client_->Stream(
                q,
                [&](absl::string_view line) {
                  return on_event(ParseWatchEvent(line));
                },
                &stop_);
  return event_error.ok() ? st : event_error;
}

void Informer::Dispatch(const std::vector<Delta>& deltas) {
  const EventHandlers& h = options_.handlers;
  for (const Delta& d : deltas) {
    switch (d.type) {
      case Delta::Type::kAdded:
        if (h.on_add) h.on_add(*d.obj);
        break;
      case Delta::Type::kUpdated:
        if (h.on_update) h.on_update(*d.old_obj, *d.obj);
        break;
      case Delta::Type::kDeleted:
        if (h.on_delete) h.on_delete(*d.obj);
        break;
    }
  }
}

}  // namespace kscore::kube
