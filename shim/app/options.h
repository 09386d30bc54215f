#ifndef KSCORE_SHIM_APP_OPTIONS_H_
#define KSCORE_SHIM_APP_OPTIONS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/tls_files.h"
#include "model/config.h"
#include "shim/app/delegated_auth.h"
#include "shim/app/status_server.h"

namespace kscore::app {

// The shim's flags as given on the command line (main copies them from
// Abseil's flags; tests fill them in).
struct Flags {
  std::string config;
  std::string kubeconfig;
  std::string scorer;
  std::optional<bool> leader_elect;  // set only when the flag is given
  std::string lease_duration;        // durations as written, e.g. "15s"
  std::string renew_deadline;
  std::string retry_period;
  std::string resource_name;
  std::string resource_namespace;
  // Serving as kube-scheduler's secure port: HTTPS on
  // bind_address:secure_port (0 turns it off), a certificate or a
  // self-signed one, delegated authentication and authorization.
  std::string bind_address = "0.0.0.0";
  int secure_port = 10259;
  std::string tls_cert_file;
  std::string tls_private_key_file;
  std::string authentication_kubeconfig;  // "": the shim's own credentials
  std::string authorization_kubeconfig;
  std::vector<std::string> authorization_always_allow_paths = {
      "/healthz", "/readyz", "/livez"};
  // host:port of plain HTTP without authentication (tests, benchmarks).
  std::string insecure_serving_address;
  int scorer_batch_size = 500;
  std::string scorer_timeout = "5s";
  int bind_workers = 64;
  // TLS to the scorer: a CA turns it on; a certificate and key make it
  // mutual. Paths as given.
  std::string scorer_ca_file;
  std::string scorer_cert_file;
  std::string scorer_key_file;
  std::string scorer_tls_server_name;
  int preemption_max_victim_pods = 20000;
  int explain_decisions = 1000;
  bool record_scores = false;
};

// Everything the shim runs with: the flags over the configuration file,
// checked together.
struct Options {
  model::SchedulerConfig config;
  std::vector<std::string> served;  // the profiles' schedulerNames
  std::string kubeconfig;           // the flag; the config's is in `config`
  std::string scorer_target;
  // TLS to the scorer when scorer_tls.ca is set (PEM contents, read at
  // start); the server name checked against its certificate, when not the
  // target's host.
  common::TlsFiles scorer_tls;
  std::string scorer_tls_server_name;
  absl::Duration scorer_timeout;
  int scorer_batch_size = 500;
  int bind_workers = 64;
  // A Preempt request stops adding nodes past this many victim pods.
  int preemption_max_victim_pods = 20000;
  // The last decisions kept for kubectl kscore explain (0: none), and
  // kube-scheduler-simulator's annotations on each scheduled pod.
  int explain_decisions = 1000;
  bool record_scores = false;
  // Where the status server listens, with the certificate's PEM read.
  Serving serving;
  // Kubeconfigs for TokenReviews and SubjectAccessReviews ("": the shim's
  // own API client's configuration).
  std::string authentication_kubeconfig;
  std::string authorization_kubeconfig;
  PathAllowList always_allow_paths;
  // clientConnection.contentType: Kubernetes protobuf (else JSON) for reads
  // and writes.
  bool protobuf = true;
  // leaderElection with the flags applied; the Lease is named after the
  // first profile's scheduler unless resourceName or the flag names it.
  model::LeaderElectionConfig leader_election;
  std::string lease_name;
  std::string lease_namespace;
};

// Options from flags and an already decoded configuration. Errors name the
// flag or the field; a flag's error is kInvalidArgument (exit 2), the
// configuration's kFailedPrecondition (exit 1).
absl::StatusOr<Options> MakeOptions(const Flags& flags,
                                    model::SchedulerConfig config);
// Reads and strictly decodes flags.config, then MakeOptions.
absl::StatusOr<Options> LoadOptions(const Flags& flags);
// The process's exit code for an error of LoadOptions.
int ExitCode(const absl::Status& status);

}  // namespace kscore::app

#endif  // KSCORE_SHIM_APP_OPTIONS_H_
