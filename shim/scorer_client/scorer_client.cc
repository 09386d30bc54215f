#include "shim/scorer_client/scorer_client.h"

#include <condition_variable>
#include <mutex>
#include <type_traits>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/grpc_status.h"
#include "spdlog/spdlog.h"

namespace kscore::scorer_client {
namespace {

CallOutcome Outcome(const grpc::Status& status) {
  // grpc::StatusCode and absl::StatusCode share their canonical values.
  return ClassifyCall(static_cast<absl::StatusCode>(status.error_code()));
}

// One Evaluate call of a round, its request already encoded. The calling
// thread drives its own completion queue: it sends the batches and then
// polls the connection for their answers itself. The callback API would
// hand every answer from gRPC's poller threads to this one, two thread
// switches per call that cost more CPU than the call's own work on a busy
// machine.
struct RawCall {
  std::unique_ptr<grpc::ClientContext> ctx;
  grpc::ByteBuffer request;
  grpc::ByteBuffer response;
  grpc::Status status;
  std::unique_ptr<grpc::ClientAsyncResponseReader<grpc::ByteBuffer>> rpc;
};

// Waits for `calls` answers on `cq`, then shuts it down and drains it.
void AwaitAll(grpc::CompletionQueue& cq, size_t calls) {
  void* tag = nullptr;
  bool ok = false;
  for (size_t left = calls; left > 0; --left) {
    // Every call ends (its deadline at the latest), so Next returns.
    if (!cq.Next(&tag, &ok)) break;
  }
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<ScorerClient>> ScorerClient::Create(
    const Options& options) {
  if (options.target.empty())
    return absl::InvalidArgumentError("--scorer is required");
  std::unique_ptr<ScorerClient> c(new ScorerClient(options));
  c->evaluate_method_ =
      absl::StrCat("/", pb::Scorer::service_full_name(), "/Evaluate");
  c->preempt_method_ =
      absl::StrCat("/", pb::Scorer::service_full_name(), "/Preempt");
  grpc::ChannelArguments args;
  // Round robin over every address a target resolves to (dns:/// of a
  // headless Service gives one per scorer replica).
  args.SetServiceConfigJSON(R"({"loadBalancingConfig":[{"round_robin":{}}]})");
  args.SetMaxReceiveMessageSize(64 << 20);
  // A scorer back from an outage is reached within max_reconnect_backoff,
  // not after gRPC's default backoff that grows to two minutes.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS,
              static_cast<int>(absl::ToInt64Milliseconds(
                  options.initial_reconnect_backoff)));
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS,
              static_cast<int>(
                  absl::ToInt64Milliseconds(options.max_reconnect_backoff)));
  args.SetInt(
      GRPC_ARG_MIN_RECONNECT_BACKOFF_MS,
      static_cast<int>(absl::ToInt64Milliseconds(options.min_connect_timeout)));
  std::vector<std::string> targets;
  if (absl::StrContains(options.target, ",") &&
      !absl::StrContains(options.target, ":///") &&
      !absl::StartsWith(options.target, "ipv4:") &&
      !absl::StartsWith(options.target, "ipv6:")) {
    targets = absl::StrSplit(options.target, ',', absl::SkipWhitespace());
  } else {
    targets.push_back(options.target);
  }
  std::shared_ptr<grpc::ChannelCredentials> credentials =
      grpc::InsecureChannelCredentials();
  if (!options.tls.ca.empty()) {
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = options.tls.ca;
    ssl.pem_cert_chain = options.tls.cert;
    ssl.pem_private_key = options.tls.key;
    credentials = grpc::SslCredentials(ssl);
    if (!options.tls_server_name.empty()) {
      args.SetSslTargetNameOverride(options.tls_server_name);
    }
  }
  for (const std::string& t : targets) {
    auto ch = grpc::CreateCustomChannel(t, credentials, args);
    c->stubs_.push_back(pb::Scorer::NewStub(ch));
    c->raw_stubs_.push_back(std::make_unique<RawEvaluateStub>(ch));
    c->channels_.push_back(std::move(ch));
  }
  return c;
}

ScorerClient::~ScorerClient() { StopWatching(); }

void ScorerClient::StopWatching() {
  {
    absl::MutexLock lock(&watch_mu_);  // wakes the watcher
    stop_watch_ = true;
  }
  if (watcher_.joinable()) watcher_.join();
}

void ScorerClient::WhenReachable(std::function<void()> reachable) {
  reachable_ = std::move(reachable);
  watcher_ = std::thread([this] { WatchChannels(); });
}

void ScorerClient::RecordReachability(CallOutcome outcome) {
  if (outcome == CallOutcome::kUnreachable) {
    if (!unreachable_.load(std::memory_order_relaxed)) {
      absl::MutexLock lock(&watch_mu_);  // wakes the watcher
      unreachable_.store(true);
    }
  } else if (outcome == CallOutcome::kNoAnswer) {
    // No answer either way: a slow scorer is not an unreachable one.
  } else if (unreachable_.load(std::memory_order_relaxed) &&
             unreachable_.exchange(false) && reachable_) {
    reachable_();
  }
}

void ScorerClient::WatchChannels() {
  // While calls reach the scorer the watcher waits on its own: a thread
  // waiting on a completion queue is one of gRPC's pollers, and would take
  // the scorer's answers from the calling threads, then hand them over
  // (a wake-up each). Each wait is short, so that an idle channel (its
  // connection lost under a policy that waits for the next call) is asked
  // to connect: the scorer is wanted back.
  constexpr absl::Duration kPoll = absl::Milliseconds(250);
  grpc::CompletionQueue cq;
  while (true) {
    {
      absl::MutexLock lock(&watch_mu_);
      watch_mu_.AwaitWithTimeout(absl::Condition(
                                     +[](ScorerClient* c) {
                                       return c->stop_watch_.load() ||
                                              c->unreachable_.load();
                                     },
                                     this),
                                 kPoll);
    }
    if (stop_watch_) break;
    if (unreachable_) {
      WatchUntilChange(cq, kPoll);
    } else {
      for (const auto& ch : channels_) ch->GetState(/*try_to_connect=*/true);
    }
  }
  cq.Shutdown();
  void* tag = nullptr;
  bool ok = false;
  while (cq.Next(&tag, &ok)) {
  }
}

void ScorerClient::WatchUntilChange(grpc::CompletionQueue& cq,
                                    absl::Duration wait) {
  // Each channel's next state change, or `wait`: READY after a call failed
  // to reach the scorer is reported (checked at each wake-up, not only on
  // the change, for a call that failed just as the channel became ready).
  for (size_t i = 0; i < channels_.size(); ++i) {
    channels_[i]->NotifyOnStateChange(
        channels_[i]->GetState(/*try_to_connect=*/true),
        absl::ToChronoTime(absl::Now() + wait), &cq,
        reinterpret_cast<void*>(i));
  }
  for (size_t left = channels_.size(); left > 0; --left) {
    void* tag = nullptr;
    bool changed = false;
    if (!cq.Next(&tag, &changed)) return;
    const auto i = reinterpret_cast<size_t>(tag);
    if (channels_[i]->GetState(/*try_to_connect=*/true) == GRPC_CHANNEL_READY &&
        unreachable_.exchange(false) && reachable_) {
      reachable_();
    }
  }
}

size_t ScorerClient::NextReplica() {
  return next_.fetch_add(1) % stubs_.size();
}

size_t ScorerClient::Replica(const std::optional<uint64_t>& affinity,
                             int attempt) {
  if (!affinity.has_value()) return NextReplica();
  return (*affinity + static_cast<uint64_t>(attempt)) % stubs_.size();
}

std::unique_ptr<grpc::ClientContext> ScorerClient::Context() const {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(absl::ToChronoTime(absl::Now() + options_.timeout));
  return ctx;
}

template <typename Response, typename Call>
absl::StatusOr<Response> ScorerClient::WithRetries(const Call& call) {
  grpc::Status st;
  for (int attempt = 0; attempt < options_.attempts; ++attempt) {
    Response resp;
    stats_.calls++;
    st = call(attempt, &resp);
    if (st.ok()) {
      RecordReachability(CallOutcome::kAnswered);
      return resp;
    }
    stats_.failures++;
    if (!Retryable(Outcome(st))) break;
  }
  RecordReachability(Outcome(st));
  return common::ToAbslStatus(st, "scorer: ");
}

template <typename Request, typename Response>
absl::StatusOr<Response> ScorerClient::Unary(
    grpc::Status (pb::Scorer::Stub::*rpc)(grpc::ClientContext*, const Request&,
                                          Response*),
    const Request& request, std::optional<uint64_t> affinity) {
  return WithRetries<Response>([&](int attempt, Response* resp) {
    if constexpr (std::is_same_v<Request, pb::QueueingHintRequest>) {
      stats_.hint_calls++;
    }
    stats_.request_bytes += request.ByteSizeLong();
    return (stubs_[Replica(affinity, attempt)].get()->*rpc)(Context().get(),
                                                            request, resp);
  });
}

absl::StatusOr<pb::ListProfilesResponse> ScorerClient::ListProfiles() {
  return Unary(&pb::Scorer::Stub::ListProfiles, pb::ListProfilesRequest());
}

absl::StatusOr<pb::NormalizeScoreResponse> ScorerClient::NormalizeScore(
    const pb::NormalizeScoreRequest& request) {
  return Unary(&pb::Scorer::Stub::NormalizeScore, request);
}

absl::StatusOr<pb::PlanResponse> ScorerClient::Plan(
    const pb::PlanRequest& request) {
  return Unary(&pb::Scorer::Stub::Plan, request);
}

absl::StatusOr<pb::QueueingHintResponse> ScorerClient::QueueingHint(
    const pb::QueueingHintRequest& request) {
  return Unary(&pb::Scorer::Stub::QueueingHint, request);
}

absl::StatusOr<pb::PreemptResponse> ScorerClient::Preempt(
    const pb::PreemptRequest& request) {
  return Unary(&pb::Scorer::Stub::Preempt, request);
}

absl::StatusOr<pb::PreemptResponse> ScorerClient::PreemptEncoded(
    const std::string& request) {
  return WithRetries<pb::PreemptResponse>(
      [&](int attempt, pb::PreemptResponse* resp) {
        stats_.request_bytes += request.size();
        RawCall call;
        call.ctx = Context();
        // No copy: `request` outlives the call (this waits for it).
        grpc::Slice slice(request.data(), request.size(),
                          grpc::Slice::STATIC_SLICE);
        call.request = grpc::ByteBuffer(&slice, 1);
        grpc::CompletionQueue cq;
        call.rpc = raw_stubs_[Replica(std::nullopt, attempt)]->PrepareUnaryCall(
            call.ctx.get(), preempt_method_, call.request, &cq);
        call.rpc->StartCall();
        call.rpc->Finish(&call.response, &call.status, &call);
        AwaitAll(cq, 1);
        if (!call.status.ok()) return call.status;
        stats_.response_bytes += call.response.Length();
        return grpc::SerializationTraits<pb::PreemptResponse>::Deserialize(
            &call.response, resp);
      });
}

absl::StatusOr<pb::NormalizeScoreResponse> ScorerClient::NormalizeScorePinned(
    uint64_t affinity, const pb::NormalizeScoreRequest& request) {
  return Unary(&pb::Scorer::Stub::NormalizeScore, request, affinity);
}

std::vector<absl::StatusOr<pb::EvaluateResponse*>> ScorerClient::EvaluateAll(
    absl::Span<const std::string> requests, google::protobuf::Arena* arena) {
  return Evaluate(requests, arena, {});
}

std::vector<absl::StatusOr<pb::EvaluateResponse*>> ScorerClient::EvaluatePinned(
    absl::Span<const uint64_t> affinities,
    absl::Span<const std::string> requests, google::protobuf::Arena* arena) {
  return Evaluate(requests, arena, affinities);
}

std::vector<absl::StatusOr<pb::EvaluateResponse*>> ScorerClient::Evaluate(
    absl::Span<const std::string> requests, google::protobuf::Arena* arena,
    absl::Span<const uint64_t> affinities) {
  const size_t n = requests.size();
  std::vector<absl::StatusOr<pb::EvaluateResponse*>> results(
      n, absl::UnknownError("not run"));
  std::vector<int> pending(n);
  for (size_t i = 0; i < n; ++i) pending[i] = static_cast<int>(i);
  bool answered = false;
  for (int attempt = 0; attempt < options_.attempts && !pending.empty();
       ++attempt) {
    pending = EvaluateRound(requests, pending, arena, results, answered,
                            affinities, attempt);
  }
  // A batch that another replica answered did reach the scorer; one that
  // failed on every attempt did not.
  if (answered) RecordReachability(CallOutcome::kAnswered);
  for (int i : pending) {
    if (absl::IsUnavailable(results[i].status())) {
      RecordReachability(CallOutcome::kUnreachable);
      break;
    }
  }
  return results;
}

std::vector<int> ScorerClient::EvaluateRound(
    absl::Span<const std::string> requests, const std::vector<int>& pending,
    google::protobuf::Arena* arena,
    std::vector<absl::StatusOr<pb::EvaluateResponse*>>& results, bool& answered,
    absl::Span<const uint64_t> affinities, int attempt) {
  grpc::CompletionQueue cq;
  std::vector<RawCall> calls(pending.size());
  for (size_t k = 0; k < pending.size(); ++k) {
    RawCall& call = calls[k];
    call.ctx = Context();
    const std::string& req = requests[pending[k]];
    stats_.calls++;
    stats_.request_bytes += req.size();
    // No copy: `requests` outlives every call (this waits for them all).
    grpc::Slice slice(req.data(), req.size(), grpc::Slice::STATIC_SLICE);
    call.request = grpc::ByteBuffer(&slice, 1);
    const auto at = static_cast<size_t>(pending[k]);
    const std::optional<uint64_t> affinity =
        at < affinities.size() ? std::optional(affinities[at]) : std::nullopt;
    call.rpc = raw_stubs_[Replica(affinity, attempt)]->PrepareUnaryCall(
        call.ctx.get(), evaluate_method_, call.request, &cq);
    call.rpc->StartCall();
    call.rpc->Finish(&call.response, &call.status, &call);
  }
  AwaitAll(cq, calls.size());
  std::vector<int> retry;
  for (size_t k = 0; k < pending.size(); ++k) {
    RawCall& call = calls[k];
    if (call.status.ok()) {
      stats_.response_bytes += call.response.Length();
      auto* resp =
          google::protobuf::Arena::CreateMessage<pb::EvaluateResponse>(arena);
      call.status =
          grpc::SerializationTraits<pb::EvaluateResponse>::Deserialize(
              &call.response, resp);
      if (call.status.ok()) {
        results[pending[k]] = resp;
        answered = true;
        continue;
      }
    }
    stats_.failures++;
    results[pending[k]] = common::ToAbslStatus(call.status, "scorer: ");
    if (Retryable(Outcome(call.status))) {
      spdlog::debug("scorer call failed ({}), retrying on another replica",
                    call.status.error_message());
      retry.push_back(pending[k]);
    }
  }
  return retry;
}

}  // namespace kscore::scorer_client
