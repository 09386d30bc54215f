#ifndef KSCORE_SHIM_KUBE_CLIENT_H_
#define KSCORE_SHIM_KUBE_CLIENT_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace kscore::kube {

// How to reach and authenticate to the API server.
struct RestConfig {
  std::string server;           // https://host:port
  std::string ca_pem;           // empty: system roots
  std::string client_cert_pem;  // client certificate auth
  std::string client_key_pem;
  std::string bearer_token;  // token auth
  std::string token_file;    // re-read when it changes (projected tokens)
  bool insecure_skip_tls_verify = false;
  double qps = 50;  // client-side rate limit (clientConnection.qps)
  int burst = 100;  // clientConnection.burst
  std::string user_agent = "kscore-shim";
};

// Loads a kubeconfig file (current context unless `context` is given):
// server, certificate-authority(-data), client-certificate(-data),
// client-key(-data), token / tokenFile, insecure-skip-tls-verify.
absl::StatusOr<RestConfig> LoadKubeconfig(const std::string& path,
                                          const std::string& context = "");

// Where a pod finds its service account's token and CA.
inline constexpr char kServiceAccountDir[] =
    "/var/run/secrets/kubernetes.io/serviceaccount";

// The in-cluster configuration: KUBERNETES_SERVICE_HOST/PORT, the service
// account token and CA under kServiceAccountDir (the directory can be
// overridden for tests).
absl::StatusOr<RestConfig> InClusterConfig(
    const std::string& sa_dir = kServiceAccountDir);

// kube-scheduler's precedence: --kubeconfig flag, then
// clientConnection.kubeconfig, then in-cluster (token and CA from sa_dir).
absl::StatusOr<RestConfig> ResolveConfig(
    const std::string& flag_kubeconfig, const std::string& config_kubeconfig,
    const std::string& sa_dir = kServiceAccountDir);

struct Response {
  long status = 0;  // HTTP status
  std::string body;
};

// A small, thread-safe Kubernetes REST client over libcurl (HTTP/2 when the
// server offers it). Requests are rate limited by qps/burst. Network errors
// are Unavailable; HTTP error statuses are returned as a Response, not an
// error, so callers can tell 404/409/410 apart.
class Client {
 public:
  virtual ~Client() = default;

  // method: GET, POST, PUT, PATCH, DELETE. path starts with "/", e.g.
  // "/api/v1/namespaces/default/pods/p/binding". content_type for PATCH e.g.
  // "application/merge-patch+json" or "application/strategic-merge-patch+json".
  virtual absl::StatusOr<Response> Do(
      absl::string_view method, absl::string_view path,
      absl::string_view body = "",
      absl::string_view content_type = "application/json") = 0;

  // A streaming GET (watch): calls on_line with each newline-delimited JSON
  // object as it arrives. Returns OK when the server ends the stream (or
  // on_line returns false, or *stop becomes true, checked at least every
  // 100ms), the HTTP status as an error when it is not 200 (message carries
  // the body), Unavailable on network errors.
  virtual absl::Status Stream(
      absl::string_view path,
      const std::function<bool(absl::string_view line)>& on_line,
      const std::atomic<bool>* stop) = 0;

  // Do with an Accept header other than JSON, e.g. kProtobufOrJson. The
  // default, for fakes, is a plain Do.
  virtual absl::StatusOr<Response> DoAs(absl::string_view method,
                                        absl::string_view path,
                                        absl::string_view body,
                                        absl::string_view content_type,
                                        absl::string_view accept) {
    (void)accept;
    return Do(method, path, body, content_type);
  }
  absl::StatusOr<Response> GetAs(absl::string_view path,
                                 absl::string_view accept) {
    return DoAs("GET", path, "", "application/json", accept);
  }

  // Starts a request and returns at once; `done` gets its outcome (as DoAs
  // would return it) on the client's I/O thread, so it must not block. All
  // such requests share a few HTTP/2 connections, many streams each, driven
  // by that one thread: a request in flight costs no thread of its own.
  // The default, for fakes, runs DoAs on the caller's thread.
  using Done = std::function<void(absl::StatusOr<Response>)>;
  virtual void DoAsync(absl::string_view method, absl::string_view path,
                       std::string body, absl::string_view content_type,
                       absl::string_view accept, Done done) {
    done(DoAs(method, path, body, content_type, accept));
  }

  // Like Stream, for a stream of length-delimited frames (a 4-byte
  // big-endian length, then the frame: the protobuf watch). on_frame gets
  // each whole frame. Error bodies in protobuf are given as text.
  virtual absl::Status StreamFrames(
      absl::string_view path, absl::string_view accept,
      const std::function<bool(absl::string_view frame)>& on_frame,
      const std::atomic<bool>* stop) {
    (void)path;
    (void)accept;
    (void)on_frame;
    (void)stop;
    return absl::UnimplementedError("this client has no framed streams");
  }

  // Do with a total timeout other than Do's 30s (leader election bounds its
  // calls by the renew deadline). The default ignores the timeout, so fakes
  // only need Do.
  virtual absl::StatusOr<Response> DoWithTimeout(absl::string_view method,
                                                 absl::string_view path,
                                                 absl::string_view body,
                                                 absl::string_view content_type,
                                                 absl::Duration timeout) {
    (void)timeout;
    return Do(method, path, body, content_type);
  }

  // Called (on whichever thread saw it) when the API server answers again
  // after a request could not reach it: the shim sends its unanswered
  // bindings again then. Set once, before the first request.
  virtual void SetOnReachable(std::function<void()> on_reachable) {
    (void)on_reachable;
  }

  // TCP connections opened by Do so far (each one a TLS handshake for the
  // API server too): stays near the peak number of concurrent callers when
  // connections are reused.
  virtual uint64_t ConnectionsOpened() const { return 0; }
};

absl::StatusOr<std::unique_ptr<Client>> NewClient(const RestConfig& config);

// An HTTP error status as an absl::Status (404 NotFound, 409 Aborted, 410
// OutOfRange, 5xx Unavailable, ...) carrying the exact status as a payload.
absl::Status HttpError(long status, absl::string_view body);
// The HTTP status carried by a HttpError, 0 for any other status.
long HttpStatusOf(const absl::Status& status);

// Percent-encodes a query parameter value.
std::string QueryEscape(absl::string_view value);

}  // namespace kscore::kube

#endif  // KSCORE_SHIM_KUBE_CLIENT_H_
