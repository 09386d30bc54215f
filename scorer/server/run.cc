#include "scorer/server/run.h"

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "common/program.h"
#include "grpc/health/v1/health.pb.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/resource_quota.h"
#include "prometheus/exposer.h"
#include "prometheus/registry.h"
#include "scorer/server/metrics.h"
#include "scorer/server/options.h"
#include "scorer/server/scorer_service.h"
#include "spdlog/spdlog.h"

ABSL_FLAG(std::string, config, "",
          "Path to a KubeSchedulerConfiguration "
          "(kubescheduler.config.k8s.io/v1) file");
ABSL_FLAG(std::string, listen, "0.0.0.0:50051",
          "Address to serve gRPC on, host:port (port 0 picks a free one)");
ABSL_FLAG(int, max_batch_nodes, 5000,
          "Largest batch of nodes one call may carry");
ABSL_FLAG(int64_t, max_plan_bytes, int64_t{4} << 20,
          "Largest plan a pod may need, in bytes (some pod fields make plans "
          "that grow with their square); a call about a pod whose plan "
          "would be larger is refused with INVALID_ARGUMENT");
ABSL_FLAG(int64_t, max_request_work, int64_t{4} << 30,
          "Most bytes one call may read, counting each pass a plugin makes "
          "over the pod for each node and taint, and over the pod, cluster "
          "data and PodDisruptionBudgets for each preemption victim; a call "
          "that would read more is refused with INVALID_ARGUMENT");
ABSL_FLAG(int64_t, max_request_bytes, int64_t{64} << 20,
          "Largest request message accepted, in bytes; a larger one is "
          "refused with RESOURCE_EXHAUSTED");
ABSL_FLAG(int64_t, grpc_memory_limit_bytes, int64_t{128} << 20,
          "Memory gRPC may hold for the messages it is receiving, every "
          "connection together; past it, calls are cancelled with "
          "RESOURCE_EXHAUSTED. gRPC reads a whole message before comparing "
          "it with --max-request-bytes, so this is what bounds memory when a "
          "client sends more. At least --max-request-bytes");
ABSL_FLAG(
    int, shutdown_grace_seconds, 10,
    "On SIGTERM, how long in-flight calls may take before they are cancelled");
ABSL_FLAG(int, max_connection_age_seconds, 30,
          "Ask clients to reconnect after this long (0: never), so a client "
          "balancing over dns:/// re-resolves and finds new replicas");
ABSL_FLAG(std::string, tls_cert_file, "",
          "PEM certificate (chain) to serve gRPC over TLS with; needs "
          "--tls-private-key-file. Unset: plaintext");
ABSL_FLAG(std::string, tls_private_key_file, "",
          "PEM private key of --tls-cert-file");
ABSL_FLAG(std::string, client_ca_file, "",
          "PEM CA bundle: with TLS on, every client must present a "
          "certificate it signed (mutual TLS)");
ABSL_FLAG(std::string, metrics_bind_address, "0.0.0.0:9090",
          "host:port serving Prometheus /metrics (plain HTTP); \"\" or \"0\" "
          "disables");

namespace kscore::server {
namespace {

Flags FlagsFromCommandLine() {
  Flags f;
  f.config = absl::GetFlag(FLAGS_config);
  f.listen = absl::GetFlag(FLAGS_listen);
  f.max_batch_nodes = absl::GetFlag(FLAGS_max_batch_nodes);
  f.max_request_bytes = absl::GetFlag(FLAGS_max_request_bytes);
  f.max_plan_bytes = absl::GetFlag(FLAGS_max_plan_bytes);
  f.max_request_work = absl::GetFlag(FLAGS_max_request_work);
  f.grpc_memory_limit_bytes = absl::GetFlag(FLAGS_grpc_memory_limit_bytes);
  f.shutdown_grace_seconds = absl::GetFlag(FLAGS_shutdown_grace_seconds);
  f.max_connection_age_seconds =
      absl::GetFlag(FLAGS_max_connection_age_seconds);
  f.tls_cert_file = absl::GetFlag(FLAGS_tls_cert_file);
  f.tls_private_key_file = absl::GetFlag(FLAGS_tls_private_key_file);
  f.client_ca_file = absl::GetFlag(FLAGS_client_ca_file);
  f.metrics_bind_address = absl::GetFlag(FLAGS_metrics_bind_address);
  return f;
}

// This replica's name in explanations: the host name (the pod's name in a
// cluster) and the port of --listen.
std::string ReplicaName(const std::string& listen) {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) host[0] = '\0';
  const size_t colon = listen.rfind(':');
  return colon == std::string::npos ? std::string(host)
                                    : std::string(host) + listen.substr(colon);
}

// The Prometheus registry the scorer's metrics live in, served on /metrics
// when options.metrics_address says where.
class Metrics {
 public:
  explicit Metrics(const Options& o)
      : registry_(std::make_shared<prometheus::Registry>()),
        calls_(*registry_),
        extension_points_(*registry_, ServedNames(o)) {
    if (o.metrics_address.empty()) return;
    try {
      exposer_ = std::make_unique<prometheus::Exposer>(o.metrics_address);
      exposer_->RegisterCollectable(registry_);
      spdlog::info("serving /metrics on {}", o.metrics_address);
    } catch (const std::exception& e) {
      // Scoring matters more than its metrics: keep serving gRPC, loudly.
      spdlog::error(
          "cannot serve /metrics on --metrics-bind-address {}: {}; metrics "
          "disabled",
          o.metrics_address, e.what());
    }
  }
  CallMetrics* calls() { return &calls_; }
  ExtensionPointMetrics* extension_points() { return &extension_points_; }

 private:
  static std::vector<std::string> ServedNames(const Options& o) {
    std::vector<std::string> served;
    for (const auto& [name, _] : o.profiles->profiles) served.push_back(name);
    return served;
  }

  std::shared_ptr<prometheus::Registry> registry_;
  CallMetrics calls_;
  ExtensionPointMetrics extension_points_;
  std::unique_ptr<prometheus::Exposer> exposer_;
};

// The gRPC server on options.listen, serving `service` with health and
// reflection; nullptr when it cannot listen. `port` receives the port.
std::unique_ptr<grpc::Server> StartServer(
    const Options& o, const std::shared_ptr<grpc::ServerCredentials>& creds,
    ScorerService& service, int* port) {
  grpc::EnableDefaultHealthCheckService(true);
  // Keeps grpc.health.v1's descriptors linked in, for reflection.
  (void)grpc::health::v1::HealthCheckRequest::descriptor();
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(o.listen, creds, port);
  builder.RegisterService(&service);
  builder.SetMaxReceiveMessageSize(o.max_request_bytes);
  // The transport's memory, bounded: the size limit alone is checked only
  // once the whole message is in (a 512 MiB request under a 4 MiB limit
  // peaked at 650 MiB RSS); the quota's reclaimer cancels the call first.
  grpc::ResourceQuota quota("kscore-scorer");
  quota.Resize(static_cast<size_t>(o.grpc_memory_limit_bytes));
  builder.SetResourceQuota(quota);
  if (o.max_connection_age_seconds > 0) {
    // A GOAWAY, not a cut: calls in flight get the drain grace to finish.
    builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_MS,
                               o.max_connection_age_seconds * 1000);
    builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS,
                               o.shutdown_grace_seconds * 1000);
  }
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || *port == 0) return nullptr;
  server->GetHealthCheckService()->SetServingStatus(true);
  return server;
}

// Blocks the shutdown signals in the calling thread (and the threads it
// starts after); WaitForShutdown's thread waits for them.
sigset_t BlockShutdownSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

// Serves until one of `signals` arrives, then drains: not serving any more,
// in-flight calls get the grace before they are cancelled.
void WaitForShutdown(grpc::Server& server, const sigset_t& signals,
                     int grace_seconds) {
  std::thread waiter([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    spdlog::info("received signal {}; draining", sig);
    // Not serving any more: load balancers and the shim move away first.
    server.GetHealthCheckService()->SetServingStatus(false);
    server.Shutdown(std::chrono::system_clock::now() +
                    std::chrono::seconds(grace_seconds));
  });
  server.Wait();
  waiter.join();
}

}  // namespace

int RunScorer(int argc, char** argv, framework::Registry registry) {
  common::StartProgram(
      argc, argv, "scorer",
      "scorer --config FILE [--listen ADDR] [--metrics-bind-address ADDR]\n"
      "Serves kscore.scorer.v1.Scorer for every profile in the config file.");
  const Flags flags = FlagsFromCommandLine();
  absl::StatusOr<Options> options = LoadOptions(flags, registry);
  if (!options.ok()) {
    spdlog::critical("{}", std::string(options.status().message()));
    return ExitCode(options.status());
  }
  for (const std::string& w : options->profiles->warnings) {
    spdlog::warn("{}", w);
  }
  const sigset_t signals = BlockShutdownSignals();
  // After the mask: making credentials starts gRPC's threads, which inherit
  // it, so that SIGTERM reaches the waiting thread only.
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials =
      ServerCredentials(flags);
  if (!credentials.ok()) {
    spdlog::critical("{}", std::string(credentials.status().message()));
    return ExitCode(credentials.status());
  }
  Metrics metrics(*options);
  ServiceOptions service_options{options->max_batch_nodes, metrics.calls(),
                                 metrics.extension_points(),
                                 ReplicaName(options->listen)};
  service_options.max_plan_bytes = options->max_plan_bytes;
  service_options.max_request_work = options->max_request_work;
  ScorerService service(options->profiles.get(), service_options);
  int port = 0;
  std::unique_ptr<grpc::Server> server =
      StartServer(*options, *credentials, service, &port);
  if (server == nullptr) {
    spdlog::critical("cannot listen on {}", options->listen);
    return 1;
  }
  std::string profile_names;
  for (const auto& [name, _] : options->profiles->profiles) {
    profile_names += (profile_names.empty() ? "" : ", ") + name;
  }
  spdlog::info("scorer serving profiles [{}] on {} (port {}, {})",
               profile_names, options->listen, port, options->transport);
  WaitForShutdown(*server, signals, options->shutdown_grace_seconds);
  spdlog::info("scorer stopped after {} calls", service.served_calls());
  return 0;
}

}  // namespace kscore::server
