#include "shim/app/status_server.h"

#include <exception>
#include <utility>

#include "CivetServer.h"
#include "absl/strings/str_cat.h"

namespace kscore::app {
namespace {

constexpr char kText[] = "text/plain; version=0.0.4";
// As component-base/configz's handler.
constexpr char kJson[] = "application/json\r\nX-Content-Type-Options: nosniff";

// Answers GET with what `f` returns: an HTTP status and a body of
// `content_type` (with any further header lines).
class Route : public CivetHandler {
 public:
  Route(std::function<std::pair<int, std::string>()> f,
        const char* content_type)
      : f_(std::move(f)), content_type_(content_type) {}
  bool handleGet(CivetServer*, struct mg_connection* conn) override {
    auto [code, body] = f_();
    mg_printf(conn,
              "HTTP/1.1 %d %s\r\nContent-Type: %s\r\n"
              "Content-Length: %zu\r\nConnection: close\r\n\r\n",
              code, code == 200 ? "OK" : "Service Unavailable", content_type_,
              body.size());
    mg_write(conn, body.data(), body.size());
    return true;
  }

 private:
  std::function<std::pair<int, std::string>()> f_;
  const char* content_type_;
};

const char* StatusText(int code) {
  switch (code) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 413:
      return "Payload Too Large";
    case 503:
      return "Service Unavailable";
    default:
      return "Error";
  }
}

// An endpoint: GET and POST, with the query string and the body.
class EndpointRoute : public CivetHandler {
 public:
  explicit EndpointRoute(StatusServer::Endpoint f) : f_(std::move(f)) {}
  bool handleGet(CivetServer*, struct mg_connection* conn) override {
    return Answer(conn, "GET");
  }
  bool handlePost(CivetServer*, struct mg_connection* conn) override {
    return Answer(conn, "POST");
  }

 private:
  bool Answer(struct mg_connection* conn, const char* method) {
    StatusServer::Request req;
    req.method = method;
    const mg_request_info* info = mg_get_request_info(conn);
    if (info->query_string != nullptr) req.query = info->query_string;
    StatusServer::Reply reply;
    if (info->content_length > 0 && static_cast<size_t>(info->content_length) >
                                        StatusServer::kMaxBodyBytes) {
      reply = {413, absl::StrCat("{\"error\":\"request body over ",
                                 StatusServer::kMaxBodyBytes, " bytes\"}")};
    } else {
      char buf[8192];
      int n;
      while ((n = mg_read(conn, buf, sizeof(buf))) > 0 &&
             req.body.size() <= StatusServer::kMaxBodyBytes) {
        req.body.append(buf, static_cast<size_t>(n));
      }
      reply = req.body.size() > StatusServer::kMaxBodyBytes
                  ? StatusServer::Reply{413,
                                        "{\"error\":\"request body too "
                                        "large\"}"}
                  : f_(req);
    }
    mg_printf(conn,
              "HTTP/1.1 %d %s\r\nContent-Type: %s\r\n"
              "X-Content-Type-Options: nosniff\r\n"
              "Content-Length: %zu\r\nConnection: close\r\n\r\n",
              reply.code, StatusText(reply.code), reply.content_type.c_str(),
              reply.body.size());
    mg_write(conn, reply.body.data(), reply.body.size());
    return true;
  }

  StatusServer::Endpoint f_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<StatusServer>> StatusServer::Start(
    const std::string& bind_address, Handlers handlers) {
  std::unique_ptr<StatusServer> s(new StatusServer());
  s->handlers_ = std::move(handlers);
  try {
    s->server_ = std::make_unique<CivetServer>(std::vector<std::string>{
        "listening_ports", bind_address, "num_threads", "4"});
  } catch (const std::exception& e) {
    return absl::UnavailableError(absl::StrCat(
        "cannot serve on --bind-address ", bind_address, ": ", e.what()));
  }
  StatusServer* self = s.get();
  auto ok = [] { return std::make_pair(200, std::string("ok")); };
  auto add = [&](const char* path,
                 std::function<std::pair<int, std::string>()> f,
                 const char* content_type = kText) {
    s->routes_.push_back(std::make_unique<Route>(std::move(f), content_type));
    s->server_->addHandler(path, s->routes_.back().get());
  };
  add("/healthz", ok);
  add("/livez", ok);
  add("/readyz", [self] {
    std::string why = self->handlers_.not_ready();
    return why.empty() ? std::make_pair(200, std::string("ok"))
                       : std::make_pair(503, std::move(why));
  });
  add("/metrics",
      [self] { return std::make_pair(200, self->handlers_.metrics()); });
  if (!s->handlers_.configz.empty()) {
    add(
        "/configz",
        [self] { return std::make_pair(200, self->handlers_.configz); }, kJson);
  }
  for (auto& [path, endpoint] : s->handlers_.endpoints) {
    s->routes_.push_back(std::make_unique<EndpointRoute>(endpoint));
    s->server_->addHandler(path, s->routes_.back().get());
  }
  std::vector<int> ports = s->server_->getListeningPorts();
  s->port_ = ports.empty() ? 0 : ports.front();
  return s;
}

StatusServer::~StatusServer() {
  if (server_) server_->close();  // no handler runs after this
}

}  // namespace kscore::app
