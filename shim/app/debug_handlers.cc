#include "shim/app/debug_handlers.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"
#include "shim/cache/objects.h"

namespace kscore::app {
namespace {

StatusServer::Reply Error(int code, const std::string& message) {
  return {code, nlohmann::json{{"error", message}}.dump()};
}

int Hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string Decode(absl::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size() && Hex(s[i + 1]) >= 0 &&
               Hex(s[i + 2]) >= 0) {
      out += static_cast<char>(Hex(s[i + 1]) * 16 + Hex(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

StatusServer::Reply Explain(scheduler::Scheduler* scheduler,
                            const StatusServer::Request& req) {
  if (req.method != "GET") return Error(405, "explain: use GET");
  std::string name = QueryValue(req.query, "name");
  std::string namespace_ = QueryValue(req.query, "namespace");
  if (name.empty()) {
    return Error(400, "query: name is required (?namespace=NS&name=POD)");
  }
  if (namespace_.empty()) namespace_ = "default";
  std::shared_ptr<const scheduler::Explanation> e =
      scheduler->decisions().Find(namespace_, name);
  if (e == nullptr) {
    return Error(
        404, absl::StrCat("no decision kept for pod ", namespace_, "/", name,
                          ": this scheduler has not tried to place it since "
                          "it started (is it the leader? is the pod's "
                          "schedulerName one of its profiles?), or it was "
                          "dropped (the last ",
                          scheduler->decisions().capacity(), " are kept)"));
  }
  return {200, scheduler::ExplanationJson(*e).dump()};
}

StatusServer::Reply WhatIf(scheduler::Scheduler* scheduler,
                           const StatusServer::Request& req) {
  if (req.method != "POST") {
    return Error(405, "what-if: POST a Pod as JSON");
  }
  nlohmann::json pod = nlohmann::json::parse(req.body, nullptr, false);
  if (pod.is_discarded() || !pod.is_object()) {
    return Error(400, "body: not a JSON object (want a Pod as JSON)");
  }
  if (pod.contains("kind") && pod["kind"] != "Pod") {
    return Error(400,
                 absl::StrCat("kind: ", pod["kind"].dump(), " is not a Pod"));
  }
  // A manifest often leaves out what the API server would fill in.
  nlohmann::json& meta = pod["metadata"];
  if (!meta.is_object()) meta = nlohmann::json::object();
  if (!meta.contains("namespace")) meta["namespace"] = "default";
  if (!meta.contains("name")) {
    meta["name"] = absl::StrCat(meta.value("generateName", ""), "what-if");
  }
  if (!meta.contains("uid")) meta["uid"] = "what-if";
  if (const nlohmann::json& spec = pod.value("spec", nlohmann::json());
      spec.is_object() && spec.value("nodeName", "") != "") {
    return Error(400, "spec.nodeName: set, so no scheduler places this pod");
  }
  absl::StatusOr<cache::PodInfo> info = cache::PodFromJson(pod);
  if (!info.ok()) {
    return Error(400, absl::StrCat("pod: ", info.status().message()));
  }
  if (info->scheduler_name.empty()) info->scheduler_name = "default-scheduler";
  absl::StatusOr<std::shared_ptr<const scheduler::Explanation>> e =
      scheduler->WhatIf(*info);
  if (!e.ok()) {
    return Error(absl::IsInvalidArgument(e.status()) ? 400 : 503,
                 std::string(e.status().message()));
  }
  return {200, scheduler::ExplanationJson(**e).dump()};
}

}  // namespace

std::string QueryValue(const std::string& query, const std::string& key) {
  for (absl::string_view part : absl::StrSplit(query, '&')) {
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(part, absl::MaxSplits('=', 1));
    if (Decode(kv.first) == key) return Decode(kv.second);
  }
  return "";
}

std::vector<std::pair<std::string, StatusServer::Endpoint>> DebugEndpoints(
    scheduler::Scheduler* scheduler) {
  return {
      {"/debug/kscore/explain",
       [scheduler](const StatusServer::Request& r) {
         return Explain(scheduler, r);
       }},
      {"/debug/kscore/what-if", [scheduler](const StatusServer::Request& r) {
         try {
           return WhatIf(scheduler, r);
         } catch (const nlohmann::json::exception& e) {
           // A field of the wrong type in the manifest.
           return Error(400, absl::StrCat("pod: ", e.what()));
         }
       }}};
}

}  // namespace kscore::app
