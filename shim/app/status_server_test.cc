#include "shim/app/status_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "shim/app/serving_cert.h"

namespace kscore::app {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

StatusServer::Handlers Basic() {
  StatusServer::Handlers h;
  h.not_ready = [] { return std::string(); };
  h.metrics = [] { return std::string("m 1\n"); };
  return h;
}

// Plain HTTP only, on a free port.
Serving Plain() {
  Serving s;
  s.secure_port = 0;
  s.insecure_address = "127.0.0.1:0";
  return s;
}

// A port of 127.0.0.1 that nothing listens on now (--secure-port 0 turns
// HTTPS off rather than picking one).
int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

// HTTPS only, on 127.0.0.1.
Serving Secure(int port) {
  Serving s;
  s.bind_address = "127.0.0.1";
  s.secure_port = port;
  return s;
}

absl::StatusOr<std::unique_ptr<StatusServer>> StartSecure(
    StatusServer::Handlers h, AccessCheck check, std::string cert = "",
    std::string key = "") {
  Serving s = Secure(FreePort());
  s.cert_pem = std::move(cert);
  s.key_pem = std::move(key);
  return StatusServer::Start(s, std::move(h), std::move(check));
}

httplib::Result Get(int port, const std::string& path,
                    const std::string& token = "") {
  httplib::Client c("127.0.0.1", port);
  c.set_connection_timeout(5);
  c.set_read_timeout(5);
  if (!token.empty()) c.set_bearer_token_auth(token.c_str());
  return c.Get(path.c_str());
}

httplib::Result GetTls(int port, const std::string& path,
                       const std::string& token = "") {
  httplib::SSLClient c("127.0.0.1", port);
  c.enable_server_certificate_verification(false);
  c.set_connection_timeout(5);
  c.set_read_timeout(5);
  if (!token.empty()) c.set_bearer_token_auth(token.c_str());
  return c.Get(path.c_str());
}

// A client socket the test drives byte by byte, as a slow client would:
// plain TCP or TLS (OpenSSL, blocking), from a chosen 127.x source address.
class RawClient {
 public:
  // nullptr when the TCP connection (or the TLS handshake) fails.
  static std::unique_ptr<RawClient> Open(int port, bool tls,
                                         const char* from = "127.0.0.1") {
    auto c = std::unique_ptr<RawClient>(new RawClient());
    c->fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in src{};
    src.sin_family = AF_INET;
    inet_pton(AF_INET, from, &src.sin_addr);
    sockaddr_in dst{};
    dst.sin_family = AF_INET;
    dst.sin_port = htons(port);
    dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    timeval tv{5, 0};
    setsockopt(c->fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    if (bind(c->fd_, reinterpret_cast<sockaddr*>(&src), sizeof(src)) != 0 ||
        connect(c->fd_, reinterpret_cast<sockaddr*>(&dst), sizeof(dst)) != 0) {
      return nullptr;
    }
    if (tls) {
      c->ctx_ = SSL_CTX_new(TLS_client_method());
      c->ssl_ = SSL_new(c->ctx_);
      SSL_set_fd(c->ssl_, c->fd_);
      if (SSL_connect(c->ssl_) != 1) return nullptr;
    }
    return c;
  }
  ~RawClient() {
    if (ssl_ != nullptr) SSL_free(ssl_);
    if (ctx_ != nullptr) SSL_CTX_free(ctx_);
    close(fd_);
  }

  bool Send(const std::string& bytes) {
    if (ssl_ != nullptr) {
      return SSL_write(ssl_, bytes.data(), static_cast<int>(bytes.size())) > 0;
    }
    return send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
           static_cast<ssize_t>(bytes.size());
  }
  // What the server sends until it closes the connection or `within`
  // passes; nullopt when it is still open then.
  std::optional<std::string> ReadUntilClosed(absl::Duration within) {
    const absl::Time deadline = absl::Now() + within;
    std::string got;
    while (true) {
      const int left =
          static_cast<int>(absl::ToInt64Milliseconds(deadline - absl::Now()));
      if (left <= 0) return std::nullopt;
      pollfd p{fd_, POLLIN, 0};
      if ((ssl_ == nullptr || SSL_pending(ssl_) == 0) &&
          poll(&p, 1, left) == 0) {
        continue;
      }
      char buf[4096];
      const int n = ssl_ != nullptr
                        ? SSL_read(ssl_, buf, sizeof(buf))
                        : static_cast<int>(recv(fd_, buf, sizeof(buf), 0));
      if (n <= 0) return got;
      got.append(buf, n);
    }
  }
  // The first answer's status line, read until `within` passes.
  std::string StatusLine(absl::Duration within) {
    const absl::Time deadline = absl::Now() + within;
    std::string got;
    while (got.find("\r\n") == std::string::npos && absl::Now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      if ((ssl_ == nullptr || SSL_pending(ssl_) == 0) && poll(&p, 1, 50) == 0) {
        continue;
      }
      char buf[4096];
      const int n = ssl_ != nullptr
                        ? SSL_read(ssl_, buf, sizeof(buf))
                        : static_cast<int>(recv(fd_, buf, sizeof(buf), 0));
      if (n <= 0) break;
      got.append(buf, n);
    }
    return got.substr(0, got.find("\r\n"));
  }

 private:
  RawClient() = default;
  int fd_ = -1;
  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
};

constexpr char kHalfHeader[] = "GET /healthz HTTP/1.1\r\nHost: localhost\r\n";

TEST(StatusServerTest, ProbesAndMetricsReadWhenAsked) {
  std::atomic<bool> ready{false};
  std::atomic<int> scrapes{0};
  StatusServer::Handlers h;
  h.not_ready = [&]() -> std::string {
    return ready ? "" : "informers not synced";
  };
  h.metrics = [&] { return absl::StrCat("scrapes ", ++scrapes, "\n"); };
  auto server = StatusServer::Start(Plain(), h, nullptr);
  ASSERT_TRUE(server.ok()) << server.status();
  const int port = (*server)->insecure_port();
  ASSERT_GT(port, 0);
  EXPECT_EQ((*server)->secure_port(), 0);

  EXPECT_EQ(Get(port, "/healthz")->status, 200);
  EXPECT_EQ(Get(port, "/livez")->body, "ok");
  auto readyz = Get(port, "/readyz");
  EXPECT_EQ(readyz->status, 503);
  EXPECT_EQ(readyz->body, "informers not synced");
  ready = true;
  EXPECT_EQ(Get(port, "/readyz")->status, 200);
  auto m = Get(port, "/metrics");
  EXPECT_EQ(m->body, "scrapes 1\n");
  EXPECT_EQ(m->get_header_value("Content-Type"), "text/plain; version=0.0.4");
  EXPECT_EQ(Get(port, "/metrics")->body, "scrapes 2\n");
  auto missing = Get(port, "/nothing");
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(missing->body, "404 page not found\n");
}

TEST(StatusServerTest, ABusyAddressIsAClearError) {
  auto first = StatusServer::Start(Plain(), Basic(), nullptr);
  ASSERT_TRUE(first.ok());
  Serving again = Plain();
  again.insecure_address =
      absl::StrCat("127.0.0.1:", (*first)->insecure_port());
  auto second = StatusServer::Start(again, Basic(), nullptr);
  ASSERT_FALSE(second.ok());
  EXPECT_THAT(second.status().message(),
              HasSubstr("cannot serve plain HTTP (--insecure-serving-address) "
                        "on " +
                        again.insecure_address));

  auto https = StartSecure(Basic(), nullptr);
  ASSERT_TRUE(https.ok()) << https.status();
  Serving busy = Secure((*https)->secure_port());
  auto clash = StatusServer::Start(busy, Basic(), nullptr);
  ASSERT_FALSE(clash.ok());
  EXPECT_THAT(clash.status().message(),
              HasSubstr(absl::StrCat(
                  "cannot serve HTTPS (--bind-address, --secure-port) on "
                  "127.0.0.1:",
                  busy.secure_port)));
}

TEST(StatusServerTest, ConfigzIsJsonWhenGiven) {
  auto without = StatusServer::Start(Plain(), Basic(), nullptr);
  ASSERT_TRUE(without.ok());
  EXPECT_EQ(Get((*without)->insecure_port(), "/configz")->status, 404);

  StatusServer::Handlers h = Basic();
  h.configz = R"({"componentconfig":{}})";
  auto server = StatusServer::Start(Plain(), h, nullptr);
  ASSERT_TRUE(server.ok());
  auto got = Get((*server)->insecure_port(), "/configz");
  EXPECT_EQ(got->status, 200);
  // component-base/configz's headers.
  EXPECT_EQ(got->get_header_value("Content-Type"), "application/json");
  EXPECT_EQ(got->get_header_value("X-Content-Type-Options"), "nosniff");
  EXPECT_EQ(got->body, R"({"componentconfig":{}})");
}

TEST(StatusServerTest, FurtherRoutesGetTheQuery) {
  StatusServer::Handlers h = Basic();
  h.routes["/debug/echo"] = [](const HttpRequest& r) {
    HttpReply reply;
    reply.body =
        r.path + " pod=" + (r.query.count("pod") ? r.query.at("pod") : "");
    return reply;
  };
  h.routes["/metrics"] = [](const HttpRequest&) { return HttpReply{}; };
  auto server = StatusServer::Start(Plain(), h, nullptr);
  ASSERT_TRUE(server.ok());
  EXPECT_EQ(Get((*server)->insecure_port(), "/debug/echo?pod=ns%2Fp")->body,
            "/debug/echo pod=ns/p");
  // A further route never replaces a built-in one.
  EXPECT_EQ(Get((*server)->insecure_port(), "/metrics")->body, "m 1\n");
}

// A route sees the method and a POST's body; the check sees the verb as
// Kubernetes' non-resource authorization does ("post"); a body over
// kMaxBodyBytes is refused before any route runs.
TEST(StatusServerTest, RoutesSeeMethodAndBody) {
  StatusServer::Handlers h = Basic();
  std::atomic<int> calls{0};
  h.routes["/debug/echo"] = [&calls](const HttpRequest& r) {
    ++calls;
    HttpReply reply;
    reply.code = r.body == "bad" ? 400 : 200;
    reply.content_type = "application/json";
    reply.body = absl::StrCat(r.method, " ", r.body);
    return reply;
  };
  std::vector<std::string> verbs;
  std::mutex mu;
  AccessCheck check = [&](absl::string_view, absl::string_view verb,
                          absl::string_view) -> std::optional<HttpReply> {
    std::lock_guard<std::mutex> lock(mu);
    verbs.emplace_back(verb);
    return std::nullopt;
  };
  auto server = StartSecure(h, check);
  ASSERT_TRUE(server.ok()) << server.status();
  httplib::SSLClient c("127.0.0.1", (*server)->secure_port());
  c.enable_server_certificate_verification(false);
  auto got = c.Post("/debug/echo", R"({"kind":"Pod"})", "application/json");
  ASSERT_TRUE(got);
  EXPECT_EQ(got->status, 200);
  EXPECT_EQ(got->body, R"(POST {"kind":"Pod"})");
  EXPECT_EQ(got->get_header_value("Content-Type"), "application/json");
  EXPECT_EQ(c.Post("/debug/echo", "bad", "text/plain")->status, 400);
  EXPECT_EQ(c.Get("/debug/echo")->body, "GET ");
  const int before = calls.load();
  auto big =
      c.Post("/debug/echo", std::string(kMaxBodyBytes + 1, 'x'), "text/plain");
  ASSERT_TRUE(big);
  EXPECT_EQ(big->status, 413);
  EXPECT_EQ(calls.load(), before);
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_THAT(verbs, ::testing::Contains("post"));
  EXPECT_THAT(verbs, ::testing::Contains("get"));
}

TEST(StatusServerTest, HttpsAsksTheCheckForEveryPathPlainNever) {
  std::vector<std::string> asked;
  std::mutex mu;
  AccessCheck check =
      [&](absl::string_view path, absl::string_view verb,
          absl::string_view authorization) -> std::optional<HttpReply> {
    std::lock_guard<std::mutex> lock(mu);
    asked.push_back(absl::StrCat(verb, " ", path, " [", authorization, "]"));
    if (path == "/healthz" || authorization == "Bearer yes") {
      return std::nullopt;
    }
    HttpReply no;
    no.code = 401;
    no.content_type = "application/json";
    no.body = "{}";
    return no;
  };
  StatusServer::Handlers h = Basic();
  h.routes["/debug/x"] = [](const HttpRequest&) { return HttpReply{}; };
  auto server = StartSecure(h, check);
  ASSERT_TRUE(server.ok()) << server.status();
  const int port = (*server)->secure_port();
  EXPECT_EQ(GetTls(port, "/healthz")->status, 200);
  EXPECT_EQ(GetTls(port, "/metrics")->status, 401);
  EXPECT_EQ(GetTls(port, "/debug/x")->status, 401);
  EXPECT_EQ(GetTls(port, "/nothing")->status, 401);  // checked before 404
  auto m = GetTls(port, "/metrics", "yes");
  EXPECT_EQ(m->status, 200);
  EXPECT_EQ(m->body, "m 1\n");
  EXPECT_THAT(asked,
              ::testing::ElementsAre("get /healthz []", "get /metrics []",
                                     "get /debug/x []", "get /nothing []",
                                     "get /metrics [Bearer yes]"));
  // No plain HTTP on the HTTPS port.
  EXPECT_FALSE(Get(port, "/healthz") && Get(port, "/healthz")->status == 200);
}

TEST(StatusServerTest, SelfSignedUnlessACertificateIsGiven) {
  auto self = StartSecure(Basic(), nullptr);
  ASSERT_TRUE(self.ok()) << self.status();
  EXPECT_THAT(CertSubject((*self)->cert_pem()), StartsWith("CN=localhost@"));
  EXPECT_EQ(GetTls((*self)->secure_port(), "/healthz")->status, 200);

  absl::StatusOr<CertKeyPem> given = SelfSignedCert(absl::FromUnixSeconds(42));
  ASSERT_TRUE(given.ok());
  auto server = StartSecure(Basic(), nullptr, given->cert, given->key);
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_EQ((*server)->cert_pem(), given->cert);
  EXPECT_EQ(GetTls((*server)->secure_port(), "/healthz")->status, 200);

  auto bad = StartSecure(Basic(), nullptr, given->cert, "no key");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("serving certificate"));
}

// A client that does not finish its header (or its TLS handshake) within
// read_header_timeout is cut off, even while it keeps sending, as Go's
// ReadHeaderTimeout does.
TEST(StatusServerTest, ReadHeaderTimeoutCutsSlowClients) {
  struct Case {
    const char* name;
    bool tls;
    bool handshake;  // else the TCP connection only
    bool dribble;    // a header byte every 100 ms
  };
  const Case cases[] = {
      {"no TLS handshake", true, false, false},
      {"half a header over TLS", true, true, false},
      {"a header dribbled over TLS", true, true, true},
      {"half a header over plain HTTP", false, true, false},
  };
  Serving serving = Secure(FreePort());
  serving.insecure_address = "127.0.0.1:0";
  serving.limits.read_header_timeout = absl::Milliseconds(500);
  auto server = StatusServer::Start(serving, Basic(), nullptr);
  ASSERT_TRUE(server.ok()) << server.status();
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const int port =
        c.tls ? (*server)->secure_port() : (*server)->insecure_port();
    const absl::Time start = absl::Now();
    auto client = RawClient::Open(port, c.tls && c.handshake);
    ASSERT_NE(client, nullptr);
    if (c.handshake) {
      ASSERT_TRUE(client->Send(kHalfHeader));
    }
    bool closed = false;
    while (!closed && absl::Now() < start + absl::Seconds(3)) {
      if (c.dribble && !client->Send("X")) break;
      closed = client->ReadUntilClosed(absl::Milliseconds(100)).has_value();
    }
    const absl::Duration took = absl::Now() - start;
    EXPECT_LT(took, absl::Seconds(3)) << "still open";
    EXPECT_GE(took, absl::Milliseconds(400));
  }
}

// Whether a request over TLS from `from` is answered 200 within 3 s, tried
// again while the server has not yet seen a connection just closed go.
bool ServedAgain(int port, const char* from = "127.0.0.1") {
  const absl::Time deadline = absl::Now() + absl::Seconds(3);
  while (absl::Now() < deadline) {
    auto again = RawClient::Open(port, true, from);
    if (again != nullptr && again->Send(absl::StrCat(kHalfHeader, "\r\n")) &&
        again->StatusLine(absl::Seconds(1)) == "HTTP/1.1 200 OK") {
      return true;
    }
  }
  return false;
}

// More than max_conns_per_address connections from one address are closed
// at once; other addresses are served meanwhile, and a freed slot is
// usable again.
TEST(StatusServerTest, LimitsConnectionsPerAddress) {
  Serving serving = Secure(FreePort());
  serving.limits.max_conns_per_address = 3;
  auto server = StatusServer::Start(serving, Basic(), nullptr);
  ASSERT_TRUE(server.ok()) << server.status();
  const int port = (*server)->secure_port();
  std::vector<std::unique_ptr<RawClient>> held;
  for (int i = 0; i < 3; ++i) {
    held.push_back(RawClient::Open(port, true));
    ASSERT_NE(held.back(), nullptr);
    ASSERT_TRUE(held.back()->Send(kHalfHeader));
  }
  // The fourth gets no TLS handshake: the server closes it.
  auto fourth = RawClient::Open(port, false);
  ASSERT_NE(fourth, nullptr);
  EXPECT_TRUE(fourth->ReadUntilClosed(absl::Seconds(2)).has_value());

  auto other = RawClient::Open(port, true, "127.0.0.2");
  ASSERT_NE(other, nullptr);
  ASSERT_TRUE(other->Send(absl::StrCat(kHalfHeader, "\r\n")));
  EXPECT_EQ(other->StatusLine(absl::Seconds(2)), "HTTP/1.1 200 OK");

  held.pop_back();
  EXPECT_TRUE(ServedAgain(port));
}

// Beyond max_conns connections in all, whatever their addresses, a new one
// is closed at once; a freed slot is usable again.
TEST(StatusServerTest, LimitsConnectionsInAll) {
  Serving serving = Secure(FreePort());
  serving.limits.max_conns = 3;
  auto server = StatusServer::Start(serving, Basic(), nullptr);
  ASSERT_TRUE(server.ok()) << server.status();
  const int port = (*server)->secure_port();
  std::vector<std::unique_ptr<RawClient>> held;
  for (int i = 0; i < 3; ++i) {
    const std::string from = absl::StrCat("127.0.2.", i + 1);
    held.push_back(RawClient::Open(port, true, from.c_str()));
    ASSERT_NE(held.back(), nullptr);
    ASSERT_TRUE(held.back()->Send(kHalfHeader));
  }
  auto fourth = RawClient::Open(port, false, "127.0.2.9");
  ASSERT_NE(fourth, nullptr);
  EXPECT_TRUE(fourth->ReadUntilClosed(absl::Seconds(2)).has_value());

  held.pop_back();
  EXPECT_TRUE(ServedAgain(port, "127.0.2.9"));
}

// Slow clients hold no thread: with many of them connected (TLS done,
// header unfinished), probes over TLS still answer at once.
TEST(StatusServerTest, ProbesAnswerWhileSlowClientsAreHeld) {
  auto server = StartSecure(Basic(), nullptr);
  ASSERT_TRUE(server.ok()) << server.status();
  const int port = (*server)->secure_port();
  std::vector<std::unique_ptr<RawClient>> slow;
  for (int i = 0; i < 100; ++i) {
    const std::string from = absl::StrCat("127.0.1.", i % 5 + 1);
    slow.push_back(RawClient::Open(port, true, from.c_str()));
    ASSERT_NE(slow.back(), nullptr) << i;
    ASSERT_TRUE(slow.back()->Send(kHalfHeader));
  }
  for (const char* path : {"/healthz", "/livez", "/readyz"}) {
    const absl::Time start = absl::Now();
    auto got = GetTls(port, path);
    ASSERT_TRUE(got) << path;
    EXPECT_EQ(got->status, 200);
    EXPECT_LT(absl::Now() - start, absl::Seconds(1)) << path;
  }
}

// Routes that take long run on worker threads with a bounded queue: probes
// answer meanwhile, and a request beyond the queue gets 503 at once.
TEST(StatusServerTest, SlowRoutesNeverDelayProbes) {
  absl::Notification release;
  std::atomic<int> started{0};
  StatusServer::Handlers h = Basic();
  h.routes["/debug/slow"] = [&](const HttpRequest&) {
    ++started;
    release.WaitForNotification();
    return HttpReply{};
  };
  Serving serving = Plain();
  serving.limits.workers = 2;
  serving.limits.queue = 8;
  auto server = StatusServer::Start(serving, h, nullptr);
  ASSERT_TRUE(server.ok()) << server.status();
  // Before the server stops, whatever the test's outcome.
  absl::Cleanup unblock = [&] {
    if (!release.HasBeenNotified()) release.Notify();
  };
  const int port = (*server)->insecure_port();
  std::vector<std::unique_ptr<RawClient>> slow;
  auto ask_slow = [&] {
    slow.push_back(RawClient::Open(port, false));
    return slow.back() != nullptr &&
           slow.back()->Send(
               "GET /debug/slow HTTP/1.1\r\nHost: localhost\r\n\r\n");
  };
  // 2 running, then 8 waiting.
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(ask_slow());
  const absl::Time deadline = absl::Now() + absl::Seconds(3);
  while (started.load() < 2 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  ASSERT_EQ(started.load(), 2);
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(ask_slow());
  const absl::Time start = absl::Now();
  auto probe = Get(port, "/healthz");
  ASSERT_TRUE(probe);
  EXPECT_EQ(probe->status, 200);
  EXPECT_LT(absl::Now() - start, absl::Seconds(1));
  // The queue is full: refused at once, not queued behind the others.
  auto refused = RawClient::Open(port, false);
  ASSERT_NE(refused, nullptr);
  ASSERT_TRUE(
      refused->Send("GET /debug/slow HTTP/1.1\r\nHost: localhost\r\n\r\n"));
  EXPECT_EQ(refused->StatusLine(absl::Seconds(1)),
            "HTTP/1.1 503 Service Unavailable");
  release.Notify();
  for (auto& c : slow)
    EXPECT_EQ(c->StatusLine(absl::Seconds(3)), "HTTP/1.1 200 OK");
}

// A POST without Content-Length (nor a chunked body) has an empty body, as
// in Go's server: the route answers at once instead of the server waiting
// for a body until a timeout.
TEST(StatusServerTest, PostWithoutContentLengthIsAnsweredAtOnce) {
  StatusServer::Handlers h = Basic();
  h.routes["/debug/echo"] = [](const HttpRequest& r) {
    HttpReply reply;
    reply.code = r.body.empty() ? 400 : 200;
    reply.body = absl::StrCat(r.method, " [", r.body, "]");
    return reply;
  };
  auto server = StartSecure(h, nullptr);
  ASSERT_TRUE(server.ok()) << server.status();
  auto client = RawClient::Open((*server)->secure_port(), true);
  ASSERT_NE(client, nullptr);
  const absl::Time start = absl::Now();
  ASSERT_TRUE(
      client->Send("POST /debug/echo HTTP/1.1\r\nHost: localhost\r\n\r\n"));
  EXPECT_EQ(client->StatusLine(absl::Seconds(3)), "HTTP/1.1 400 Bad Request");
  EXPECT_LT(absl::Now() - start, absl::Seconds(1));
}

}  // namespace
}  // namespace kscore::app
