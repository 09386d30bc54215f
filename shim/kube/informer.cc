#include "shim/kube/informer.h"

#include <algorithm>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "shim/kube/json_parse.h"
#include "shim/kube/json_text.h"
#include "spdlog/spdlog.h"

namespace kscore::kube {
namespace {

constexpr absl::Duration kMinBackoff = absl::Milliseconds(100);
constexpr absl::Duration kMaxBackoff = absl::Seconds(30);
// After a request that got no answer (the API server down or restarting):
// trying again costs it nothing, and waiting longer delays everything the
// shim does once it is back.
constexpr absl::Duration kMaxUnreachableBackoff = absl::Seconds(1);

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
  std::string message = JsonText(status_object);
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

void LogUndecodable(const std::string& path, const absl::Status& status) {
  spdlog::warn("informer {}: skipping an object: {}", path,
               std::string(status.message()));
}

Reflector::Reflector(Client* client, ReflectorOptions options,
                     ReflectorTarget* target)
    : client_(client), options_(std::move(options)), target_(target) {}

Reflector::~Reflector() { Stop(); }

void Reflector::Start() {
  thread_ = std::thread([this] { Run(); });
}

void Reflector::Stop() {
  stop_ = true;
  if (!stopping_.HasBeenNotified()) stopping_.Notify();
  if (thread_.joinable()) thread_.join();
}

std::string Reflector::Query(absl::string_view extra) const {
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

void Reflector::Run() {
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
    const bool unreachable =
        !st.ok() && HttpStatusOf(st) == 0 && absl::IsUnavailable(st);
    if (unreachable) backoff = std::min(backoff, kMaxUnreachableBackoff);
    const absl::Duration wait =
        backoff * std::uniform_real_distribution<double>(1.0, 1.5)(rng_);
    backoff = std::min(backoff * 2,
                       unreachable ? kMaxUnreachableBackoff : kMaxBackoff);
    stopping_.WaitForNotificationWithTimeout(wait);
  }
}

absl::Status Reflector::ReadPage(const std::string& query,
                                 const std::string& body, std::string* rv,
                                 std::string* cont) {
  if (options_.protobuf && IsProtobufEnvelope(body)) {
    absl::StatusOr<DecodedList> list = DecodeList(body);
    if (!list.ok()) {
      return absl::InternalError(
          absl::StrCat("list ", query, ": ", list.status().message()));
    }
    *rv = std::move(list->resource_version);
    *cont = std::move(list->continue_token);
    for (const std::string& item : list->items) target_->Listed({item});
    return absl::OkStatus();
  }
  absl::StatusOr<nlohmann::json> parsed = ParseJson(body);
  if (!parsed.ok()) {
    return absl::InternalError(
        absl::StrCat("list ", query, ": ", parsed.status().message()));
  }
  const nlohmann::json& list = *parsed;
  if (!list.is_object()) {
    return absl::InternalError(absl::StrCat("list ", query, ": not JSON"));
  }
  const nlohmann::json meta = list.value("metadata", nlohmann::json::object());
  *rv = meta.value("resourceVersion", "");
  *cont = meta.value("continue", "");
  const auto items = list.find("items");
  if (items == list.end() || !items->is_array()) return absl::OkStatus();
  for (const nlohmann::json& item : *items) target_->Listed({{}, &item});
  return absl::OkStatus();
}

absl::Status Reflector::ListAll() {
  target_->DropListed();
  std::string cont;
  std::string rv;
  while (!stop_) {
    std::string q = Query("limit=500");
    if (!cont.empty()) absl::StrAppend(&q, "&continue=", QueryEscape(cont));
    KSCORE_ASSIGN_OR_RETURN(
        Response resp, options_.protobuf ? client_->GetAs(q, kProtobufOrJson)
                                         : client_->Do("GET", q));
    if (resp.status == 410 && !cont.empty()) {
      // The continue token expired: start over from the first page.
      target_->DropListed();
      cont.clear();
      continue;
    }
    if (resp.status != 200) {
      return HttpError(resp.status, ErrorBodyText(resp.body));
    }
    KSCORE_RETURN_IF_ERROR(ReadPage(q, resp.body, &rv, &cont));
    if (cont.empty()) break;
  }
  if (stop_) return absl::CancelledError("stopped");

  target_->EndList(std::move(rv));
  ++lists_;
  if (!synced_.exchange(true) && options_.on_synced) options_.on_synced();
  return absl::OkStatus();
}

bool Reflector::OnEvent(absl::StatusOr<WatchEvent> event, absl::Status* error) {
  if (!event.ok()) {
    *error = event.status();
    return false;
  }
  switch (event->type) {
    case WatchEvent::Type::kError:
      *error = WatchErrorStatus(event->object);
      return false;
    case WatchEvent::Type::kBookmark: {
      absl::StatusOr<std::string> rv =
          options_.protobuf ? ResourceVersionOf(event->protobuf)
                            : absl::StatusOr<std::string>(Rv(event->object));
      if (!rv.ok()) {
        *error = rv.status();
        return false;
      }
      target_->Bookmark(*std::move(rv));
      return true;
    }
    default:
      if (options_.protobuf) {
        target_->Watched(event->type, {event->protobuf});
      } else {
        target_->Watched(event->type, {{}, &event->object});
      }
      return true;
  }
}

absl::Status Reflector::Watch(bool* got_events) {
  const int64_t timeout =
      options_.watch_timeout > absl::ZeroDuration()
          ? std::max<int64_t>(1, absl::ToInt64Seconds(options_.watch_timeout))
          : std::uniform_int_distribution<int64_t>(300, 600)(rng_);
  const std::string q = Query(absl::StrCat(
      "watch=true&allowWatchBookmarks=true&timeoutSeconds=", timeout,
      "&resourceVersion=", QueryEscape(target_->ResourceVersion())));
  absl::Status event_error;
  auto on_event = [&](absl::StatusOr<WatchEvent> event) {
    const bool go_on = OnEvent(std::move(event), &event_error);
    if (go_on) *got_events = true;
    return go_on;
  };
  absl::Status st = options_.protobuf
                        ? client_->StreamFrames(
                              q, kProtobufWatch,
                              [&](absl::string_view frame) {
                                return on_event(DecodeWatchFrame(frame));
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

}  // namespace kscore::kube
