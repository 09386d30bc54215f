#ifndef KSCORE_SHIM_APP_STATUS_SERVER_H_
#define KSCORE_SHIM_APP_STATUS_SERVER_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "shim/app/http.h"
#include "shim/app/http_server.h"

namespace kscore::app {

// Where the status server listens: as kube-scheduler's secure serving,
// HTTPS on bind_address:secure_port, every request through the access
// check; and, only when asked (local tests, benchmarks), the same paths over
// plain HTTP without any check.
struct Serving {
  std::string bind_address = "0.0.0.0";  // an IP
  int secure_port = 10259;               // 0: no HTTPS
  // PEM certificate chain and key; empty: a self-signed certificate for
  // localhost made at start (SelfSignedCert).
  std::string cert_pem;
  std::string key_pem;
  std::string insecure_address;  // "host:port" of plain HTTP; "": none
  HttpLimits limits = {};        // both listeners'
};

// Decides whether a request on the HTTPS listener is served: nullopt
// serves it, a reply refuses it. Gets the path, the lower-case method and
// the Authorization header ("" when none).
using AccessCheck = std::function<std::optional<HttpReply>(
    absl::string_view path, absl::string_view verb,
    absl::string_view authorization)>;

// The shim's status paths, as kube-scheduler's secure port serves them:
// /healthz and /livez (the process answers), /readyz (not_ready() says why
// not, or "" when ready), /metrics (metrics() runs at each scrape), /configz
// (the effective configuration as JSON, when configz is set), and any
// further path in `routes`. GET (and HEAD); POST too, with
// its body, for a route that takes one. Served as Go's net/http serves
// kube-scheduler's: a connection holds no thread, so slow or idle clients
// never starve a probe (HttpServer; Serving::limits).
class StatusServer {
 public:
  struct Handlers {
    std::function<std::string()> not_ready;  // "" when ready
    std::function<std::string()> metrics;    // the text exposition format
    std::string configz;  // /configz's JSON body; "" serves no /configz
    std::map<std::string, Route> routes = {};  // further paths, exact
  };

  // Listens as `serving` says; `check` guards the HTTPS listener (an empty
  // one lets every request through).
  static absl::StatusOr<std::unique_ptr<StatusServer>> Start(
      const Serving& serving, Handlers handlers, AccessCheck check);
  ~StatusServer();

  int secure_port() const { return secure_port_; }      // 0: none
  int insecure_port() const { return insecure_port_; }  // 0: none
  // The PEM certificate the HTTPS listener presents.
  const std::string& cert_pem() const { return cert_pem_; }

 private:
  StatusServer() = default;
  void AddRoutes();
  HttpHandler Handler(AccessCheck check) const;
  HttpReply Serve(const HttpRequest& request) const;

  Handlers handlers_;
  std::map<std::string, Route> routes_;
  int secure_port_ = 0;
  int insecure_port_ = 0;
  std::string cert_pem_;
  // Last: its threads run the routes above, so it goes first.
  std::unique_ptr<HttpServer> server_;
};

}  // namespace kscore::app

#endif  // KSCORE_SHIM_APP_STATUS_SERVER_H_
