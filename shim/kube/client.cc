// Client over libcurl: a pool of easy handles (each keeps its connections
// alive between calls), HTTP/2 over TLS, credentials from memory.

#include "shim/kube/client.h"

#include <curl/curl.h>

#include <algorithm>
#include <deque>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "shim/kube/protobuf_codec.h"
#include "shim/kube/rate_limiter.h"
#include "spdlog/spdlog.h"

namespace kscore::kube {
namespace {

constexpr char kHttpStatusPayload[] = "type.kscore.io/http-status";
constexpr long kConnectTimeoutMs = 10'000;
constexpr absl::Duration kDoTimeout = absl::Seconds(30);
// Watches can be quiet for their whole timeoutSeconds (<= 10 min); beyond
// that a silent stream is dead. TCP keepalive catches dead peers sooner.
constexpr long kStreamLowSpeedTimeS = 15L * 60;
// Idle handles kept with their live connections. At least the peak number of
// concurrent callers (bind workers, event workers, leader election): a handle
// closed here takes its TLS connection with it, and the next call pays a
// handshake on both sides.
constexpr std::size_t kMaxIdleHandles = 256;
constexpr std::size_t kMaxErrorBody = std::size_t{64} * 1024;
// The longest watch event (a line, or a frame) read: far above any object
// the API server stores (etcd refuses requests over 1.5 MiB by default, the
// API server bodies over 3 MiB), so only a broken stream reaches it, which
// then ends like any failed watch instead of growing without bound.
constexpr std::size_t kMaxWatchEventBytes = std::size_t{16} << 20;
constexpr absl::Duration kTokenRefresh = absl::Minutes(1);

void GlobalInit() {
  static const bool done = [] {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    return true;
  }();
  (void)done;
}

size_t AppendBody(char* data, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(data, size * n);
  return size * n;
}

// A reset handle from an idle pool, or null if the pool is empty. Reset
// keeps its live connections and TLS sessions.
CURL* TakeIdle(std::vector<CURL*>* idle) {
  if (idle->empty()) return nullptr;
  CURL* h = idle->back();
  idle->pop_back();
  curl_easy_reset(h);
  return h;
}

// Back to the pool, or closed when kMaxIdleHandles are kept already.
void KeepIdle(std::vector<CURL*>* idle, CURL* h) {
  if (idle->size() < kMaxIdleHandles) {
    idle->push_back(h);
  } else {
    curl_easy_cleanup(h);
  }
}

// Per-call state of Stream, reached from curl's callbacks.
struct StreamState {
  CURL* handle = nullptr;
  const std::function<bool(absl::string_view)>* on_line = nullptr;
  long status = 0;
  std::string pending;   // bytes after the last newline (or the error body)
  bool aborted = false;  // on_line returned false
  bool length_delimited = false;  // frames instead of lines
  bool oversized = false;         // an event longer than kMaxWatchEventBytes

  size_t Write(char* data, size_t n) {
    if (status == 0) curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &status);
    if (status != 200) {
      if (pending.size() < kMaxErrorBody) pending.append(data, n);
      return n;
    }
    pending.append(data, n);
    std::size_t start = 0;
    if (length_delimited) {
      // Frames of a 4-byte big-endian length, then that many bytes.
      while (pending.size() - start >= 4) {
        const auto* p =
            reinterpret_cast<const unsigned char*>(pending.data() + start);
        const std::size_t len = (std::size_t{p[0]} << 24) |
                                (std::size_t{p[1]} << 16) |
                                (std::size_t{p[2]} << 8) | std::size_t{p[3]};
        if (len > kMaxWatchEventBytes) return Oversized();
        if (pending.size() - start - 4 < len) break;
        if (!DeliverFrame(absl::string_view(pending).substr(start + 4, len))) {
          return 0;
        }
        start += 4 + len;
      }
    } else {
      for (std::size_t nl;
           (nl = pending.find('\n', start)) != std::string::npos;
           start = nl + 1) {
        if (!Deliver(absl::string_view(pending).substr(start, nl - start))) {
          return 0;  // makes curl stop with CURLE_WRITE_ERROR
        }
      }
    }
    pending.erase(0, start);
    if (!length_delimited && pending.size() > kMaxWatchEventBytes) {
      return Oversized();
    }
    return n;
  }

  size_t Oversized() {
    oversized = true;
    return 0;  // makes curl stop with CURLE_WRITE_ERROR
  }

  bool DeliverFrame(absl::string_view frame) {
    if (!(*on_line)(frame)) aborted = true;
    return !aborted;
  }

  bool Deliver(absl::string_view line) {
    line = absl::StripTrailingAsciiWhitespace(line);
    if (line.empty()) return true;
    if (!(*on_line)(line)) aborted = true;
    return !aborted;
  }

  static size_t Callback(char* data, size_t size, size_t n, void* user) {
    return static_cast<StreamState*>(user)->Write(data, size * n);
  }
};

class CurlClient final : public Client {
 public:
  explicit CurlClient(RestConfig config)
      : config_(std::move(config)),
        limiter_(config_.qps, config_.burst),
        token_(config_.bearer_token) {
    while (absl::EndsWith(config_.server, "/")) config_.server.pop_back();
  }

  ~CurlClient() override {
    std::unique_ptr<Async> async;
    {
      absl::MutexLock lock(&mu_);
      async = std::move(async_);
    }
    async.reset();  // finishes what was submitted (its thread takes mu_)
    for (CURL* h : idle_) curl_easy_cleanup(h);
  }

  absl::StatusOr<Response> Do(absl::string_view method, absl::string_view path,
                              absl::string_view body,
                              absl::string_view content_type) override {
    return DoWithTimeout(method, path, body, content_type, kDoTimeout);
  }

  absl::StatusOr<Response> DoWithTimeout(absl::string_view method,
                                         absl::string_view path,
                                         absl::string_view body,
                                         absl::string_view content_type,
                                         absl::Duration timeout) override {
    return Perform(method, path, body, content_type, "application/json",
                   timeout);
  }

  absl::StatusOr<Response> DoAs(absl::string_view method,
                                absl::string_view path, absl::string_view body,
                                absl::string_view content_type,
                                absl::string_view accept) override {
    return Perform(method, path, body, content_type, accept, kDoTimeout);
  }

  void DoAsync(absl::string_view method, absl::string_view path,
               std::string body, absl::string_view content_type,
               absl::string_view accept, Done done) override {
    auto t = std::make_unique<Transfer>();
    // The client-side rate limit delays the start, not the caller.
    t->ready_at = absl::Now() + limiter_.Reserve();
    t->method = std::string(method);
    t->path = std::string(path);
    t->body = std::move(body);
    t->content_type = std::string(content_type);
    t->accept = std::string(accept);
    t->done = std::move(done);
    Async* async = nullptr;
    {
      absl::MutexLock lock(&mu_);
      if (async_ == nullptr) async_ = std::make_unique<Async>(this);
      async = async_.get();
    }
    async->Submit(std::move(t));
  }

  uint64_t ConnectionsOpened() const override {
    return connections_opened_.load();
  }

  void SetOnReachable(std::function<void()> on_reachable) override {
    on_reachable_ = std::move(on_reachable);
  }

  absl::Status Stream(
      absl::string_view path,
      const std::function<bool(absl::string_view line)>& on_line,
      const std::atomic<bool>* stop) override {
    return DoStream(path, "application/json", false, on_line, stop);
  }

  absl::Status StreamFrames(
      absl::string_view path, absl::string_view accept,
      const std::function<bool(absl::string_view frame)>& on_frame,
      const std::atomic<bool>* stop) override {
    return DoStream(path, accept, true, on_frame, stop);
  }

 private:
  absl::StatusOr<Response> Perform(absl::string_view method,
                                   absl::string_view path,
                                   absl::string_view body,
                                   absl::string_view content_type,
                                   absl::string_view accept,
                                   absl::Duration timeout) {
    limiter_.Wait();
    CURL* h = Acquire();
    if (h == nullptr) return absl::ResourceExhaustedError("curl init failed");
    Request req(this, h, path, accept);
    const std::string m(method);
    req.SetMethod(m, body, content_type, timeout);
    Response resp;
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, AppendBody);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &resp.body);
    req.Finish();
    // Performed before `resp` is moved: the response is written into it.
    const CURLcode rc = curl_easy_perform(h);
    absl::StatusOr<Response> out = Outcome(h, rc, m, req, std::move(resp));
    if (out.ok()) {
      Release(h);
    } else {
      curl_easy_cleanup(h);  // its connection may be broken
    }
    return out;
  }

  absl::Status DoStream(absl::string_view path, absl::string_view accept,
                        bool length_delimited,
                        const std::function<bool(absl::string_view)>& on_item,
                        const std::atomic<bool>* stop) {
    limiter_.Wait();
    GlobalInit();
    // A fresh handle driven by a multi handle, so *stop is polled every
    // 100ms even when the stream is quiet.
    CURL* h = curl_easy_init();
    CURLM* multi = curl_multi_init();
    if (h == nullptr || multi == nullptr) {
      if (h != nullptr) curl_easy_cleanup(h);
      if (multi != nullptr) curl_multi_cleanup(multi);
      return absl::ResourceExhaustedError("curl init failed");
    }
    Request req(this, h, path, accept);
    curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, kStreamLowSpeedTimeS);
    StreamState state;
    state.handle = h;
    state.on_line = &on_item;
    state.length_delimited = length_delimited;
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, StreamState::Callback);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &state);
    req.Finish();

    curl_multi_add_handle(multi, h);
    CURLcode rc = CURLE_OK;
    bool stopped = false;
    bool answered = false;
    for (int running = 1; running > 0;) {
      if (stop != nullptr && stop->load()) {
        stopped = true;
        break;
      }
      if (curl_multi_perform(multi, &running) != CURLM_OK) break;
      if (!answered) {  // a watch answers with its headers, then may idle
        long code = 0;
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
        answered = code != 0;
        if (answered) Reached(true);
      }
      if (running > 0) curl_multi_poll(multi, nullptr, 0, 100, nullptr);
    }
    int left = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi, &left)) {
      if (msg->msg == CURLMSG_DONE) rc = msg->data.result;
    }
    absl::Status result;
    if (state.oversized) {
      result = absl::ResourceExhaustedError(
          absl::StrCat("watch ", req.url(), ": an event longer than ",
                       kMaxWatchEventBytes, " bytes"));
    } else if (stopped || state.aborted) {
      result = absl::OkStatus();
    } else if (rc != CURLE_OK) {
      Reached(false);
      result = absl::UnavailableError(
          absl::StrCat("watch ", req.url(), ": ", req.CurlError(rc)));
    } else if (state.status != 200) {
      if (state.status == 0) {
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &state.status);
      }
      result = state.status == 200
                   ? absl::OkStatus()
                   : HttpError(state.status, ErrorBodyText(state.pending));
    } else if (!length_delimited) {
      state.Deliver(state.pending);  // a last line without a newline
    }
    curl_multi_remove_handle(multi, h);
    curl_easy_cleanup(h);
    curl_multi_cleanup(multi);
    return result;
  }

  // The options every call shares; owns the header list and error buffer.
  class Request {
   public:
    Request(CurlClient* client, CURL* h, absl::string_view path,
            absl::string_view accept)
        : h_(h), url_(absl::StrCat(client->config_.server, path)) {
      errbuf_[0] = '\0';
      const RestConfig& c = client->config_;
      curl_easy_setopt(h, CURLOPT_URL, url_.c_str());
      curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf_);
      curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
      curl_easy_setopt(h, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS);
      curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, kConnectTimeoutMs);
      curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
      curl_easy_setopt(h, CURLOPT_TCP_KEEPIDLE, 30L);
      curl_easy_setopt(h, CURLOPT_TCP_KEEPINTVL, 15L);
      curl_easy_setopt(h, CURLOPT_USERAGENT, c.user_agent.c_str());
      if (!c.ca_pem.empty()) {
        // Trust only the cluster CA, not the system roots as well.
        curl_easy_setopt(h, CURLOPT_CAINFO, nullptr);
        curl_easy_setopt(h, CURLOPT_CAPATH, nullptr);
        SetBlob(CURLOPT_CAINFO_BLOB, c.ca_pem);
      }
      if (c.insecure_skip_tls_verify) {
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
      }
      if (!c.client_cert_pem.empty()) {
        SetBlob(CURLOPT_SSLCERT_BLOB, c.client_cert_pem);
        curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
        SetBlob(CURLOPT_SSLKEY_BLOB, c.client_key_pem);
        curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
      }
      const std::string token = client->Token();
      if (!token.empty())
        AddHeader(absl::StrCat("Authorization: Bearer ", token));
      AddHeader(absl::StrCat("Accept: ", accept));
      AddHeader("Expect:");  // no 100-continue round trip for bodies
    }
    ~Request() { curl_slist_free_all(headers_); }
    Request(const Request&) = delete;
    Request& operator=(const Request&) = delete;

    // The method, the body (not copied: it must outlive the transfer) and
    // the total timeout.
    void SetMethod(const std::string& m, absl::string_view body,
                   absl::string_view content_type, absl::Duration timeout) {
      if (m == "GET") {
        curl_easy_setopt(h_, CURLOPT_HTTPGET, 1L);
      } else {
        curl_easy_setopt(h_, CURLOPT_CUSTOMREQUEST, m.c_str());
        if (!body.empty() || m == "POST" || m == "PUT" || m == "PATCH") {
          curl_easy_setopt(h_, CURLOPT_POSTFIELDS, body.data());
          curl_easy_setopt(h_, CURLOPT_POSTFIELDSIZE_LARGE,
                           static_cast<curl_off_t>(body.size()));
          AddHeader(absl::StrCat("Content-Type: ", content_type));
        }
      }
      curl_easy_setopt(h_, CURLOPT_TIMEOUT_MS,
                       static_cast<long>(absl::ToInt64Milliseconds(timeout)));
      curl_easy_setopt(h_, CURLOPT_ACCEPT_ENCODING, "");  // gzip for lists
    }

    void AddHeader(const std::string& header) {
      headers_ = curl_slist_append(headers_, header.c_str());
    }
    void Finish() { curl_easy_setopt(h_, CURLOPT_HTTPHEADER, headers_); }
    const std::string& url() const { return url_; }
    std::string CurlError(CURLcode rc) const {
      return errbuf_[0] != '\0' ? std::string(errbuf_) : curl_easy_strerror(rc);
    }

   private:
    void SetBlob(CURLoption opt, const std::string& pem) {
      curl_blob blob{const_cast<char*>(pem.data()), pem.size(), CURL_BLOB_COPY};
      curl_easy_setopt(h_, opt, &blob);
    }

    CURL* h_;
    std::string url_;
    curl_slist* headers_ = nullptr;
    char errbuf_[CURL_ERROR_SIZE];
  };

  // A finished transfer as Do returns it: Unavailable (naming the method
  // and URL) if curl failed, else the response with its HTTP status. Counts
  // the connections it opened.
  absl::StatusOr<Response> Outcome(CURL* h, CURLcode rc, const std::string& m,
                                   const Request& req, Response resp) {
    if (rc != CURLE_OK) {
      Reached(false);
      return absl::UnavailableError(
          absl::StrCat(m, " ", req.url(), ": ", req.CurlError(rc)));
    }
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &resp.status);
    Reached(true);
    long connects = 0;
    curl_easy_getinfo(h, CURLINFO_NUM_CONNECTS, &connects);
    connections_opened_ += static_cast<uint64_t>(connects);
    return resp;
  }

  // Whether a request got an answer (any HTTP status) or none (connection
  // refused, reset, timed out). The first answer after a miss calls
  // on_reachable_.
  void Reached(bool answered) {
    if (!answered) {
      unreachable_.store(true);
    } else if (unreachable_.load(std::memory_order_relaxed) &&
               unreachable_.exchange(false) && on_reachable_) {
      on_reachable_();
    }
  }

  // One DoAsync request.
  struct Transfer {
    std::string method, path, body, content_type, accept;
    Done done;
    absl::Time ready_at;
    CURL* handle = nullptr;
    std::unique_ptr<Request> request;
    Response response;
  };

  // DoAsync's I/O thread: one curl multi handle, whose connections carry
  // many requests at once as HTTP/2 streams (a new connection only when a
  // connection's stream limit is reached).
  class Async {
   public:
    explicit Async(CurlClient* client)
        : client_(client), multi_(curl_multi_init()) {
      curl_multi_setopt(multi_, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
      // curl's own cap is 100 streams a connection, after which every extra
      // request would open a connection of its own; the server's limit
      // (250 for the Go HTTP/2 server) still applies. Beyond two
      // connections' worth, requests wait in curl for a free stream.
      curl_multi_setopt(multi_, CURLMOPT_MAX_CONCURRENT_STREAMS, 250L);
      curl_multi_setopt(multi_, CURLMOPT_MAX_HOST_CONNECTIONS, 2L);
      thread_ = std::thread([this] { Run(); });
    }
    // Waits for every submitted request to finish (each has a timeout).
    ~Async() {
      {
        absl::MutexLock lock(&mu_);
        stop_ = true;
      }
      curl_multi_wakeup(multi_);
      thread_.join();
      for (CURL* h : idle_) curl_easy_cleanup(h);
      curl_multi_cleanup(multi_);
    }
    Async(const Async&) = delete;
    Async& operator=(const Async&) = delete;

    void Submit(std::unique_ptr<Transfer> t) {
      {
        absl::MutexLock lock(&mu_);
        queue_.push_back(std::move(t));
      }
      curl_multi_wakeup(multi_);
    }

   private:
    void Run() {
      while (true) {
        std::vector<std::unique_ptr<Transfer>> ready;
        absl::Duration wait = absl::Seconds(1);
        bool stopping = false;
        {
          absl::MutexLock lock(&mu_);
          const absl::Time now = absl::Now();
          while (!queue_.empty() && queue_.front()->ready_at <= now) {
            ready.push_back(std::move(queue_.front()));
            queue_.pop_front();
          }
          if (!queue_.empty()) {
            wait = std::min(wait, queue_.front()->ready_at - now);
          }
          stopping = stop_ && queue_.empty();
        }
        for (std::unique_ptr<Transfer>& t : ready) Start(std::move(t));
        int running = 0;
        curl_multi_perform(multi_, &running);
        Collect();
        if (stopping && active_.empty()) return;
        curl_multi_poll(
            multi_, nullptr, 0,
            static_cast<int>(std::max<int64_t>(
                1, absl::ToInt64Milliseconds(wait + absl::Milliseconds(1)))),
            nullptr);
      }
    }

    void Start(std::unique_ptr<Transfer> t) {
      CURL* h = TakeIdle(&idle_);
      if (h == nullptr) h = curl_easy_init();
      if (h == nullptr) {
        t->done(absl::ResourceExhaustedError("curl init failed"));
        return;
      }
      t->handle = h;
      t->request = std::make_unique<Request>(client_, h, t->path, t->accept);
      t->request->SetMethod(t->method, t->body, t->content_type, kDoTimeout);
      curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, AppendBody);
      curl_easy_setopt(h, CURLOPT_WRITEDATA, &t->response.body);
      // Wait for a connection being set up to offer HTTP/2 rather than
      // opening one per request.
      curl_easy_setopt(h, CURLOPT_PIPEWAIT, 1L);
      t->request->Finish();
      if (curl_multi_add_handle(multi_, h) != CURLM_OK) {
        curl_easy_cleanup(h);
        t->done(absl::InternalError("curl_multi_add_handle failed"));
        return;
      }
      active_.emplace(h, std::move(t));
    }

    void Collect() {
      int left = 0;
      while (CURLMsg* msg = curl_multi_info_read(multi_, &left)) {
        if (msg->msg != CURLMSG_DONE) continue;
        CURL* h = msg->easy_handle;
        const CURLcode rc = msg->data.result;  // msg dies with the removal
        auto it = active_.find(h);
        if (it == active_.end()) continue;
        std::unique_ptr<Transfer> t = std::move(it->second);
        active_.erase(it);
        curl_multi_remove_handle(multi_, h);
        absl::StatusOr<Response> out = client_->Outcome(
            h, rc, t->method, *t->request, std::move(t->response));
        if (out.ok()) {
          KeepIdle(&idle_, h);
        } else {
          curl_easy_cleanup(h);
        }
        t->done(std::move(out));
      }
    }

    CurlClient* client_;
    CURLM* multi_;
    std::thread thread_;
    absl::Mutex mu_;
    std::deque<std::unique_ptr<Transfer>> queue_ ABSL_GUARDED_BY(mu_);
    bool stop_ ABSL_GUARDED_BY(mu_) = false;
    // The I/O thread's own.
    absl::flat_hash_map<CURL*, std::unique_ptr<Transfer>> active_;
    std::vector<CURL*> idle_;
  };

  CURL* Acquire() {
    {
      absl::MutexLock lock(&mu_);
      if (CURL* h = TakeIdle(&idle_)) return h;
    }
    GlobalInit();
    return curl_easy_init();
  }

  void Release(CURL* h) {
    absl::MutexLock lock(&mu_);
    KeepIdle(&idle_, h);
  }

  // The bearer token; token_file is re-read every minute (projected service
  // account tokens rotate). A failed read keeps the last token.
  std::string Token() {
    absl::MutexLock lock(&mu_);
    if (!config_.token_file.empty() &&
        absl::Now() - token_read_ > kTokenRefresh) {
      token_read_ = absl::Now();
      std::ifstream in(config_.token_file);
      std::ostringstream ss;
      if (in && (ss << in.rdbuf())) {
        token_ = std::string(absl::StripAsciiWhitespace(ss.str()));
      } else {
        spdlog::warn("cannot re-read token file {}; keeping the last token",
                     config_.token_file);
      }
    }
    return token_;
  }

  RestConfig config_;
  TokenBucket limiter_;
  absl::Mutex mu_;
  std::vector<CURL*> idle_ ABSL_GUARDED_BY(mu_);
  std::atomic<uint64_t> connections_opened_{0};
  std::atomic<bool> unreachable_{false};
  std::function<void()> on_reachable_;
  std::unique_ptr<Async> async_ ABSL_GUARDED_BY(mu_);  // started by DoAsync
  std::string token_ ABSL_GUARDED_BY(mu_);
  absl::Time token_read_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

absl::StatusCode CodeForHttp(long status) {
  switch (status) {
    case 400:
    case 422:
      return absl::StatusCode::kInvalidArgument;
    case 401:
      return absl::StatusCode::kUnauthenticated;
    case 403:
      return absl::StatusCode::kPermissionDenied;
    case 404:
      return absl::StatusCode::kNotFound;
    case 409:
      return absl::StatusCode::kAborted;
    case 410:
      return absl::StatusCode::kOutOfRange;
    case 429:
      return absl::StatusCode::kResourceExhausted;
    case 504:
      return absl::StatusCode::kDeadlineExceeded;
    default:
      return status >= 500 ? absl::StatusCode::kUnavailable
                           : absl::StatusCode::kUnknown;
  }
}

}  // namespace

absl::Status HttpError(long status, absl::string_view body) {
  absl::Status st(
      CodeForHttp(status),
      absl::StrCat("HTTP ", status, ": ", absl::StripAsciiWhitespace(body)));
  st.SetPayload(kHttpStatusPayload, absl::Cord(absl::StrCat(status)));
  return st;
}

long HttpStatusOf(const absl::Status& status) {
  const auto p = status.GetPayload(kHttpStatusPayload);
  long code = 0;
  if (!p.has_value() || !absl::SimpleAtoi(std::string(*p), &code)) return 0;
  return code;
}

std::string QueryEscape(absl::string_view value) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : value) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '_' || c == '.' ||
        c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out += {'%', kHex[c >> 4], kHex[c & 15]};
    }
  }
  return out;
}

absl::StatusOr<std::unique_ptr<Client>> NewClient(const RestConfig& config) {
  if (!absl::StartsWith(config.server, "https://") &&
      !absl::StartsWith(config.server, "http://")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "server \"", config.server, "\" must start with https:// or http://"));
  }
  if (config.client_cert_pem.empty() != config.client_key_pem.empty()) {
    return absl::InvalidArgumentError(
        "client certificate and key must be given together");
  }
  GlobalInit();
  return std::make_unique<CurlClient>(config);
}

}  // namespace kscore::kube
