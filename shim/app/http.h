#ifndef KSCORE_SHIM_APP_HTTP_H_
#define KSCORE_SHIM_APP_HTTP_H_

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace kscore::app {

// A request to the status server, as its routes see it: GET (or HEAD),
// or POST with a body of at most kMaxBodyBytes.
struct HttpRequest {
  std::string method = "GET";
  std::string path;                          // decoded, without the query
  std::map<std::string, std::string> query;  // the last value of each name
  std::string body = {};
};
inline constexpr size_t kMaxBodyBytes = 1 << 20;

// What a route (or the access check in front of it) answers.
struct HttpReply {
  int code = 200;
  std::string content_type = "text/plain; version=0.0.4";  // Prometheus's
  std::vector<std::pair<std::string, std::string>> headers = {};  // further
  std::string body;
};

// A JSON answer as the API server and component-base write one:
// application/json, X-Content-Type-Options: nosniff.
inline HttpReply JsonReply(int code, std::string body) {
  HttpReply r;
  r.code = code;
  r.content_type = "application/json";
  r.headers = {{"X-Content-Type-Options", "nosniff"}};
  r.body = std::move(body);
  return r;
}

// One path's handler. It runs on one of the server's worker threads, never
// on the thread that reads and writes the connections, so it may take long.
using Route = std::function<HttpReply(const HttpRequest&)>;

}  // namespace kscore::app

#endif  // KSCORE_SHIM_APP_HTTP_H_
