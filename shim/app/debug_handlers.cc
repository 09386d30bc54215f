#include "shim/app/debug_handlers.h"

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "shim/objects/objects.h"

namespace kscore::app {
namespace {

HttpReply Error(int code, const std::string& message) {
  return JsonReply(code, nlohmann::json{{"error", message}}.dump());
}

// The value of `key` in the query; "" when absent.
std::string QueryValue(const HttpRequest& req, const std::string& key) {
  auto it = req.query.find(key);
  return it == req.query.end() ? "" : it->second;
}

HttpReply Explain(scheduler::Scheduler* scheduler, const HttpRequest& req) {
  if (req.method != "GET" && req.method != "HEAD")
    return Error(405, "explain: use GET");
  std::string name = QueryValue(req, "name");
  std::string namespace_ = QueryValue(req, "namespace");
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
  return JsonReply(200, scheduler::ExplanationJson(*e).dump());
}

HttpReply WhatIf(scheduler::Scheduler* scheduler, const HttpRequest& req) {
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
  absl::StatusOr<objects::PodInfo> info = objects::PodFromJson(pod);
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
  return JsonReply(200, scheduler::ExplanationJson(**e).dump());
}

}  // namespace

std::map<std::string, Route> DebugRoutes(scheduler::Scheduler* scheduler) {
  return {{"/debug/kscore/explain",
           [scheduler](const HttpRequest& r) { return Explain(scheduler, r); }},
          {"/debug/kscore/what-if", [scheduler](const HttpRequest& r) {
             try {
               return WhatIf(scheduler, r);
             } catch (const nlohmann::json::exception& e) {
               // A field of the wrong type in the manifest.
               return Error(400, absl::StrCat("pod: ", e.what()));
             }
           }}};
}

}  // namespace kscore::app
