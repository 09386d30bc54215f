#include "shim/app/debug_handlers.h"

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "shim/kube/json_text.h"
#include "shim/objects/manifest.h"

namespace kscore::app {
namespace {

// The message may hold bytes of the query that are not UTF-8: JsonText
// replaces them rather than throw.
HttpReply Error(int code, const std::string& message) {
  return JsonReply(code, kube::JsonText(nlohmann::json{{"error", message}}));
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
  return JsonReply(200, kube::JsonText(scheduler::ExplanationJson(*e)));
}

HttpReply WhatIf(scheduler::Scheduler* scheduler, const HttpRequest& req) {
  if (req.method != "POST") {
    return Error(405, "what-if: POST a Pod as JSON");
  }
  absl::StatusOr<objects::PodInfo> info = objects::PodFromManifest(req.body);
  if (!info.ok()) return Error(400, std::string(info.status().message()));
  absl::StatusOr<std::shared_ptr<const scheduler::Explanation>> e =
      scheduler->WhatIf(*info);
  if (!e.ok()) {
    return Error(absl::IsInvalidArgument(e.status()) ? 400 : 503,
                 std::string(e.status().message()));
  }
  return JsonReply(200, kube::JsonText(scheduler::ExplanationJson(**e)));
}

}  // namespace

std::map<std::string, Route> DebugRoutes(scheduler::Scheduler* scheduler) {
  return {{"/debug/kscore/explain",
           [scheduler](const HttpRequest& r) { return Explain(scheduler, r); }},
          {"/debug/kscore/what-if",
           [scheduler](const HttpRequest& r) { return WhatIf(scheduler, r); }}};
}

}  // namespace kscore::app
