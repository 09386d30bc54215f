#ifndef KSCORE_SHIM_APP_HTTP_SERVER_H_
#define KSCORE_SHIM_APP_HTTP_SERVER_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "shim/app/http.h"
#include "shim/app/serving_cert.h"

namespace kscore::app {

// How long and how many, for the status server's connections. The
// defaults are kube-apiserver's secure serving (ReadHeaderTimeout 32 s,
// IdleTimeout 90 s), plus what Go's server lacks: a cap per client address
// and bounded lanes for the handlers.
struct HttpLimits {
  // From accepting a connection (TLS handshake included), or from the end
  // of the previous answer, to the end of a request's header: a deadline,
  // not an idle timer, so a header sent a byte at a time is cut off too.
  absl::Duration read_header_timeout = absl::Seconds(32);
  // To read a request's body, and to write an answer.
  absl::Duration io_timeout = absl::Seconds(60);
  // Connections open at once from one client address; more are closed as
  // soon as they are accepted.
  int max_conns_per_address = 64;
  // Connections open at once from every address together; more are closed
  // as soon as they are accepted. 0: three quarters of the open-file
  // limit, so that clients never take the descriptors the scheduler needs
  // for the API server, the scorer and its own files.
  int max_conns = 0;
  size_t max_header_bytes = 64 << 10;  // 431 beyond
  // Threads that run the access check and the route, and requests that
  // may wait for one (503 beyond). Probes have a lane of their own.
  int workers = 4;
  int queue = 64;
};

// Runs one request after it is read: the access check, then the route.
// Gets the Authorization header ("" when none).
using HttpHandler = std::function<HttpReply(const HttpRequest& request,
                                            const std::string& authorization)>;

// HTTP/1.1 server on Boost.Asio + Beast: one I/O thread reads and writes
// every connection (TLS through OpenSSL), so a connection holds a socket
// and a few kilobytes, never a thread. Complete requests go to a lane: the
// probe paths to one thread of their own, every other path to `workers`
// threads; each lane's queue is bounded.
class HttpServer {
 public:
  HttpServer(HttpLimits limits, std::set<std::string> probe_paths);
  ~HttpServer();  // closes every connection; no handler runs afterwards
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds host:port (0: a free port) and serves `handler` there, over TLS
  // with `tls` when given. Returns the port; errors name `what`. Call
  // before Run.
  absl::StatusOr<int> Listen(const std::string& host, int port,
                             absl::string_view what, const CertKeyPem* tls,
                             HttpHandler handler);
  // Starts the I/O thread and the lanes.
  void Run();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kscore::app

#endif  // KSCORE_SHIM_APP_HTTP_SERVER_H_
