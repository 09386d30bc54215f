#include "shim/app/status_server.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
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

}  // namespace
}  // namespace kscore::app
