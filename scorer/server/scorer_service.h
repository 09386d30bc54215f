#ifndef KSCORE_SCORER_SERVER_SCORER_SERVICE_H_
#define KSCORE_SCORER_SERVER_SCORER_SERVICE_H_

#include <atomic>
#include <cstdint>
#include <string_view>

#include "kscore/scorer/v1/scorer.grpc.pb.h"
#include "scorer/framework/profile_set.h"
#include "scorer/server/arena_allocator.h"

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
    return Finish(ctx, DoListProfiles(req, resp));
  }
  grpc::ServerUnaryReactor* Plan(grpc::CallbackServerContext* ctx,
                                 const pb::PlanRequest* req,
                                 pb::PlanResponse* resp) override {
    return Finish(ctx, DoPlan(req, resp));
  }
  grpc::ServerUnaryReactor* PreFilter(grpc::CallbackServerContext* ctx,
                                      const pb::PreFilterRequest* req,
                                      pb::PreFilterResponse* resp) override {
    return Finish(ctx, DoPreFilter(req, resp));
  }
  grpc::ServerUnaryReactor* Filter(grpc::CallbackServerContext* ctx,
                                   const pb::FilterRequest* req,
                                   pb::FilterResponse* resp) override {
    return Finish(ctx, DoFilter(req, resp));
  }
  grpc::ServerUnaryReactor* PreScore(grpc::CallbackServerContext* ctx,
                                     const pb::PreScoreRequest* req,
                                     pb::PreScoreResponse* resp) override {
    return Finish(ctx, DoPreScore(req, resp));
  }
  grpc::ServerUnaryReactor* Score(grpc::CallbackServerContext* ctx,
                                  const pb::ScoreRequest* req,
                                  pb::ScoreResponse* resp) override {
    return Finish(ctx, DoScore(req, resp));
  }
  grpc::ServerUnaryReactor* NormalizeScore(
      grpc::CallbackServerContext* ctx, const pb::NormalizeScoreRequest* req,
      pb::NormalizeScoreResponse* resp) override {
    return Finish(ctx, DoNormalizeScore(req, resp));
  }
  grpc::ServerUnaryReactor* Evaluate(grpc::CallbackServerContext* ctx,
                                     const pb::EvaluateRequest* req,
                                     pb::EvaluateResponse* resp) override {
    return Finish(ctx, DoEvaluate(req, resp));
  }

  grpc::ServerUnaryReactor* QueueingHint(
      grpc::CallbackServerContext* ctx, const pb::QueueingHintRequest* req,
      pb::QueueingHintResponse* resp) override {
    return Finish(ctx, DoQueueingHint(req, resp));
  }

  grpc::ServerUnaryReactor* Preempt(grpc::CallbackServerContext* ctx,
                                    const pb::PreemptRequest* req,
                                    pb::PreemptResponse* resp) override {
    return Finish(ctx, DoPreempt(req, resp));
  }

  // Calls answered (any outcome), for logs and tests.
  uint64_t served_calls() const { return served_.load(); }

 private:
  static grpc::ServerUnaryReactor* Finish(grpc::CallbackServerContext* ctx,
                                          const grpc::Status& status) {
    grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
    reactor->Finish(status);
    return reactor;
  }
  grpc::Status DoListProfiles(const pb::ListProfilesRequest* req,
                              pb::ListProfilesResponse* resp);
  grpc::Status DoPlan(const pb::PlanRequest* req, pb::PlanResponse* resp);
  grpc::Status DoPreFilter(const pb::PreFilterRequest* req,
                           pb::PreFilterResponse* resp);
  grpc::Status DoFilter(const pb::FilterRequest* req, pb::FilterResponse* resp);
  grpc::Status DoPreScore(const pb::PreScoreRequest* req,
                          pb::PreScoreResponse* resp);
  grpc::Status DoScore(const pb::ScoreRequest* req, pb::ScoreResponse* resp);
  grpc::Status DoNormalizeScore(const pb::NormalizeScoreRequest* req,
                                pb::NormalizeScoreResponse* resp);
  grpc::Status DoEvaluate(const pb::EvaluateRequest* req,
                          pb::EvaluateResponse* resp);
  grpc::Status DoQueueingHint(const pb::QueueingHintRequest* req,
                              pb::QueueingHintResponse* resp);
  grpc::Status DoPreempt(const pb::PreemptRequest* req,
                         pb::PreemptResponse* resp);

  // The pod's plan checked against --max-plan-bytes, the cluster data's
  // numbers checked, then both bound to the cycle's state
  // (Profile::BindCluster checks their shape against the pod's plan).
  absl::Status BindCluster(const framework::Profile& profile,
                           framework::CycleState& state, const pb::Pod& pod,
                           const pb::ClusterData& cluster,
                           absl::Span<const pb::Node* const> nodes) const;

  // Runs one call's body and counts it, with the code it returned.
  template <typename Body>
  grpc::Status Counted(std::string_view method, Body&& body) {
    grpc::Status status = body();
    ++served_;
    if (options_.observer != nullptr) {
      options_.observer->OnCall(method, status.error_code());
    }
    return status;
  }

  const framework::ProfileSet* profiles_;
  ServiceOptions options_;
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
