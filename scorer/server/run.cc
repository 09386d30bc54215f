#include "scorer/server/run.h"

#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/synchronization/mutex.h"
#include "common/program.h"
#include "common/status_macros.h"
#include "common/tls_files.h"
#include "google/protobuf/descriptor.h"
#include "grpc/health/v1/health.pb.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/resource_quota.h"
#include "prometheus/counter.h"
#include "prometheus/exposer.h"
#include "prometheus/registry.h"
#include "scorer/framework/profile_set.h"
#include "scorer/server/metrics.h"
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

namespace {

// gRPC's canonical code names, as grpcurl and the gRPC docs print them.
std::string_view CodeName(grpc::StatusCode code) {
  static constexpr std::string_view kNames[] = {"OK",
                                                "CANCELLED",
                                                "UNKNOWN",
                                                "INVALID_ARGUMENT",
                                                "DEADLINE_EXCEEDED",
                                                "NOT_FOUND",
                                                "ALREADY_EXISTS",
                                                "PERMISSION_DENIED",
                                                "RESOURCE_EXHAUSTED",
                                                "FAILED_PRECONDITION",
                                                "ABORTED",
                                                "OUT_OF_RANGE",
                                                "UNIMPLEMENTED",
                                                "INTERNAL",
                                                "UNAVAILABLE",
                                                "DATA_LOSS",
                                                "UNAUTHENTICATED"};
  const int i = static_cast<int>(code);
  return i >= 0 && i < static_cast<int>(std::size(kNames)) ? kNames[i]
                                                           : "UNKNOWN";
}

// kscore_scorer_calls_total{method, code}: each replica's load and errors.
class CallMetrics final : public kscore::server::CallObserver {
 public:
  explicit CallMetrics(prometheus::Registry& registry)
      : calls_(
            prometheus::BuildCounter()
                .Name("kscore_scorer_calls_total")
                .Help("Scorer calls answered, by gRPC method and status code.")
                .Register(registry)) {
    // Every method's OK series exists from the start, at 0, so rates and
    // per-replica comparisons work before the first call.
    const google::protobuf::ServiceDescriptor* service =
        google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(
            kscore::scorer::v1::Scorer::service_full_name());
    for (int i = 0; service != nullptr && i < service->method_count(); ++i) {
      calls_.Add({{"method", service->method(i)->name()}, {"code", "OK"}});
    }
  }

  void OnCall(std::string_view method, grpc::StatusCode code) override {
    calls_
        .Add({{"method", std::string(method)},
              {"code", std::string(CodeName(code))}})
        .Increment();
  }

 private:
  prometheus::Family<prometheus::Counter>& calls_;
};

// The gRPC port's credentials from --tls-cert-file, --tls-private-key-file
// and --client-ca-file: plaintext when none is given.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ServerCredentials() {
  const std::string cert_file = absl::GetFlag(FLAGS_tls_cert_file);
  const std::string key_file = absl::GetFlag(FLAGS_tls_private_key_file);
  const std::string ca_file = absl::GetFlag(FLAGS_client_ca_file);
  if (cert_file.empty() && key_file.empty()) {
    if (!ca_file.empty()) {
      return absl::InvalidArgumentError(
          "--client-ca-file needs --tls-cert-file and --tls-private-key-file");
    }
    return grpc::InsecureServerCredentials();
  }
  if (cert_file.empty() || key_file.empty()) {
    return absl::InvalidArgumentError(
        "--tls-cert-file and --tls-private-key-file go together");
  }
  kscore::common::TlsFiles tls;
  KSCORE_ASSIGN_OR_RETURN(
      tls.cert, kscore::common::ReadPemFlag("tls-cert-file", cert_file));
  KSCORE_ASSIGN_OR_RETURN(
      tls.key, kscore::common::ReadPemFlag("tls-private-key-file", key_file));
  KSCORE_ASSIGN_OR_RETURN(
      tls.ca, kscore::common::ReadPemFlag("client-ca-file", ca_file));
  grpc::SslServerCredentialsOptions options(
      tls.ca.empty()
          ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
          : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  options.pem_root_certs = tls.ca;
  options.pem_key_cert_pairs.push_back({tls.key, tls.cert});
  return grpc::SslServerCredentials(options);
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

}  // namespace

namespace kscore::server {

namespace {

// The limits' flags: each positive, --max-request-bytes an int (gRPC takes
// one: at most 2 GiB - 1) and at most --grpc-memory-limit-bytes. Logs what
// is wrong otherwise.
bool LimitFlagsValid() {
  const int max_batch = absl::GetFlag(FLAGS_max_batch_nodes);
  if (max_batch <= 0) {
    spdlog::critical("--max-batch-nodes must be greater than 0, got {}",
                     max_batch);
    return false;
  }
  const int64_t max_request = absl::GetFlag(FLAGS_max_request_bytes);
  if (max_request <= 0 || max_request > std::numeric_limits<int>::max()) {
    spdlog::critical("--max-request-bytes must be between 1 and {}, got {}",
                     std::numeric_limits<int>::max(), max_request);
    return false;
  }
  for (const auto& [name, value] :
       {std::pair<const char*, int64_t>{"--max-plan-bytes",
                                        absl::GetFlag(FLAGS_max_plan_bytes)},
        {"--max-request-work", absl::GetFlag(FLAGS_max_request_work)}}) {
    if (value <= 0) {
      spdlog::critical("{} must be greater than 0, got {}", name, value);
      return false;
    }
  }
  const int64_t grpc_memory = absl::GetFlag(FLAGS_grpc_memory_limit_bytes);
  if (grpc_memory < max_request) {
    spdlog::critical(
        "--grpc-memory-limit-bytes ({}) must be at least --max-request-bytes "
        "({}): a request of the largest size must fit",
        grpc_memory, max_request);
    return false;
  }
  return true;
}

}  // namespace

int RunScorer(int argc, char** argv, framework::Registry registry) {
  kscore::common::StartProgram(
      argc, argv, "scorer",
      "scorer --config FILE [--listen ADDR] [--metrics-bind-address ADDR]\n"
      "Serves kscore.scorer.v1.Scorer for every profile in the config file.");

  const std::string config_path = absl::GetFlag(FLAGS_config);
  if (config_path.empty()) {
    spdlog::critical(
        "--config is required (a KubeSchedulerConfiguration file)");
    return 2;
  }
  if (!LimitFlagsValid()) return 2;
  const int max_batch = absl::GetFlag(FLAGS_max_batch_nodes);
  const int64_t max_request = absl::GetFlag(FLAGS_max_request_bytes);
  const int64_t grpc_memory = absl::GetFlag(FLAGS_grpc_memory_limit_bytes);
  auto profiles = kscore::framework::LoadProfileSet(config_path, registry);
  if (!profiles.ok()) {
    spdlog::critical(
        "invalid configuration: {}",
        profiles.status().ToString(absl::StatusToStringMode::kWithNoExtraData));
    return 1;
  }
  for (const std::string& w : (*profiles)->warnings) spdlog::warn("{}", w);

  // Block the shutdown signals in every thread; one thread waits for them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  // After the mask: making credentials starts gRPC's threads, which inherit
  // it, so that SIGTERM reaches the waiting thread only.
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials =
      ServerCredentials();
  if (!credentials.ok()) {
    spdlog::critical("{}", std::string(credentials.status().message()));
    return 2;
  }

  auto metrics_registry = std::make_shared<prometheus::Registry>();
  CallMetrics call_metrics(*metrics_registry);
  std::vector<std::string> served;
  for (const auto& [name, _] : (*profiles)->profiles) served.push_back(name);
  kscore::server::ExtensionPointMetrics extension_point_metrics(
      *metrics_registry, served);
  std::unique_ptr<prometheus::Exposer> exposer;
  const std::string metrics_address = absl::GetFlag(FLAGS_metrics_bind_address);
  if (!metrics_address.empty() && metrics_address != "0") {
    try {
      exposer = std::make_unique<prometheus::Exposer>(metrics_address);
      exposer->RegisterCollectable(metrics_registry);
      spdlog::info("serving /metrics on {}", metrics_address);
    } catch (const std::exception& e) {
      // Scoring matters more than its metrics: keep serving gRPC, loudly.
      spdlog::error(
          "cannot serve /metrics on --metrics-bind-address {}: {}; metrics "
          "disabled",
          metrics_address, e.what());
    }
  }

  const std::string listen = absl::GetFlag(FLAGS_listen);
  kscore::server::ServiceOptions options{
      max_batch, &call_metrics, &extension_point_metrics, ReplicaName(listen)};
  options.max_plan_bytes = absl::GetFlag(FLAGS_max_plan_bytes);
  options.max_request_work = absl::GetFlag(FLAGS_max_request_work);
  kscore::server::ScorerService service(profiles->get(), options);
  grpc::EnableDefaultHealthCheckService(true);
  // Keeps grpc.health.v1's descriptors linked in, for reflection.
  (void)grpc::health::v1::HealthCheckRequest::descriptor();
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(listen, *credentials, &port);
  builder.RegisterService(&service);
  builder.SetMaxReceiveMessageSize(static_cast<int>(max_request));
  // The transport's memory, bounded: the size limit alone is checked only
  // once the whole message is in (a 512 MiB request under a 4 MiB limit
  // peaked at 650 MiB RSS); the quota's reclaimer cancels the call first.
  grpc::ResourceQuota quota("kscore-scorer");
  quota.Resize(static_cast<size_t>(grpc_memory));
  builder.SetResourceQuota(quota);
  if (const int age = absl::GetFlag(FLAGS_max_connection_age_seconds);
      age > 0) {
    // A GOAWAY, not a cut: calls in flight get the drain grace to finish.
    builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_MS, age * 1000);
    builder.AddChannelArgument(
        GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS,
        absl::GetFlag(FLAGS_shutdown_grace_seconds) * 1000);
  }
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
  spdlog::info("scorer serving profiles [{}] on {} (port {}, {})",
               profile_names, listen, port,
               absl::GetFlag(FLAGS_tls_cert_file).empty()    ? "plaintext"
               : absl::GetFlag(FLAGS_client_ca_file).empty() ? "TLS"
                                                             : "mutual TLS");

  std::thread waiter([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    spdlog::info("received signal {}; draining", sig);
    // Not serving any more: load balancers and the shim move away first.
    server->GetHealthCheckService()->SetServingStatus(false);
    server->Shutdown(
        std::chrono::system_clock::now() +
        std::chrono::seconds(absl::GetFlag(FLAGS_shutdown_grace_seconds)));
  });
  server->Wait();
  waiter.join();
  spdlog::info("scorer stopped after {} calls", service.served_calls());
  return 0;
}

}  // namespace kscore::server
