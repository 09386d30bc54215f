#ifndef KSCORE_SCORER_SERVER_SCORER_SERVICE_H_
#define KSCORE_SCORER_SERVER_SCORER_SERVICE_H_

#include <atomic>
#include <cstdint>
#include <string_view>

#include "kscore/scorer/v1/scorer.grpc.pb.h"
#include "scorer/framework/profile_set.h"

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
};

// The gRPC adapter: decode the request, call the framework, encode the
// response. No placement logic lives here.
class ScorerService final : public pb::Scorer::Service {
 public:
  ScorerService(const framework::ProfileSet* profiles, ServiceOptions options)
      : profiles_(profiles), options_(options) {}

  grpc::Status ListProfiles(grpc::ServerContext* ctx,
                            const pb::ListProfilesRequest* req,
                            pb::ListProfilesResponse* resp) override;
  grpc::Status PreFilter(grpc::ServerContext* ctx,
                         const pb::PreFilterRequest* req,
                         pb::PreFilterResponse* resp) override;
  grpc::Status Filter(grpc::ServerContext* ctx, const pb::FilterRequest* req,
                      pb::FilterResponse* resp) override;
  grpc::Status PreScore(grpc::ServerContext* ctx,
                        const pb::PreScoreRequest* req,
                        pb::PreScoreResponse* resp) override;
  grpc::Status Score(grpc::ServerContext* ctx, const pb::ScoreRequest* req,
                     pb::ScoreResponse* resp) override;
  grpc::Status NormalizeScore(grpc::ServerContext* ctx,
                              const pb::NormalizeScoreRequest* req,
                              pb::NormalizeScoreResponse* resp) override;
  grpc::Status Evaluate(grpc::ServerContext* ctx,
                        const pb::EvaluateRequest* req,
                        pb::EvaluateResponse* resp) override;

  // Calls answered (any outcome), for logs and tests.
  uint64_t served_calls() const { return served_.load(); }

 private:
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
};

}  // namespace kscore::server

#endif  // KSCORE_SCORER_SERVER_SCORER_SERVICE_H_
