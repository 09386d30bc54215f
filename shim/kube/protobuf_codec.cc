#include "shim/kube/protobuf_codec.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "kscore/k8s/k8s_subset.pb.h"
#include "shim/kube/json_text.h"

namespace kscore::kube {
namespace {

using nlohmann::json;
namespace k8s = ::kscore::k8s;

constexpr absl::string_view kMagic("k8s\0", 4);

json StatusJson(const k8s::Status& s) {
  json out = {{"kind", "Status"}, {"code", s.code()}};
  if (s.has_status()) out["status"] = s.status();
  if (s.has_message()) out["message"] = s.message();
  if (s.has_reason()) out["reason"] = s.reason();
  return out;
}

}  // namespace

bool IsProtobufEnvelope(absl::string_view body) {
  return body.substr(0, kMagic.size()) == kMagic;
}

std::string Wrap(absl::string_view raw, absl::string_view api_version,
                 absl::string_view kind) {
  k8s::Unknown u;
  u.mutable_type_meta()->set_api_version(std::string(api_version));
  u.mutable_type_meta()->set_kind(std::string(kind));
  u.set_raw(std::string(raw));
  std::string out(kMagic);
  u.AppendToString(&out);
  return out;
}

absl::StatusOr<std::string> Unwrap(absl::string_view body) {
  if (!IsProtobufEnvelope(body)) {
    return absl::InvalidArgumentError(
        "not a Kubernetes protobuf envelope (no k8s\\0 magic)");
  }
  k8s::Unknown unknown;
  if (absl::Status s =
          ParseMessage(body.substr(kMagic.size()), "envelope", &unknown);
      !s.ok())
    return s;
  if (!unknown.content_encoding().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "protobuf envelope with content encoding \"",
        unknown.content_encoding(), "\", which the shim does not read"));
  }
  return std::move(*unknown.mutable_raw());
}

absl::StatusOr<DecodedList> DecodeList(absl::string_view body) {
  KSCORE_ASSIGN_OR_RETURN(std::string raw, Unwrap(body));
  k8s::List list;
  KSCORE_RETURN_IF_ERROR(ParseMessage(raw, "list", &list));
  DecodedList out;
  out.resource_version = list.metadata().resource_version();
  out.continue_token = list.metadata().continue_();
  out.items.reserve(static_cast<size_t>(list.items_size()));
  for (std::string& item : *list.mutable_items()) {
    out.items.push_back(std::move(item));
  }
  return out;
}

absl::StatusOr<WatchEvent> DecodeWatchFrame(absl::string_view frame) {
  k8s::WatchEvent ev;
  KSCORE_RETURN_IF_ERROR(ParseMessage(frame, "watch event", &ev));
  KSCORE_ASSIGN_OR_RETURN(WatchEvent::Type type, WatchEventTypeOf(ev.type()));
  WatchEvent out;
  out.type = type;
  std::string* raw = ev.mutable_object()->mutable_raw();
  if (IsProtobufEnvelope(*raw)) {
    KSCORE_ASSIGN_OR_RETURN(*raw, Unwrap(*raw));
  }
  if (out.type == WatchEvent::Type::kError) {
    k8s::Status status;
    KSCORE_RETURN_IF_ERROR(ParseMessage(*raw, "Status", &status));
    out.object = StatusJson(status);
    return out;
  }
  out.protobuf = std::move(*raw);
  return out;
}

absl::StatusOr<std::string> ResourceVersionOf(absl::string_view raw) {
  k8s::ObjectHead head;
  KSCORE_RETURN_IF_ERROR(ParseMessage(raw, "object", &head));
  return std::move(*head.mutable_metadata()->mutable_resource_version());
}

std::string ErrorBodyText(absl::string_view body) {
  if (!IsProtobufEnvelope(body)) return std::string(body);
  absl::StatusOr<std::string> raw = Unwrap(body);
  k8s::Status status;
  if (!raw.ok() || !status.ParseFromString(*raw)) {
    return "(undecodable protobuf error body)";
  }
  return JsonText(StatusJson(status));
}

std::string ErrorMessage(absl::string_view body) {
  std::string text = ErrorBodyText(body);
  const json status = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (status.is_object()) {
    auto m = status.find("message");
    if (m != status.end() && m->is_string() && !m->get<std::string>().empty())
      return m->get<std::string>();
  }
  return text;
}

}  // namespace kscore::kube
