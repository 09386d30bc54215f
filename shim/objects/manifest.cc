#include "shim/objects/manifest.h"

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "shim/kube/json_parse.h"

namespace kscore::objects {
namespace {

using nlohmann::json;

absl::Status Invalid(absl::string_view message) {
  return absl::InvalidArgumentError(message);
}

// A string field of `obj`, or "" when absent or of another type (the
// decoder names a wrong type).
std::string StringAt(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "";
}

absl::Status CheckKind(const json& pod) {
  auto kind = pod.find("kind");
  if (kind == pod.end() || kind->is_null()) return absl::OkStatus();
  if (!kind->is_string()) return Invalid("kind: expected a string");
  if (*kind != "Pod") {
    return Invalid(absl::StrCat("kind: \"", kind->get_ref<const std::string&>(),
                                "\" is not a Pod"));
  }
  return absl::OkStatus();
}

// What the API server fills in of a manifest's metadata.
absl::Status DefaultMetadata(json& pod) {
  json& meta = pod["metadata"];
  if (meta.is_null()) meta = json::object();
  if (!meta.is_object()) return Invalid("metadata: expected an object");
  if (!meta.contains("namespace")) meta["namespace"] = "default";
  if (!meta.contains("name")) {
    meta["name"] = absl::StrCat(StringAt(meta, "generateName"), "what-if");
  }
  if (!meta.contains("uid")) meta["uid"] = "what-if";
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<PodInfo> PodFromManifest(absl::string_view text) {
  absl::StatusOr<json> parsed = kube::ParseJson(text);
  if (!parsed.ok()) {
    return Invalid(absl::StrCat("body: ", parsed.status().message()));
  }
  json& pod = *parsed;
  if (!pod.is_object()) {
    return Invalid("body: not a JSON object (want a Pod as JSON)");
  }
  KSCORE_RETURN_IF_ERROR(CheckKind(pod));
  KSCORE_RETURN_IF_ERROR(DefaultMetadata(pod));
  absl::StatusOr<PodInfo> info = PodFromJson(pod);
  if (!info.ok()) {
    return Invalid(absl::StrCat("pod: ", info.status().message()));
  }
  if (!info->node_name.empty()) {
    return Invalid("spec.nodeName: set, so no scheduler places this pod");
  }
  if (info->scheduler_name.empty()) info->scheduler_name = "default-scheduler";
  return info;
}

}  // namespace kscore::objects
