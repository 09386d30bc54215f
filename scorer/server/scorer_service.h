#ifndef KSCORE_SCORER_SERVER_SCORER_SERVICE_H_
#define KSCORE_SCORER_SERVER_SCORER_SERVICE_H_

#include <atomic>
#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "kscore/scorer/v1/scorer.grpc.pb.h"
#include "scorer/framework/profile_set.h"
#include "scorer/framework/sessions.h"
#include "scorer/server/arena_allocator.h"
#include "scorer/server/node_store.h"

namespace kscore::server {

namespace pb = ::kscore::scorer::v1;

// Told about every answered call: the method's name as in the proto
// ("Evaluate") and the status code returned. Metrics live behind it, outside
// the adapter. Called concurrently from gRPC's threads.
class CallObserver {
 public:
  virtual ~CallObserver() = default;
  virtual void OnCall(std::string_view method, grpc::StatusCode code) = 0;
};

struct ServiceOptions {
  // Larger batches are refused with INVALID_ARGUMENT; the shim splits.
  int max_batch_nodes = 5000;
  // Optional; must outlive the service.
  CallObserver* observer = nullptr;
  // Optional: told how long each extension point of each call took. Must
  // outlive the service.
  framework::ExtensionPointObserver* extension_points = nullptr;
  // Named in answers to requests that ask for explanations (explain_top),
  // so a person sees which replica decided: host name and port.
  std::string replica = {};
  // A pod whose plan would take more bytes is refused with
  // INVALID_ARGUMENT (Profile::CheckPlanSize) by every call that builds
  // the plan: 4 MiB, gRPC's default for the largest message a client
  // receives, which a Plan answer must fit anyway.
  int64_t max_plan_bytes = int64_t{4} << 20;
  // A call whose work grows with the product of two of its lists (the
  // pod's bytes times the nodes and their taints; victims times the pod,
  // cluster data and disruption budgets) is refused with INVALID_ARGUMENT
  // past this many bytes read (framework/request_bounds.h). 4 GiB: a few
  // seconds of one core; the shim's largest preemption request (20000
  // victims) with 200 KB of pod, cluster data and budgets stays under it.
  int64_t max_request_work = int64_t{4} << 30;
  // Sessions kept for batching equivalent pods (framework/sessions.h): at
  // most this many, holding at most this many bytes of raw scores; the
  // least recently used go first. One session of a 5000-node cycle with 8
  // score plugins takes about 320 KB.
  size_t max_sessions = 256;
  size_t max_session_bytes = size_t{256} << 20;
  // Nodes kept by content key (node_store.h): about 1 KB each.
  size_t max_kept_nodes = 65536;
};

// The gRPC adapter: decode the request, call the framework, encode the
// response. No placement logic lives here. Callback API: requests that carry
// nodes are decoded onto a per-call Arena.
class ScorerService final : public pb::Scorer::CallbackService {
 public:
  ScorerService(const framework::ProfileSet* profiles, ServiceOptions options);
  grpc::ServerUnaryReactor* ListProfiles(
      grpc::CallbackServerContext* ctx, const pb::ListProfilesRequest* req,
      pb::ListProfilesResponse* resp) override {
    return Finish(ctx, "ListProfiles", DoListProfiles(req, resp));
  }
  grpc::ServerUnaryReactor* Plan(grpc::CallbackServerContext* ctx,
                                 const pb::PlanRequest* req,
                                 pb::PlanResponse* resp) override {
    return Finish(ctx, "Plan", DoPlan(req, resp));
  }
  grpc::ServerUnaryReactor* PreFilter(grpc::CallbackServerContext* ctx,
                                      const pb::PreFilterRequest* req,
                                      pb::PreFilterResponse* resp) override {
    return Finish(ctx, "PreFilter", DoPreFilter(req, resp));
  }
  grpc::ServerUnaryReactor* Filter(grpc::CallbackServerContext* ctx,
                                   const pb::FilterRequest* req,
                                   pb::FilterResponse* resp) override {
    return Finish(ctx, "Filter", DoFilter(req, resp));
  }
  grpc::ServerUnaryReactor* PreScore(grpc::CallbackServerContext* ctx,
                                     const pb::PreScoreRequest* req,
                                     pb::PreScoreResponse* resp) override {
    return Finish(ctx, "PreScore", DoPreScore(req, resp));
  }
  grpc::ServerUnaryReactor* Score(grpc::CallbackServerContext* ctx,
                                  const pb::ScoreRequest* req,
                                  pb::ScoreResponse* resp) override {
    return Finish(ctx, "Score", DoScore(req, resp));
  }
  grpc::ServerUnaryReactor* NormalizeScore(
      grpc::CallbackServerContext* ctx, const pb::NormalizeScoreRequest* req,
      pb::NormalizeScoreResponse* resp) override {
    return Finish(ctx, "NormalizeScore", DoNormalizeScore(req, resp));
  }
  grpc::ServerUnaryReactor* Evaluate(grpc::CallbackServerContext* ctx,
                                     const pb::EvaluateRequest* req,
                                     pb::EvaluateResponse* resp) override {
    return Finish(ctx, "Evaluate", DoEvaluate(req, resp));
  }

  grpc::ServerUnaryReactor* QueueingHint(
      grpc::CallbackServerContext* ctx, const pb::QueueingHintRequest* req,
      pb::QueueingHintResponse* resp) override {
    return Finish(ctx, "QueueingHint", DoQueueingHint(req, resp));
  }

  grpc::ServerUnaryReactor* Preempt(grpc::CallbackServerContext* ctx,
                                    const pb::PreemptRequest* req,
                                    pb::PreemptResponse* resp) override {
    return Finish(ctx, "Preempt", DoPreempt(req, resp));
  }

  // Calls answered (any outcome), for logs and tests.
  uint64_t served_calls() const { return served_.load(); }

 private:
  // Answers a call with `status` (converted once, here, to gRPC's) and
  // counts it: served_calls and the observer.
  grpc::ServerUnaryReactor* Finish(grpc::CallbackServerContext* ctx,
                                   std::string_view method,
                                   const absl::Status& status);
  // Each call's body: the response is filled when the status is OK.
  absl::Status DoListProfiles(const pb::ListProfilesRequest* req,
                              pb::ListProfilesResponse* resp);
  absl::Status DoPlan(const pb::PlanRequest* req, pb::PlanResponse* resp);
  absl::Status DoPreFilter(const pb::PreFilterRequest* req,
                           pb::PreFilterResponse* resp);
  absl::Status DoFilter(const pb::FilterRequest* req, pb::FilterResponse* resp);
  absl::Status DoPreScore(const pb::PreScoreRequest* req,
                          pb::PreScoreResponse* resp);
  absl::Status DoScore(const pb::ScoreRequest* req, pb::ScoreResponse* resp);
  absl::Status DoNormalizeScore(const pb::NormalizeScoreRequest* req,
                                pb::NormalizeScoreResponse* resp);
  absl::Status DoEvaluate(const pb::EvaluateRequest* req,
                          pb::EvaluateResponse* resp);
  // An Evaluate with `update`: the session's cycle for the changed nodes.
  // TakeSession finds its session (nullptr: session_missing), rebased
  // when the update says so; UpdateAnswerTo writes what it decided.
  std::unique_ptr<framework::Session> TakeSession(
      const framework::Profile& profile, const pb::EvaluateRequest& req);
  void UpdateAnswerTo(const pb::EvaluateRequest& req,
                      const framework::NodeVerdicts& ev,
                      const framework::SessionBest& best,
                      pb::EvaluateResponse* resp) const;
  // The update's `ahead` windows, each normalised over the session as the
  // update left it, into resp->ahead.
  absl::Status AheadTo(const framework::Session& s,
                       const pb::EvaluateRequest& req,
                       pb::EvaluateResponse* resp) const;
  absl::Status DoUpdate(const framework::Profile& profile,
                        const pb::EvaluateRequest& req,
                        const ResolvedNodes& resolved,
                        pb::EvaluateResponse* resp);
  // Keeps a normalised table as session `id` (keep_session), when the
  // cluster data say the pod's answers depend on nothing but the nodes.
  void KeepSession(uint64_t id, const framework::Profile& profile,
                   const pb::Pod& pod, const pb::ClusterData& cluster,
                   const framework::ScoreTable& table,
                   const framework::CycleState& state);
  absl::Status DoQueueingHint(const pb::QueueingHintRequest* req,
                              pb::QueueingHintResponse* resp);
  absl::Status DoPreempt(const pb::PreemptRequest* req,
                         pb::PreemptResponse* resp);

  const framework::ProfileSet* profiles_;
  ServiceOptions options_;
  framework::SessionStore sessions_;
  NodeStore nodes_;
  std::atomic<uint64_t> served_{0};
  ArenaAllocator<pb::FilterRequest, pb::FilterResponse> filter_alloc_;
  ArenaAllocator<pb::PreScoreRequest, pb::PreScoreResponse> pre_score_alloc_;
  ArenaAllocator<pb::ScoreRequest, pb::ScoreResponse> score_alloc_;
  ArenaAllocator<pb::NormalizeScoreRequest, pb::NormalizeScoreResponse>
      normalize_alloc_;
  ArenaAllocator<pb::EvaluateRequest, pb::EvaluateResponse> evaluate_alloc_;
  ArenaAllocator<pb::PreemptRequest, pb::PreemptResponse> preempt_alloc_;
};

}  // namespace kscore::server

#endif  // KSCORE_SCORER_SERVER_SCORER_SERVICE_H_
