// scorer: the stateless gRPC service that answers Filter / PreScore / Score /
// NormalizeScore for every profile of a KubeSchedulerConfiguration file.
#include <csignal>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "grpc/health/v1/health.pb.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/grpcpp.h"
#include "scorer/framework/profile_set.h"
#include "scorer/plugins/registry.h"
#include "scorer/server/flags.h"
#include "scorer/server/logging.h"
#include "scorer/server/scorer_service.h"
#include "spdlog/spdlog.h"

ABSL_FLAG(std::string, config, "",
          "Path to a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) file");
ABSL_FLAG(std::string, listen, "0.0.0.0:50051",
          "Address to serve gRPC on, host:port (port 0 picks a free one)");
ABSL_FLAG(int, v, 0, "Log verbosity, as kube-scheduler's -v (2: info, 4: debug, 6: trace)");
ABSL_FLAG(int, max_batch_nodes, 5000,
          "Largest batch of nodes one call may carry");
ABSL_FLAG(int, shutdown_grace_seconds, 10,
          "On SIGTERM, how long in-flight calls may take before they are cancelled");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "scorer --config FILE [--listen ADDR] [-v N]\n"
      "Serves kscore.scorer.v1.Scorer for every profile in the config file.");
  kscore::server::KubeStyleArgs args(argc, argv);
  absl::ParseCommandLine(args.argc(), args.argv.data());
  kscore::server::SetUpLogging("scorer", absl::GetFlag(FLAGS_v));

  const std::string config_path = absl::GetFlag(FLAGS_config);
  if (config_path.empty()) {
    spdlog::critical("--config is required (a KubeSchedulerConfiguration file)");
    return 2;
  }
  const int max_batch = absl::GetFlag(FLAGS_max_batch_nodes);
  if (max_batch <= 0) {
    spdlog::critical("--max-batch-nodes must be greater than 0, got {}", max_batch);
    return 2;
  }
  kscore::framework::Registry registry = kscore::plugins::DefaultRegistry();
  auto profiles = kscore::framework::LoadProfileSet(config_path, registry);
  if (!profiles.ok()) {
    spdlog::critical("invalid configuration: {}", profiles.status().ToString(absl::StatusToStringMode::kWithNoExtraData));
    return 1;
  }
  for (const std::string& w : (*profiles)->warnings) spdlog::warn("{}", w);

  // Block the shutdown signals in every thread; one thread waits for them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  kscore::server::ScorerService service(
      profiles->get(), kscore::server::ServiceOptions{max_batch});
  grpc::EnableDefaultHealthCheckService(true);
  // Keeps grpc.health.v1's descriptors linked in, for reflection.
  (void)grpc::health::v1::HealthCheckRequest::descriptor();
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  int port = 0;
  const std::string listen = absl::GetFlag(FLAGS_listen);
  builder.AddListeningPort(listen, grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  builder.SetMaxReceiveMessageSize(64 << 20);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    spdlog::critical("cannot listen on {}", listen);
    return 1;
  }
  server->GetHealthCheckService()->SetServingStatus(true);
  std::string profile_names;
  for (const auto& [name, _] : (*profiles)->profiles) {
    profile_names += (profile_names.empty() ? "" : ", ") + name;
  }
  spdlog::info("scorer serving profiles [{}] on {} (port {})", profile_names,
               listen, port);

  std::thread waiter([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    spdlog::info("received signal {}; draining", sig);
    // Not serving any more: load balancers and the shim move away first.
    server->GetHealthCheckService()->SetServingStatus(false);
    server->Shutdown(std::chrono::system_clock::now() +
                     std::chrono::seconds(absl::GetFlag(FLAGS_shutdown_grace_seconds)));
  });
  server->Wait();
  waiter.join();
  spdlog::info("scorer stopped after {} calls", service.served_calls());
  return 0;
}
