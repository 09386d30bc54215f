#include "shim/app/status_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kscore::app {
namespace {

// GET path (or POST `body` to it) on 127.0.0.1:port; the whole answer
// (status line, headers, body).
std::string Get(int port, const std::string& path,
                const std::string* body = nullptr) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return "connect failed";
  }
  const std::string req =
      body == nullptr
          ? absl::StrCat("GET ", path,
                         " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
          : absl::StrCat("POST ", path,
                         " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                         "Content-Length: ",
                         body->size(), "\r\n\r\n", *body);
  if (write(fd, req.data(), req.size()) < 0) {
    close(fd);
    return "write failed";
  }
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0) out.append(buf, n);
  close(fd);
  return out;
}

TEST(StatusServerTest, ProbesAndMetricsReadWhenAsked) {
  std::atomic<bool> ready{false};
  std::atomic<int> scrapes{0};
  StatusServer::Handlers h;
  h.not_ready = [&]() -> std::string {
    return ready ? "" : "informers not synced";
  };
  h.metrics = [&] { return absl::StrCat("scrapes ", ++scrapes, "\n"); };
  auto server = StatusServer::Start("127.0.0.1:0", h);
  ASSERT_TRUE(server.ok()) << server.status();
  const int port = (*server)->port();
  ASSERT_GT(port, 0);

  EXPECT_THAT(Get(port, "/healthz"), ::testing::StartsWith("HTTP/1.1 200"));
  EXPECT_THAT(Get(port, "/livez"), ::testing::StartsWith("HTTP/1.1 200"));
  std::string readyz = Get(port, "/readyz");
  EXPECT_THAT(readyz, ::testing::StartsWith("HTTP/1.1 503"));
  EXPECT_THAT(readyz, ::testing::EndsWith("informers not synced"));
  ready = true;
  EXPECT_THAT(Get(port, "/readyz"), ::testing::StartsWith("HTTP/1.1 200"));
  EXPECT_THAT(Get(port, "/metrics"), ::testing::EndsWith("scrapes 1\n"));
  EXPECT_THAT(Get(port, "/metrics"), ::testing::EndsWith("scrapes 2\n"));
}

TEST(StatusServerTest, ABusyAddressIsAClearError) {
  StatusServer::Handlers h;
  h.not_ready = [] { return std::string(); };
  h.metrics = [] { return std::string(); };
  auto first = StatusServer::Start("127.0.0.1:0", h);
  ASSERT_TRUE(first.ok());
  const std::string addr = absl::StrCat("127.0.0.1:", (*first)->port());
  auto second = StatusServer::Start(addr, h);
  ASSERT_FALSE(second.ok());
  EXPECT_THAT(second.status().message(),
              ::testing::HasSubstr("cannot serve on --bind-address " + addr));
}

TEST(StatusServerTest, ConfigzIsJsonWhenGiven) {
  StatusServer::Handlers h;
  h.not_ready = [] { return std::string(); };
  h.metrics = [] { return std::string(); };
  auto without = StatusServer::Start("127.0.0.1:0", h);
  ASSERT_TRUE(without.ok());
  EXPECT_THAT(Get((*without)->port(), "/configz"),
              ::testing::StartsWith("HTTP/1.1 404"));

  h.configz = R"({"componentconfig":{}})";
  auto server = StatusServer::Start("127.0.0.1:0", h);
  ASSERT_TRUE(server.ok());
  const std::string got = Get((*server)->port(), "/configz");
  EXPECT_THAT(got, ::testing::StartsWith("HTTP/1.1 200"));
  // component-base/configz's headers.
  EXPECT_THAT(got, ::testing::HasSubstr("Content-Type: application/json\r\n"));
  EXPECT_THAT(got, ::testing::HasSubstr("X-Content-Type-Options: nosniff\r\n"));
  EXPECT_THAT(got, ::testing::EndsWith(R"({"componentconfig":{}})"));
}

// Endpoints get the method, the query and the body, and answer with their
// own status and content type.
TEST(StatusServerTest, EndpointsSeeQueryAndBody) {
  StatusServer::Handlers h;
  h.not_ready = [] { return std::string(); };
  h.metrics = [] { return std::string(); };
  h.endpoints.push_back(
      {"/debug/echo", [](const StatusServer::Request& r) {
         return StatusServer::Reply{
             r.body == "bad" ? 400 : 200,
             absl::StrCat(r.method, " ", r.query, " ", r.body)};
       }});
  auto server = StatusServer::Start("127.0.0.1:0", h);
  ASSERT_TRUE(server.ok());
  const int port = (*server)->port();
  std::string got = Get(port, "/debug/echo?name=a%2Fb&namespace=x");
  EXPECT_THAT(got, ::testing::StartsWith("HTTP/1.1 200"));
  EXPECT_THAT(got, ::testing::HasSubstr("Content-Type: application/json\r\n"));
  EXPECT_THAT(got, ::testing::EndsWith("GET name=a%2Fb&namespace=x "));
  const std::string body = R"({"kind":"Pod"})";
  EXPECT_THAT(Get(port, "/debug/echo", &body),
              ::testing::EndsWith(R"(POST  {"kind":"Pod"})"));
  const std::string bad = "bad";
  EXPECT_THAT(Get(port, "/debug/echo", &bad),
              ::testing::StartsWith("HTTP/1.1 400 Bad Request"));
}

}  // namespace
}  // namespace kscore::app
