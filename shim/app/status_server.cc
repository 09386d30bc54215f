#include "shim/app/status_server.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "httplib.h"
#include "shim/app/serving_cert.h"
#include "spdlog/spdlog.h"

namespace kscore::app {
namespace {

// Probes, a scrape and a few more at once; an idle keep-alive connection
// holds a thread for at most kIdleSeconds.
constexpr int kThreads = 8;
constexpr int kIdleSeconds = 5;

HttpReply Text(int code, std::string body) {
  HttpReply r;
  r.code = code;
  r.body = std::move(body);
  return r;
}

void Write(const HttpReply& reply, httplib::Response& res) {
  res.status = reply.code;
  for (const auto& [name, value] : reply.headers) res.set_header(name, value);
  res.set_content(reply.body, reply.content_type);
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

// Binds `server` to host:port (0: a free one) and runs it on *thread; the
// port it listens on.
absl::StatusOr<int> Listen(httplib::Server& server, const std::string& host,
                           int port, absl::string_view what,
                           std::thread* thread) {
  errno = 0;
  const int bound = port == 0 ? server.bind_to_any_port(host)
                              : (server.bind_to_port(host, port) ? port : -1);
  if (bound <= 0) {
    const int err = errno;
    return absl::UnavailableError(
        absl::StrCat("cannot serve ", what, " on ", host, ":", port,
                     err != 0 ? absl::StrCat(": ", std::strerror(err)) : ""));
  }
  *thread = std::thread([&server] { server.listen_after_bind(); });
  // Until it runs, stop() would not reach it.
  const absl::Time deadline = absl::Now() + absl::Seconds(5);
  while (!server.is_running() && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  return bound;
}

}  // namespace

absl::StatusOr<std::unique_ptr<StatusServer>> StatusServer::Start(
    const Serving& serving, Handlers handlers, AccessCheck check) {
  std::unique_ptr<StatusServer> s(new StatusServer());
  s->handlers_ = std::move(handlers);
  StatusServer* self = s.get();
  auto ok = [](const HttpRequest&) { return Text(200, "ok"); };
  s->routes_["/healthz"] = ok;
  s->routes_["/livez"] = ok;
  s->routes_["/readyz"] = [self](const HttpRequest&) {
    std::string why = self->handlers_.not_ready();
    return why.empty() ? Text(200, "ok") : Text(503, std::move(why));
  };
  s->routes_["/metrics"] = [self](const HttpRequest&) {
    return Text(200, self->handlers_.metrics());
  };
  if (!s->handlers_.configz.empty()) {
    s->routes_["/configz"] = [self](const HttpRequest&) {
      // As component-base/configz's handler.
      return JsonReply(200, self->handlers_.configz);
    };
  }
  for (auto& [path, route] : s->handlers_.routes) {
    s->routes_.emplace(path, std::move(route));  // never over a built-in
  }

  // The same handler behind every path, after the access check (when
  // there is one), so a path added later is guarded as the others.
  auto setup = [self](httplib::Server& server, AccessCheck check) {
    server.new_task_queue = [] { return new httplib::ThreadPool(kThreads); };
    // Not SO_REUSEPORT (httplib's default): a second process on the same
    // port must fail, not share it.
    server.set_socket_options([](int fd) {
      int yes = 1;
      setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    });
    server.set_read_timeout(kIdleSeconds);
    server.set_write_timeout(kIdleSeconds);
    server.set_keep_alive_timeout(kIdleSeconds);
    // Bodies beyond it get httplib's 413 before any route runs.
    server.set_payload_max_length(kMaxBodyBytes);
    auto handle = [self, check](const httplib::Request& req,
                                httplib::Response& res) {
      if (check) {
        std::optional<HttpReply> refusal =
            check(req.path, absl::AsciiStrToLower(req.method),
                  req.get_header_value("Authorization"));
        if (refusal.has_value()) {
          Write(*refusal, res);
          return;
        }
      }
      HttpRequest r;
      r.method = req.method;
      r.path = req.path;
      for (const auto& [name, value] : req.params) r.query[name] = value;
      r.body = req.body;
      Write(self->Serve(r), res);
    };
    server.Get(".*", handle);
    server.Post(".*", handle);
  };

  if (serving.secure_port != 0) {
    CertKeyPem pair{serving.cert_pem, serving.key_pem};
    if (pair.cert.empty()) {
      absl::StatusOr<CertKeyPem> made = SelfSignedCert(absl::Now());
      if (!made.ok()) return made.status();
      pair = *std::move(made);
      spdlog::info(
          "serving HTTPS with a self-signed certificate for localhost (no "
          "--tls-cert-file)");
    }
    absl::Status tls = absl::OkStatus();
    s->secure_ =
        std::make_unique<httplib::SSLServer>([&pair, &tls](SSL_CTX& ctx) {
          tls = UseCertKey(pair, &ctx);
          return tls.ok();
        });
    if (!tls.ok()) return tls;
    if (!s->secure_->is_valid()) {
      return absl::InternalError("cannot set up TLS for the status server");
    }
    s->cert_pem_ = pair.cert;
    setup(*s->secure_, std::move(check));
    absl::StatusOr<int> port =
        Listen(*s->secure_, serving.bind_address, serving.secure_port,
               "HTTPS (--bind-address, --secure-port)", &s->secure_thread_);
    if (!port.ok()) return port.status();
    s->secure_port_ = *port;
  }
  if (!serving.insecure_address.empty()) {
    std::string host;
    int port = 0;
    if (absl::Status st = SplitHostPort(serving.insecure_address, &host, &port);
        !st.ok()) {
      return st;
    }
    s->insecure_ = std::make_unique<httplib::Server>();
    setup(*s->insecure_, nullptr);
    absl::StatusOr<int> bound =
        Listen(*s->insecure_, host, port,
               "plain HTTP (--insecure-serving-address)", &s->insecure_thread_);
    if (!bound.ok()) return bound.status();
    s->insecure_port_ = *bound;
  }
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
  // No handler runs once the threads are joined.
  for (auto* server : {secure_.get(), insecure_.get()}) {
    if (server != nullptr) server->stop();
  }
  if (secure_thread_.joinable()) secure_thread_.join();
  if (insecure_thread_.joinable()) insecure_thread_.join();
}

}  // namespace kscore::app
