#include "tests/support/in_process_scorer.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "grpcpp/grpcpp.h"
#include "model/config.h"
#include "scorer/framework/profile_set.h"
#include "scorer/plugins/registry.h"
#include "scorer/server/scorer_service.h"

namespace kscore::testing {

struct InProcessScorer::Parts {
  std::unique_ptr<framework::ProfileSet> profiles;
  std::unique_ptr<server::ScorerService> service;
  std::unique_ptr<grpc::Server> server;
};

InProcessScorer::InProcessScorer(std::unique_ptr<Parts> parts,
                                 std::string target)
    : parts_(std::move(parts)), target_(std::move(target)) {}

InProcessScorer::~InProcessScorer() {
  if (parts_->server) parts_->server->Shutdown();
}

absl::StatusOr<std::unique_ptr<InProcessScorer>> InProcessScorer::Start(
    absl::string_view config_yaml, absl::string_view listen) {
  auto parts = std::make_unique<Parts>();
  KSCORE_ASSIGN_OR_RETURN(model::SchedulerConfig config,
                          model::ParseSchedulerConfig(config_yaml));
  KSCORE_ASSIGN_OR_RETURN(
      parts->profiles,
      framework::BuildProfileSet(config, plugins::DefaultRegistry()));
  parts->service = std::make_unique<server::ScorerService>(
      parts->profiles.get(), server::ServiceOptions{});
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(std::string(listen),
                           grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(parts->service.get());
  parts->server = builder.BuildAndStart();
  if (parts->server == nullptr || port == 0) {
    return absl::InternalError("the in-process scorer did not start");
  }
  return std::unique_ptr<InProcessScorer>(
      new InProcessScorer(std::move(parts), absl::StrCat("127.0.0.1:", port)));
}

absl::StatusOr<std::map<std::string, std::vector<scorer::v1::ClusterEvent>>>
PluginEventsOf(absl::string_view config_yaml, absl::string_view profile) {
  KSCORE_ASSIGN_OR_RETURN(
      std::unique_ptr<framework::ProfileSet> profiles,
      framework::ParseProfileSet(config_yaml, plugins::DefaultRegistry()));
  auto it = profiles->profiles.find(std::string(profile));
  if (it == profiles->profiles.end()) {
    return absl::NotFoundError(absl::StrCat("no profile ", profile));
  }
  std::map<std::string, std::vector<scorer::v1::ClusterEvent>> events;
  for (const auto& info : it->second->Describe())
    events[info.name] = info.events;
  return events;
}

}  // namespace kscore::testing
