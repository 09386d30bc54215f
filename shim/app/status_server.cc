#include "shim/app/status_server.h"

#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "shim/app/serving_cert.h"
#include "spdlog/spdlog.h"

namespace kscore::app {
namespace {

HttpReply Text(int code, std::string body) {
  HttpReply r;
  r.code = code;
  r.body = std::move(body);
  return r;
}

// "host:port" (IPv6 as "[::1]:port") into its parts.
absl::Status SplitHostPort(const std::string& address, std::string* host,
                           int* port) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0 ||
      !absl::SimpleAtoi(address.substr(colon + 1), port) || *port < 0 ||
      *port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--insecure-serving-address: \"", address, "\" is not host:port"));
  }
  *host = address.substr(0, colon);
  if (host->size() > 2 && host->front() == '[' && host->back() == ']') {
    *host = host->substr(1, host->size() - 2);
  }
  return absl::OkStatus();
}

// The given certificate and key, or a self-signed pair for localhost.
absl::StatusOr<CertKeyPem> ServingPair(const Serving& serving) {
  if (!serving.cert_pem.empty()) {
    return CertKeyPem{serving.cert_pem, serving.key_pem};
  }
  KSCORE_ASSIGN_OR_RETURN(CertKeyPem made, SelfSignedCert(absl::Now()));
  spdlog::info(
      "serving HTTPS with a self-signed certificate for localhost (no "
      "--tls-cert-file)");
  return made;
}

}  // namespace

// The kube-scheduler paths, then the further ones (never over a built-in).
void StatusServer::AddRoutes() {
  auto ok = [](const HttpRequest&) { return Text(200, "ok"); };
  routes_["/healthz"] = ok;
  routes_["/livez"] = ok;
  routes_["/readyz"] = [this](const HttpRequest&) {
    std::string why = handlers_.not_ready();
    return why.empty() ? Text(200, "ok") : Text(503, std::move(why));
  };
  routes_["/metrics"] = [this](const HttpRequest&) {
    return Text(200, handlers_.metrics());
  };
  if (!handlers_.configz.empty()) {
    routes_["/configz"] = [this](const HttpRequest&) {
      // As component-base/configz's handler.
      return JsonReply(200, handlers_.configz);
    };
  }
  for (auto& [path, route] : handlers_.routes) {
    routes_.emplace(path, std::move(route));
  }
}

// The same handler behind every path, after the access check (when there
// is one), so a path added later is guarded as the others.
HttpHandler StatusServer::Handler(AccessCheck check) const {
  return [this, check = std::move(check)](const HttpRequest& request,
                                          const std::string& authorization) {
    if (check) {
      std::optional<HttpReply> refusal = check(
          request.path, absl::AsciiStrToLower(request.method), authorization);
      if (refusal.has_value()) return *std::move(refusal);
    }
    return Serve(request);
  };
}

absl::StatusOr<std::unique_ptr<StatusServer>> StatusServer::Start(
    const Serving& serving, Handlers handlers, AccessCheck check) {
  std::unique_ptr<StatusServer> s(new StatusServer());
  s->handlers_ = std::move(handlers);
  s->AddRoutes();
  // Probes get a lane of their own: a slow route never delays them.
  s->server_ = std::make_unique<HttpServer>(
      serving.limits, std::set<std::string>{"/healthz", "/livez", "/readyz"});
  if (serving.secure_port != 0) {
    KSCORE_ASSIGN_OR_RETURN(CertKeyPem pair, ServingPair(serving));
    KSCORE_ASSIGN_OR_RETURN(
        s->secure_port_,
        s->server_->Listen(serving.bind_address, serving.secure_port,
                           "HTTPS (--bind-address, --secure-port)", &pair,
                           s->Handler(std::move(check))));
    s->cert_pem_ = pair.cert;
  }
  if (!serving.insecure_address.empty()) {
    std::string host;
    int port = 0;
    KSCORE_RETURN_IF_ERROR(
        SplitHostPort(serving.insecure_address, &host, &port));
    KSCORE_ASSIGN_OR_RETURN(
        s->insecure_port_,
        s->server_->Listen(host, port,
                           "plain HTTP (--insecure-serving-address)", nullptr,
                           s->Handler(nullptr)));
  }
  s->server_->Run();
  return s;
}

HttpReply StatusServer::Serve(const HttpRequest& request) const {
  auto it = routes_.find(request.path);
  if (it == routes_.end()) {
    // Go's http.NotFound, as kube-scheduler's mux answers.
    HttpReply r = Text(404, "404 page not found\n");
    r.content_type = "text/plain; charset=utf-8";
    r.headers = {{"X-Content-Type-Options", "nosniff"}};
    return r;
  }
  return it->second(request);
}

StatusServer::~StatusServer() {
  // Joins the server's threads first: no handler runs afterwards.
  server_.reset();
}

}  // namespace kscore::app
