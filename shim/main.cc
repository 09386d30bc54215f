// shim: a named scheduler that watches the cluster, asks the scorer where
// each pending pod should go, and binds it. It holds no placement rule.
// main reads the flags; app::LoadOptions checks them with the configuration
// and app::RunShim wires and runs the parts (shim/app/shim.cc lists its
// threads).
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "common/program.h"
#include "shim/app/options.h"
#include "shim/app/shim.h"
#include "spdlog/spdlog.h"

ABSL_FLAG(std::string, config, "",
          "Path to a KubeSchedulerConfiguration file (required)");
ABSL_FLAG(
    std::string, kubeconfig, "",
    "Path to a kubeconfig; else clientConnection.kubeconfig, else in-cluster");
ABSL_FLAG(
    std::string, scorer, "",
    "gRPC target of the scorer, e.g. dns:///scorer.kscore-system.svc:50051 or "
    "127.0.0.1:50051,127.0.0.1:50052 (required)");
ABSL_FLAG(
    bool, leader_elect, true,
    "Elect a leader before scheduling (overrides leaderElection.leaderElect)");
ABSL_FLAG(std::string, leader_elect_lease_duration, "",
          "e.g. 15s (overrides the config)");
ABSL_FLAG(std::string, leader_elect_renew_deadline, "",
          "e.g. 10s (overrides the config)");
ABSL_FLAG(std::string, leader_elect_retry_period, "",
          "e.g. 2s (overrides the config)");
ABSL_FLAG(std::string, leader_elect_resource_name, "",
          "Lease name (default: the first profile's schedulerName)");
ABSL_FLAG(std::string, leader_elect_resource_namespace, "", "Lease namespace");
ABSL_FLAG(std::string, bind_address, "0.0.0.0",
          "The IP address on which to serve HTTPS (/healthz, /livez, /readyz, "
          "/metrics, /configz) on --secure-port");
ABSL_FLAG(int, secure_port, 10259,
          "The port on which to serve HTTPS with authentication and "
          "authorization; 0 serves no HTTPS");
ABSL_FLAG(std::string, tls_cert_file, "",
          "PEM certificate (chain) served on --secure-port; without it a "
          "self-signed certificate for localhost is made in memory");
ABSL_FLAG(std::string, tls_private_key_file, "",
          "PEM private key of --tls-cert-file");
ABSL_FLAG(std::string, authentication_kubeconfig, "",
          "kubeconfig with the right to create tokenreviews."
          "authentication.k8s.io (default: the shim's own API credentials)");
ABSL_FLAG(std::string, authorization_kubeconfig, "",
          "kubeconfig with the right to create subjectaccessreviews."
          "authorization.k8s.io (default: the shim's own API credentials)");
ABSL_FLAG(std::vector<std::string>, authorization_always_allow_paths,
          std::vector<std::string>({"/healthz", "/readyz", "/livez"}),
          "Paths served without authentication or authorization (a trailing "
          "* matches a prefix)");
ABSL_FLAG(std::string, insecure_serving_address, "",
          "host:port on which to serve the same paths over plain HTTP "
          "WITHOUT authentication or authorization (local tests and "
          "benchmarks; default: none)");
ABSL_FLAG(std::string, scorer_ca_file, "",
          "PEM CA bundle that signed the scorer's certificate: calls the "
          "scorer over TLS (default: plaintext)");
ABSL_FLAG(std::string, scorer_cert_file, "",
          "PEM client certificate for mutual TLS with the scorer (with "
          "--scorer-key-file)");
ABSL_FLAG(std::string, scorer_key_file, "",
          "PEM private key of --scorer-cert-file");
ABSL_FLAG(std::string, scorer_tls_server_name, "",
          "Name to check the scorer's certificate against, when not the "
          "host of --scorer");
ABSL_FLAG(int, scorer_batch_size, 500, "Candidate nodes per scorer call");
ABSL_FLAG(std::string, scorer_timeout, "5s", "Deadline of one scorer call");
ABSL_FLAG(int, bind_workers, 64,
          "Bindings in flight at once, more wait their turn (they are "
          "HTTP/2 streams on the API client's I/O thread, not threads; "
          "kube-scheduler binds each pod in a goroutine of its own)");

ABSL_FLAG(int, preemption_max_victim_pods, 20000,
          "A preemption's request to the scorer stops adding candidate nodes "
          "once their pods of lower priority pass this many (about 150 bytes "
          "each)");

ABSL_FLAG(int, explain_decisions, 1000,
          "Scheduling decisions kept for `kubectl kscore explain` (one per "
          "pod, the latest; about 2 KiB each), served at "
          "/debug/kscore/explain; 0 keeps none");
ABSL_FLAG(bool, record_scores, false,
          "Write kube-scheduler-simulator's result annotations "
          "(filter-result, score-result, finalscore-result, selected-node) "
          "on each scheduled pod; needs RBAC to patch pods");

int main(int argc, char** argv) {
  const kscore::common::KubeStyleArgs args = kscore::common::StartProgram(
      argc, argv, "shim",
      "shim --config FILE --scorer TARGET [--kubeconfig FILE] [-v N] "
      "[--leader-elect]");

  kscore::app::Flags flags;
  flags.config = absl::GetFlag(FLAGS_config);
  flags.kubeconfig = absl::GetFlag(FLAGS_kubeconfig);
  flags.scorer = absl::GetFlag(FLAGS_scorer);
  if (kscore::common::FlagGiven(args, "leader_elect")) {
    flags.leader_elect = absl::GetFlag(FLAGS_leader_elect);
  }
  flags.lease_duration = absl::GetFlag(FLAGS_leader_elect_lease_duration);
  flags.renew_deadline = absl::GetFlag(FLAGS_leader_elect_renew_deadline);
  flags.retry_period = absl::GetFlag(FLAGS_leader_elect_retry_period);
  flags.resource_name = absl::GetFlag(FLAGS_leader_elect_resource_name);
  flags.resource_namespace =
      absl::GetFlag(FLAGS_leader_elect_resource_namespace);
  flags.bind_address = absl::GetFlag(FLAGS_bind_address);
  flags.explain_decisions = absl::GetFlag(FLAGS_explain_decisions);
  flags.record_scores = absl::GetFlag(FLAGS_record_scores);
  flags.secure_port = absl::GetFlag(FLAGS_secure_port);
  flags.tls_cert_file = absl::GetFlag(FLAGS_tls_cert_file);
  flags.tls_private_key_file = absl::GetFlag(FLAGS_tls_private_key_file);
  flags.authentication_kubeconfig =
      absl::GetFlag(FLAGS_authentication_kubeconfig);
  flags.authorization_kubeconfig =
      absl::GetFlag(FLAGS_authorization_kubeconfig);
  flags.authorization_always_allow_paths =
      absl::GetFlag(FLAGS_authorization_always_allow_paths);
  flags.insecure_serving_address =
      absl::GetFlag(FLAGS_insecure_serving_address);
  flags.scorer_batch_size = absl::GetFlag(FLAGS_scorer_batch_size);
  flags.scorer_timeout = absl::GetFlag(FLAGS_scorer_timeout);
  flags.bind_workers = absl::GetFlag(FLAGS_bind_workers);
  flags.scorer_ca_file = absl::GetFlag(FLAGS_scorer_ca_file);
  flags.scorer_cert_file = absl::GetFlag(FLAGS_scorer_cert_file);
  flags.scorer_key_file = absl::GetFlag(FLAGS_scorer_key_file);
  flags.scorer_tls_server_name = absl::GetFlag(FLAGS_scorer_tls_server_name);
  flags.preemption_max_victim_pods =
      absl::GetFlag(FLAGS_preemption_max_victim_pods);

  absl::StatusOr<kscore::app::Options> options =
      kscore::app::LoadOptions(flags);
  if (!options.ok()) {
    spdlog::critical("{}", std::string(options.status().message()));
    return kscore::app::ExitCode(options.status());
  }
  return kscore::app::RunShim(*options);
}
