#include "shim/app/http_server.h"

#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <deque>
#include <exception>
#include <limits>
#include <map>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "common/status_macros.h"
#include "spdlog/spdlog.h"

namespace kscore::app {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

// After an answer that ends a connection with input still unread (400, 413,
// 431), the input is read and dropped for this long, at most kLingerBytes,
// so closing does not reset the connection before the client reads it.
constexpr absl::Duration kLinger = absl::Seconds(1);
constexpr size_t kLingerBytes = 4 * kMaxBodyBytes;

// A fixed set of threads running tasks from a bounded queue.
class Lane {
 public:
  Lane(int threads, int capacity) : capacity_(capacity) {
    for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Loop(); });
  }
  ~Lane() { Stop(); }

  // False (the task dropped, unrun) when the queue is full or stopped.
  bool TryPost(std::function<void()> task) {
    absl::MutexLock lock(&mu_);
    if (stopping_ || tasks_.size() >= capacity_) return false;
    tasks_.push_back(std::move(task));
    return true;
  }
  // Waits for the running tasks; runs no queued one.
  void Stop() {
    std::deque<std::function<void()>> dropped;
    {
      absl::MutexLock lock(&mu_);
      stopping_ = true;
    }
    for (std::thread& t : threads_) {
      if (t.joinable()) t.join();
    }
    absl::MutexLock lock(&mu_);
    dropped.swap(tasks_);
  }

 private:
  void Loop() {
    while (true) {
      std::function<void()> task;
      {
        absl::MutexLock lock(&mu_);
        mu_.Await(absl::Condition(
            +[](Lane* l) ABSL_EXCLUSIVE_LOCKS_REQUIRED(l->mu_) {
              return l->stopping_ || !l->tasks_.empty();
            },
            this));
        if (stopping_) return;
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      task();
    }
  }

  const size_t capacity_;
  absl::Mutex mu_;
  std::deque<std::function<void()>> tasks_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

// Three quarters of the open-file limit (soft), at least 64.
int DefaultMaxConns() {
  rlimit nofile{};
  if (getrlimit(RLIMIT_NOFILE, &nofile) != 0 ||
      nofile.rlim_cur == RLIM_INFINITY) {
    return std::numeric_limits<int>::max();
  }
  const rlim_t quarters = nofile.rlim_cur / 4 * 3;
  return static_cast<int>(std::clamp<rlim_t>(
      quarters, 64, static_cast<rlim_t>(std::numeric_limits<int>::max())));
}

// What one listener serves; its sessions share it.
struct Endpoint {
  HttpHandler handler;
  std::unique_ptr<asio::ssl::context> tls;  // null: plain HTTP
};

struct Listener {
  explicit Listener(asio::io_context& ioc) : acceptor(ioc), retry(ioc) {}
  tcp::acceptor acceptor;
  asio::steady_timer retry;  // after an accept error (out of descriptors)
  std::shared_ptr<Endpoint> endpoint;
};

// The server's state. Everything but the lanes is the I/O thread's alone.
struct Core {
  Core(HttpLimits l, std::set<std::string> p)
      : limits(l),
        max_conns(l.max_conns > 0 ? l.max_conns : DefaultMaxConns()),
        probe_paths(std::move(p)),
        probes(1, l.queue),
        workers(l.workers, l.queue) {}

  void Accept(Listener* l);
  void Admit(const Listener& l, tcp::socket socket);

  const HttpLimits limits;
  const int max_conns;  // limits.max_conns, or its default
  const std::set<std::string> probe_paths;
  std::map<asio::ip::address, int> conns;  // open connections per address
  int open = 0;                            // open connections in all
  // Destroyed after the listeners and lanes, before `conns`: its
  // destruction ends the sessions still open.
  asio::io_context ioc{1};
  std::vector<std::unique_ptr<Listener>> listeners;
  Lane probes;
  Lane workers;
  std::thread io;
};

std::chrono::nanoseconds Chrono(absl::Duration d) {
  return absl::ToChronoNanoseconds(d);
}

int HexDigit(char c) {
  return absl::ascii_isdigit(c) ? c - '0' : absl::ascii_tolower(c) - 'a' + 10;
}

// %XX escapes (and "+" as a space in a query) decoded.
std::string Unescape(absl::string_view s, bool plus_is_space) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && absl::ascii_isxdigit(s[i + 1]) &&
        absl::ascii_isxdigit(s[i + 2])) {
      out.push_back(
          static_cast<char>(HexDigit(s[i + 1]) * 16 + HexDigit(s[i + 2])));
      i += 2;
    } else {
      out.push_back(plus_is_space && s[i] == '+' ? ' ' : s[i]);
    }
  }
  return out;
}

// The route's view of a parsed request; moves the body out.
HttpRequest ToHttpRequest(http::request<http::string_body>& req) {
  HttpRequest r;
  r.method = std::string(req.method_string());
  const absl::string_view target(req.target().data(), req.target().size());
  const size_t q = target.find('?');
  r.path = Unescape(target.substr(0, q), false);
  if (q != absl::string_view::npos) {
    for (absl::string_view pair :
         absl::StrSplit(target.substr(q + 1), '&', absl::SkipEmpty())) {
      const size_t eq = pair.find('=');
      r.query[Unescape(pair.substr(0, eq), true)] =
          eq == absl::string_view::npos ? ""
                                        : Unescape(pair.substr(eq + 1), true);
    }
  }
  r.body = std::move(req.body());
  return r;
}

HttpReply Refusal(int code, std::string body) {
  HttpReply r;
  r.code = code;
  r.content_type = "text/plain; charset=utf-8";
  r.body = std::move(body);
  return r;
}

// A parse error (Go's server answers 400) rather than the peer going away.
bool IsMalformed(const beast::error_code& ec) {
  return ec.category() ==
             http::make_error_code(http::error::bad_target).category() &&
         ec != http::error::end_of_stream && ec != http::error::partial_message;
}

// One connection: read a request (header under the read-header deadline),
// hand it to a lane, write the answer, and again while it is kept alive.
template <typename Stream>
class Session : public std::enable_shared_from_this<Session<Stream>> {
 public:
  static constexpr bool kTls = !std::is_same_v<Stream, beast::tcp_stream>;

  Session(Core* core, std::shared_ptr<Endpoint> endpoint, Stream stream,
          asio::ip::address peer)
      : core_(core),
        endpoint_(std::move(endpoint)),
        stream_(std::move(stream)),
        peer_(std::move(peer)) {
    ++core_->conns[peer_];
    ++core_->open;
  }
  ~Session() {
    --core_->open;
    auto it = core_->conns.find(peer_);
    if (it != core_->conns.end() && --it->second <= 0) core_->conns.erase(it);
  }

  void Start() {
    Tcp().expires_after(Chrono(core_->limits.read_header_timeout));
    if constexpr (kTls) {
      stream_.async_handshake(
          asio::ssl::stream_base::server,
          [self = this->shared_from_this()](beast::error_code ec) {
            if (ec) return self->Close();
            self->ReadHeader();
          });
    } else {
      ReadHeader();
    }
  }

 private:
  beast::tcp_stream& Tcp() { return beast::get_lowest_layer(stream_); }

  // The deadline is already set: from accepting, or from the last answer.
  void ReadHeader() {
    parser_.emplace();
    parser_->header_limit(
        static_cast<uint32_t>(core_->limits.max_header_bytes));
    parser_->body_limit(kMaxBodyBytes);
    http::async_read_header(
        stream_, buffer_, *parser_,
        [self = this->shared_from_this()](beast::error_code ec, size_t) {
          self->OnHeader(ec);
        });
  }

  void OnHeader(beast::error_code ec) {
    if (ec == http::error::header_limit) {
      return Refuse(431, "431 Request Header Fields Too Large");
    }
    if (ec == http::error::body_limit) {
      return Refuse(413, "413 Request Entity Too Large");
    }
    if (IsMalformed(ec)) return Refuse(400, "400 Bad Request");
    if (ec) return Close();  // gone, or too slow
    auto& req = parser_->get();
    if (req.method() != http::verb::get && req.method() != http::verb::head &&
        req.method() != http::verb::post) {
      return Refuse(405, "405 Method Not Allowed");
    }
    // A request without Content-Length or a chunked body has none.
    if (parser_->is_done()) return Dispatch();
    Tcp().expires_after(Chrono(core_->limits.io_timeout));
    if (absl::EqualsIgnoreCase(std::string(req[http::field::expect]),
                               "100-continue")) {
      auto cont = std::make_shared<http::response<http::empty_body>>(
          http::status::continue_, req.version());
      http::async_write(stream_, *cont,
                        [self = this->shared_from_this(), cont](
                            beast::error_code ec, size_t) {
                          if (ec) return self->Close();
                          self->ReadBody();
                        });
      return;
    }
    ReadBody();
  }

  void ReadBody() {
    http::async_read(
        stream_, buffer_, *parser_,
        [self = this->shared_from_this()](beast::error_code ec, size_t) {
          if (ec == http::error::body_limit) {
            return self->Refuse(413, "413 Request Entity Too Large");
          }
          if (IsMalformed(ec)) return self->Refuse(400, "400 Bad Request");
          if (ec) return self->Close();
          self->Dispatch();
        });
  }

  // Runs the handler on a lane; its answer comes back to the I/O thread.
  void Dispatch() {
    Tcp().expires_never();
    auto& req = parser_->get();
    keep_alive_ = req.keep_alive();
    head_ = req.method() == http::verb::head;
    version_ = req.version();
    HttpRequest request = ToHttpRequest(req);
    std::string authorization(req[http::field::authorization]);
    Lane& lane = core_->probe_paths.count(request.path) > 0 ? core_->probes
                                                            : core_->workers;
    auto task = [self = this->shared_from_this(), request = std::move(request),
                 authorization = std::move(authorization)]() mutable {
      HttpReply reply;
      try {
        reply = self->endpoint_->handler(request, authorization);
      } catch (const std::exception& e) {
        spdlog::error("status server: {} {}: {}", request.method, request.path,
                      e.what());
        reply = Refusal(500, "500 Internal Server Error");
      }
      asio::io_context& ioc = self->core_->ioc;
      // The session moves along: its last reference never drops here.
      asio::post(ioc,
                 [self = std::move(self), reply = std::move(reply)]() mutable {
                   self->Write(std::move(reply));
                 });
    };
    if (!lane.TryPost(std::move(task))) {
      HttpReply busy = Refusal(503, "too many requests in flight\n");
      busy.headers = {{"Retry-After", "1"}};
      Write(std::move(busy));
    }
  }

  void Write(HttpReply reply) {
    auto res = std::make_shared<http::response<http::string_body>>();
    res->version(version_);
    res->result(static_cast<unsigned>(reply.code));
    res->set(http::field::content_type, reply.content_type);
    for (const auto& [name, value] : reply.headers) res->insert(name, value);
    res->keep_alive(keep_alive_);
    const size_t size = reply.body.size();
    if (!head_) res->body() = std::move(reply.body);
    res->content_length(size);
    Tcp().expires_after(Chrono(core_->limits.io_timeout));
    http::async_write(
        stream_, *res,
        [self = this->shared_from_this(), res](beast::error_code ec, size_t) {
          if (ec) return self->Close();
          if (self->linger_) return self->Linger(0);
          if (!self->keep_alive_) return self->Close();
          self->Tcp().expires_after(
              Chrono(self->core_->limits.read_header_timeout));
          self->ReadHeader();
        });
  }

  // An answer that ends the connection before its input was read.
  void Refuse(int code, std::string body) {
    keep_alive_ = false;
    linger_ = true;
    head_ = false;
    Write(Refusal(code, std::move(body) + "\n"));
  }

  // Sends FIN, then drops what the client still sends (raw bytes, TLS or
  // not) until it closes, for kLinger at most.
  void Linger(size_t dropped) {
    if (dropped == 0) {
      beast::error_code ignored;
      Tcp().socket().shutdown(tcp::socket::shutdown_send, ignored);
      Tcp().expires_after(Chrono(kLinger));
      drain_ = std::make_unique<std::array<char, 16384>>();
    }
    if (dropped > kLingerBytes) return Close();
    Tcp().async_read_some(asio::buffer(*drain_),
                          [self = this->shared_from_this(), dropped](
                              beast::error_code ec, size_t n) {
                            if (ec) return self->Close();
                            self->Linger(dropped + n);
                          });
  }

  void Close() {
    beast::error_code ignored;
    Tcp().socket().shutdown(tcp::socket::shutdown_both, ignored);
    Tcp().close();
  }

  Core* core_;
  std::shared_ptr<Endpoint> endpoint_;
  Stream stream_;
  asio::ip::address peer_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  bool keep_alive_ = false;
  bool head_ = false;
  bool linger_ = false;
  unsigned version_ = 11;
  std::unique_ptr<std::array<char, 16384>> drain_;  // while lingering
};

void Core::Accept(Listener* l) {
  l->acceptor.async_accept([this, l](beast::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted) return;
    if (ec) {
      // Out of descriptors, say: wait instead of spinning.
      l->retry.expires_after(std::chrono::milliseconds(100));
      l->retry.async_wait([this, l](beast::error_code e) {
        if (!e) Accept(l);
      });
      return;
    }
    Admit(*l, std::move(socket));
    Accept(l);
  });
}

// Starts a session, unless the server or the client's address has its
// fill of them.
void Core::Admit(const Listener& l, tcp::socket socket) {
  beast::error_code ec;
  const tcp::endpoint peer = socket.remote_endpoint(ec);
  if (ec) return;
  auto it = conns.find(peer.address());
  if (open >= max_conns ||
      (it != conns.end() && it->second >= limits.max_conns_per_address)) {
    socket.close(ec);
    return;
  }
  socket.set_option(tcp::no_delay(true), ec);
  if (l.endpoint->tls != nullptr) {
    using TlsStream = beast::ssl_stream<beast::tcp_stream>;
    std::make_shared<Session<TlsStream>>(
        this, l.endpoint,
        TlsStream(beast::tcp_stream(std::move(socket)), *l.endpoint->tls),
        peer.address())
        ->Start();
  } else {
    std::make_shared<Session<beast::tcp_stream>>(
        this, l.endpoint, beast::tcp_stream(std::move(socket)), peer.address())
        ->Start();
  }
}

}  // namespace

struct HttpServer::Impl : Core {
  using Core::Core;
};

HttpServer::HttpServer(HttpLimits limits, std::set<std::string> probe_paths)
    : impl_(std::make_unique<Impl>(limits, std::move(probe_paths))) {}

HttpServer::~HttpServer() {
  impl_->ioc.stop();
  if (impl_->io.joinable()) impl_->io.join();
  impl_->probes.Stop();
  impl_->workers.Stop();
}

absl::StatusOr<int> HttpServer::Listen(const std::string& host, int port,
                                       absl::string_view what,
                                       const CertKeyPem* tls,
                                       HttpHandler handler) {
  auto endpoint = std::make_shared<Endpoint>();
  endpoint->handler = std::move(handler);
  if (tls != nullptr) {
    endpoint->tls =
        std::make_unique<asio::ssl::context>(asio::ssl::context::tls_server);
    KSCORE_RETURN_IF_ERROR(UseCertKey(*tls, endpoint->tls->native_handle()));
    // An idle connection keeps no read or write buffer.
    SSL_CTX_set_mode(endpoint->tls->native_handle(), SSL_MODE_RELEASE_BUFFERS);
  }
  auto l = std::make_unique<Listener>(impl_->ioc);
  l->endpoint = std::move(endpoint);
  beast::error_code ec;
  tcp::resolver resolver(impl_->ioc);
  auto found =
      resolver.resolve(host, std::to_string(port), tcp::resolver::passive, ec);
  if (!ec && found.empty()) ec = asio::error::host_not_found;
  if (!ec) {
    const tcp::endpoint at = found.begin()->endpoint();
    // SO_REUSEADDR, not SO_REUSEPORT: a second process on the same port
    // must fail, not share it.
    l->acceptor.open(at.protocol(), ec);
    if (!ec) l->acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) l->acceptor.bind(at, ec);
    if (!ec) l->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  }
  if (ec) {
    return absl::UnavailableError(absl::StrCat(
        "cannot serve ", what, " on ", host, ":", port, ": ", ec.message()));
  }
  const int bound = l->acceptor.local_endpoint(ec).port();
  impl_->listeners.push_back(std::move(l));
  return bound;
}

void HttpServer::Run() {
  for (auto& l : impl_->listeners) impl_->Accept(l.get());
  impl_->io = std::thread([core = impl_.get()] { core->ioc.run(); });
}

}  // namespace kscore::app
