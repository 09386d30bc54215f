#ifndef KSCORE_SHIM_APP_STATUS_SERVER_H_
#define KSCORE_SHIM_APP_STATUS_SERVER_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

class CivetServer;
class CivetHandler;

namespace kscore::app {

// Plain HTTP for probes and Prometheus, as kube-scheduler's secure port
// serves them: /healthz and /livez (the process answers), /readyz (ready()
// says why not, or "" when ready), /metrics (metrics() runs at each scrape),
// /configz (the effective configuration as JSON, when configz is set), and
// any further endpoints (the debug paths of kubectl kscore).
class StatusServer {
 public:
  // A request to an endpoint: GET, or POST with a body (at most
  // kMaxBodyBytes).
  struct Request {
    std::string method;
    std::string query;  // after '?', undecoded
    std::string body;
  };
  struct Reply {
    int code = 200;
    std::string body = {};
    std::string content_type = "application/json";
  };
  using Endpoint = std::function<Reply(const Request&)>;
  static constexpr size_t kMaxBodyBytes = 1 << 20;

  struct Handlers {
    std::function<std::string()> not_ready;  // "" when ready
    std::function<std::string()> metrics;    // the text exposition format
    std::string configz;  // /configz's JSON body; "" serves no /configz
    // Path -> endpoint.
    std::vector<std::pair<std::string, Endpoint>> endpoints = {};
  };

  // Listens on `bind_address` ("host:port"; port 0 picks a free one).
  static absl::StatusOr<std::unique_ptr<StatusServer>> Start(
      const std::string& bind_address, Handlers handlers);
  ~StatusServer();

  int port() const { return port_; }

 private:
  StatusServer() = default;

  Handlers handlers_;
  std::unique_ptr<CivetServer> server_;
  std::vector<std::unique_ptr<CivetHandler>> routes_;
  int port_ = 0;
};

}  // namespace kscore::app

#endif  // KSCORE_SHIM_APP_STATUS_SERVER_H_
