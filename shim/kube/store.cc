#include "shim/kube/store.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "shim/kube/json_parse.h"

namespace kscore::kube {
namespace {

std::string Field(const nlohmann::json& obj, const char* field) {
  const auto meta = obj.find("metadata");
  if (meta == obj.end() || !meta->is_object()) return "";
  const auto it = meta->find(field);
  return it != meta->end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

absl::StatusOr<WatchEvent::Type> WatchEventTypeOf(absl::string_view t) {
  if (t == "ADDED") return WatchEvent::Type::kAdded;
  if (t == "MODIFIED") return WatchEvent::Type::kModified;
  if (t == "DELETED") return WatchEvent::Type::kDeleted;
  if (t == "BOOKMARK") return WatchEvent::Type::kBookmark;
  if (t == "ERROR") return WatchEvent::Type::kError;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown watch event type \"", t, "\""));
}

absl::StatusOr<WatchEvent> ParseWatchEvent(absl::string_view line) {
  absl::StatusOr<nlohmann::json> parsed = ParseJson(line);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "watch event: ", parsed.status().message().substr(0, 200)));
  }
  nlohmann::json& j = *parsed;
  if (!j.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "watch event is not a JSON object: ", line.substr(0, 200)));
  }
  const auto type = j.find("type");
  const auto object = j.find("object");
  if (type == j.end() || !type->is_string() || object == j.end() ||
      !object->is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "watch event without type or object: ", line.substr(0, 200)));
  }
  KSCORE_ASSIGN_OR_RETURN(WatchEvent::Type t,
                          WatchEventTypeOf(type->get<std::string>()));
  WatchEvent event;
  event.type = t;
  event.object = std::move(*object);
  return event;
}

Identity JsonIdentity(const nlohmann::json& obj) {
  return {KeyOf(Field(obj, "namespace"), Field(obj, "name")), Field(obj, "uid"),
          Field(obj, "resourceVersion")};
}

ObjectCodec<nlohmann::json> JsonCodec() {
  ObjectCodec<nlohmann::json> codec;
  codec.from_json =
      [](const nlohmann::json& obj) -> absl::StatusOr<nlohmann::json> {
    return obj;
  };
  codec.identity = JsonIdentity;
  return codec;
}

}  // namespace kscore::kube
