#ifndef KSCORE_SCORER_SERVER_OPTIONS_H_
#define KSCORE_SCORER_SERVER_OPTIONS_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "grpcpp/security/server_credentials.h"
#include "scorer/framework/profile_set.h"
#include "scorer/framework/registry.h"

namespace kscore::server {

// The scorer's flags as given on the command line (RunScorer copies them
// from Abseil's flags), with the flags' defaults.
struct Flags {
  std::string config;
  std::string listen = "0.0.0.0:50051";
  int max_batch_nodes = 5000;
  int64_t max_request_bytes = int64_t{64} << 20;
  int64_t max_plan_bytes = int64_t{4} << 20;
  int64_t max_request_work = int64_t{4} << 30;
  int64_t grpc_memory_limit_bytes = int64_t{128} << 20;
  int shutdown_grace_seconds = 10;
  int max_connection_age_seconds = 30;
  // TLS on the gRPC port: a certificate and key turn it on; a client CA
  // makes it mutual. Paths as given.
  std::string tls_cert_file;
  std::string tls_private_key_file;
  std::string client_ca_file;
  std::string metrics_bind_address = "0.0.0.0:9090";
};

// Everything the scorer serves with: the flags checked, the configuration
// file built into profiles.
struct Options {
  std::unique_ptr<framework::ProfileSet> profiles;
  std::string listen;
  int max_batch_nodes = 0;
  int max_request_bytes = 0;     // gRPC takes an int
  int64_t max_plan_bytes = 0;    // ServiceOptions::max_plan_bytes
  int64_t max_request_work = 0;  // ServiceOptions::max_request_work
  int64_t grpc_memory_limit_bytes = 0;
  int shutdown_grace_seconds = 0;
  int max_connection_age_seconds = 0;  // 0: never
  std::string metrics_address;         // "": /metrics is not served
  // How the gRPC port is served, for the start-up line: "plaintext", "TLS"
  // or "mutual TLS".
  std::string transport;
};

// Checks the flags, then reads and builds flags.config with `registry`'s
// plugins. The error's message is the line to log; its code says the exit
// code (ExitCode): kInvalidArgument for a flag, kFailedPrecondition for the
// configuration.
absl::StatusOr<Options> LoadOptions(const Flags& flags,
                                    const framework::Registry& registry);

// The gRPC port's credentials from the TLS flags (PEM files read now):
// plaintext when none is given. InvalidArgument naming the flag. Making
// them starts gRPC's threads, so a caller that blocks signals for one
// thread to wait for does so first.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ServerCredentials(
    const Flags& flags);

// The process's exit code for an error of LoadOptions or ServerCredentials:
// 1 for the configuration, 2 for a flag.
int ExitCode(const absl::Status& status);

}  // namespace kscore::server

#endif  // KSCORE_SCORER_SERVER_OPTIONS_H_
