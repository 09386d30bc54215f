#ifndef KSCORE_SHIM_SCORER_CLIENT_SCORER_H_
#define KSCORE_SHIM_SCORER_CLIENT_SCORER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "google/protobuf/arena.h"
#include "kscore/scorer/v1/scorer.pb.h"

namespace kscore::scorer_client {

namespace pb = ::kscore::scorer::v1;

// What the status of a scorer call says of the scorer, decided here once
// for the client (retries, reachability) and the cycle (failure messages).
enum class CallOutcome {
  kAnswered,     // OK
  kUnreachable,  // UNAVAILABLE: no connection, or it broke
  kNoAnswer,     // DEADLINE_EXCEEDED, CANCELLED: perhaps a slow scorer
  kOverloaded,   // RESOURCE_EXHAUSTED
  // ABORTED, UNKNOWN, UNIMPLEMENTED, UNAUTHENTICATED, PERMISSION_DENIED:
  // gRPC's own failures, not the scorer's words.
  kTransport,
  // Any other code: the scorer's own answer (INVALID_ARGUMENT,
  // FAILED_PRECONDITION, INTERNAL, ...: e.g. a plugin returned Error).
  kRefused,
};
CallOutcome ClassifyCall(absl::StatusCode code);
// Another replica may answer: unreachable, no answer, overloaded.
bool Retryable(CallOutcome outcome);
// The call got no answer from the scorer itself: neither an answer nor a
// refusal.
bool TransportFailure(CallOutcome outcome);

// The scorer as the scheduling cycle sees it (Envoy ext_authz's Client): the
// gRPC ScorerClient in production, a fake answering from a table in tests.
//
// A status that is not OK is either the transport's (UNAVAILABLE,
// DEADLINE_EXCEEDED, ...: no answer) or the scorer's own answer
// (INVALID_ARGUMENT, INTERNAL, ...: e.g. a plugin returned Error), with the
// scorer's wording as the message.
class Scorer {
 public:
  virtual ~Scorer() = default;

  // One result per request, in order. Each request is an encoded
  // pb::EvaluateRequest; responses are decoded onto `arena`, which must
  // outlive them.
  virtual std::vector<absl::StatusOr<pb::EvaluateResponse*>> EvaluateAll(
      absl::Span<const std::string> requests,
      google::protobuf::Arena* arena) = 0;
  virtual absl::StatusOr<pb::NormalizeScoreResponse> NormalizeScore(
      const pb::NormalizeScoreRequest& request) = 0;
  // The same, each request tried first on a replica chosen by its
  // affinity (one per request; the same affinity, the same replica while
  // the replicas stay the same): a session for batching
  // (pb::SessionUpdate) lives on the replica that kept it, and a replica
  // keeps the nodes it was sent (pb::Node::content_key). With one replica,
  // or in a fake, the calls above.
  virtual std::vector<absl::StatusOr<pb::EvaluateResponse*>> EvaluatePinned(
      absl::Span<const uint64_t> /*affinities*/,
      absl::Span<const std::string> requests, google::protobuf::Arena* arena) {
    return EvaluateAll(requests, arena);
  }
  // The replica (0 to replicas - 1) a pinned call with `affinity` tries
  // first.
  virtual int ReplicaOf(uint64_t /*affinity*/) const { return 0; }
  virtual absl::StatusOr<pb::NormalizeScoreResponse> NormalizeScorePinned(
      uint64_t /*affinity*/, const pb::NormalizeScoreRequest& request) {
    return NormalizeScore(request);
  }
  virtual absl::StatusOr<pb::ListProfilesResponse> ListProfiles() = 0;
  // What a pod's cycle needs from the whole cluster (pb::Profile::plans).
  virtual absl::StatusOr<pb::PlanResponse> Plan(
      const pb::PlanRequest& request) = 0;
  // Whether a cluster event may make rejected pods schedulable (the
  // plugins' queueing hints).
  virtual absl::StatusOr<pb::QueueingHintResponse> QueueingHint(
      const pb::QueueingHintRequest& request) = 0;
  // PostFilter (DefaultPreemption) for a pod no node took: where to
  // preempt and whom. UNIMPLEMENTED from a scorer that predates the call.
  virtual absl::StatusOr<pb::PreemptResponse> Preempt(
      const pb::PreemptRequest& request) = 0;
  // The same with the request already encoded (a pb::PreemptRequest's
  // bytes); a fake's is Preempt's.
  virtual absl::StatusOr<pb::PreemptResponse> PreemptEncoded(
      const std::string& request) {
    pb::PreemptRequest decoded;
    if (!decoded.ParseFromString(request)) {
      return absl::InvalidArgumentError("PreemptRequest: bad encoding");
    }
    return Preempt(decoded);
  }
};

}  // namespace kscore::scorer_client

#endif  // KSCORE_SHIM_SCORER_CLIENT_SCORER_H_
