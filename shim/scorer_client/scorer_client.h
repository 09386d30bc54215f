#ifndef KSCORE_SHIM_SCORER_CLIENT_SCORER_CLIENT_H_
#define KSCORE_SHIM_SCORER_CLIENT_SCORER_CLIENT_H_

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "common/tls_files.h"
#include "google/protobuf/arena.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "kscore/scorer/v1/scorer.grpc.pb.h"
#include "shim/scorer_client/scorer.h"

namespace kscore::scorer_client {

namespace pb = ::kscore::scorer::v1;

// The shim's side of the scorer contract: channels to the scorer replicas,
// a deadline per call, retries on another replica when one is down, and
// batches fanned out in parallel. A channel whose scorer went away tries
// again at least every Options::max_reconnect_backoff, so a scorer that is
// back is reached within about that long.
class ScorerClient : public Scorer {
 public:
  struct Options {
    // Any gRPC target ("dns:///scorer.ns.svc:50051", "127.0.0.1:50051"), or
    // several comma-separated addresses; calls round-robin over replicas.
    std::string target;
    absl::Duration timeout = absl::Seconds(5);
    int attempts = 3;  // per call, each on the next replica
    // TLS when tls.ca is set (PEM); mutual when tls.cert and tls.key are
    // too. tls_server_name overrides the name checked against the
    // scorer's certificate (default: the target's host).
    common::TlsFiles tls = {};
    std::string tls_server_name = {};
    // gRPC's reconnect backoff (its defaults: 1 s growing to 120 s), and
    // the least time a connection attempt is given before it counts as
    // failed (gRPC's min_reconnect_backoff, 20 s by default).
    absl::Duration initial_reconnect_backoff = absl::Milliseconds(100);
    absl::Duration max_reconnect_backoff = absl::Seconds(1);
    absl::Duration min_connect_timeout = absl::Seconds(5);
  };

  struct Stats {
    std::atomic<uint64_t> calls{0};
    std::atomic<uint64_t> failures{0};
    std::atomic<uint64_t> request_bytes{0};
    std::atomic<uint64_t> response_bytes{0};
    std::atomic<uint64_t> hint_calls{0};  // QueueingHint, also in `calls`
  };

  static absl::StatusOr<std::unique_ptr<ScorerClient>> Create(
      const Options& options);
  // Stops the connectivity watch (WhenReachable).
  ~ScorerClient() override;

  // Calls `reachable` (on the client's own thread or a caller's) when the
  // scorer answers again after a call could not reach it (UNAVAILABLE): a
  // channel becomes READY, or a call succeeds after one failed so. Starts a
  // thread that watches the channels' states; call once, before the calls.
  void WhenReachable(std::function<void()> reachable);
  // Ends the watch (within 250 ms): `reachable` is not called after this.
  void StopWatching();

  absl::StatusOr<pb::ListProfilesResponse> ListProfiles() override;
  // All batches in parallel (the shim assembles the requests from bytes it
  // keeps encoded: Cache::AppendCandidates).
  std::vector<absl::StatusOr<pb::EvaluateResponse*>> EvaluateAll(
      absl::Span<const std::string> requests,
      google::protobuf::Arena* arena) override;
  absl::StatusOr<pb::NormalizeScoreResponse> NormalizeScore(
      const pb::NormalizeScoreRequest& request) override;
  std::vector<absl::StatusOr<pb::EvaluateResponse*>> EvaluatePinned(
      absl::Span<const uint64_t> affinities,
      absl::Span<const std::string> requests,
      google::protobuf::Arena* arena) override;
  int ReplicaOf(uint64_t affinity) const override {
    return static_cast<int>(affinity % stubs_.size());
  }
  absl::StatusOr<pb::NormalizeScoreResponse> NormalizeScorePinned(
      uint64_t affinity, const pb::NormalizeScoreRequest& request) override;
  absl::StatusOr<pb::PlanResponse> Plan(
      const pb::PlanRequest& request) override;
  absl::StatusOr<pb::QueueingHintResponse> QueueingHint(
      const pb::QueueingHintRequest& request) override;
  absl::StatusOr<pb::PreemptResponse> Preempt(
      const pb::PreemptRequest& request) override;
  absl::StatusOr<pb::PreemptResponse> PreemptEncoded(
      const std::string& request) override;

  const Stats& stats() const { return stats_; }
  // Addresses called in turn (1 for a target that resolves to several).
  int replicas() const { return static_cast<int>(stubs_.size()); }

 private:
  explicit ScorerClient(Options options) : options_(std::move(options)) {}
  // Index of the replica for the next call (round robin over stubs_ and
  // raw_stubs_, which are parallel), or with an affinity, its replica
  // first and the next ones on retries.
  size_t NextReplica();
  size_t Replica(const std::optional<uint64_t>& affinity, int attempt);
  std::unique_ptr<grpc::ClientContext> Context() const;
  // A unary call through the stub's `rpc`: each attempt on the next
  // replica while the failure is Retryable, counted in stats_.
  // `call(attempt, &response)` on other replicas while it fails in a way
  // worth retrying, counting calls and failures and the scorer's
  // reachability.
  template <typename Response, typename Call>
  absl::StatusOr<Response> WithRetries(const Call& call);
  template <typename Request, typename Response>
  absl::StatusOr<Response> Unary(
      grpc::Status (pb::Scorer::Stub::*rpc)(grpc::ClientContext*,
                                            const Request&, Response*),
      const Request& request, std::optional<uint64_t> affinity = {});
  std::vector<absl::StatusOr<pb::EvaluateResponse*>> Evaluate(
      absl::Span<const std::string> requests, google::protobuf::Arena* arena,
      absl::Span<const uint64_t> affinities);
  // One round of EvaluateAll: the `pending` requests in parallel, each
  // answer or failure into `results` (`answered` set when one succeeds).
  // Returns the pending requests to send again.
  std::vector<int> EvaluateRound(
      absl::Span<const std::string> requests, const std::vector<int>& pending,
      google::protobuf::Arena* arena,
      std::vector<absl::StatusOr<pb::EvaluateResponse*>>& results,
      bool& answered, absl::Span<const uint64_t> affinities, int attempt);
  // A call ended so (after its retries on other replicas): remembers a
  // failure to reach the scorer, and calls reachable_ at the first answer
  // after one. A replica down while another answers is not the scorer
  // unreachable.
  void RecordReachability(CallOutcome outcome);
  // The connectivity watch: while a call failed to reach the scorer, every
  // channel's state changes, READY reported.
  void WatchChannels();
  void WatchUntilChange(grpc::CompletionQueue& cq, absl::Duration wait);

  Options options_;
  std::vector<std::shared_ptr<grpc::Channel>> channels_;
  std::vector<std::unique_ptr<pb::Scorer::Stub>> stubs_;
  // For Evaluate and Preempt with an already encoded request; the response
  // is decoded by EvaluateAll (onto the caller's arena) or PreemptEncoded.
  using RawEvaluateStub =
      grpc::TemplatedGenericStub<grpc::ByteBuffer, grpc::ByteBuffer>;
  std::vector<std::unique_ptr<RawEvaluateStub>> raw_stubs_;
  std::string evaluate_method_;  // "/kscore.scorer.v1.Scorer/Evaluate"
  std::string preempt_method_;   // "/kscore.scorer.v1.Scorer/Preempt"
  std::atomic<uint64_t> next_{0};
  Stats stats_;
  std::function<void()> reachable_;
  std::atomic<bool> unreachable_{false};
  std::atomic<bool> stop_watch_{false};
  absl::Mutex watch_mu_;  // the watcher waits on it for either flag
  std::thread watcher_;
};

}  // namespace kscore::scorer_client

#endif  // KSCORE_SHIM_SCORER_CLIENT_SCORER_CLIENT_H_
