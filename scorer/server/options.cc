#include "scorer/server/options.h"

#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/tls_files.h"
#include "grpcpp/security/server_credentials.h"

namespace kscore::server {
namespace {

absl::Status CheckLimits(const Flags& flags) {
  if (flags.config.empty()) {
    return absl::InvalidArgumentError(
        "--config is required (a KubeSchedulerConfiguration file)");
  }
  if (flags.max_batch_nodes <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max-batch-nodes must be greater than 0, got ",
                     flags.max_batch_nodes));
  }
  // gRPC takes an int: at most 2 GiB - 1.
  if (flags.max_request_bytes <= 0 ||
      flags.max_request_bytes > std::numeric_limits<int>::max()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--max-request-bytes must be between 1 and ",
        std::numeric_limits<int>::max(), ", got ", flags.max_request_bytes));
  }
  for (const auto& [name, value] :
       {std::pair<const char*, int64_t>{"--max-plan-bytes",
                                        flags.max_plan_bytes},
        {"--max-request-work", flags.max_request_work}}) {
    if (value <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, " must be greater than 0, got ", value));
    }
  }
  if (flags.grpc_memory_limit_bytes < flags.max_request_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--grpc-memory-limit-bytes (", flags.grpc_memory_limit_bytes,
        ") must be at least --max-request-bytes (", flags.max_request_bytes,
        "): a request of the largest size must fit"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Options> LoadOptions(const Flags& flags,
                                    const framework::Registry& registry) {
  KSCORE_RETURN_IF_ERROR(CheckLimits(flags));
  Options o;
  absl::StatusOr<std::unique_ptr<framework::ProfileSet>> profiles =
      framework::LoadProfileSet(flags.config, registry);
  if (!profiles.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("invalid configuration: ",
                     profiles.status().ToString(
                         absl::StatusToStringMode::kWithNoExtraData)));
  }
  o.profiles = *std::move(profiles);
  o.listen = flags.listen;
  o.max_batch_nodes = flags.max_batch_nodes;
  o.max_request_bytes = static_cast<int>(flags.max_request_bytes);
  o.max_plan_bytes = flags.max_plan_bytes;
  o.max_request_work = flags.max_request_work;
  o.grpc_memory_limit_bytes = flags.grpc_memory_limit_bytes;
  o.shutdown_grace_seconds = flags.shutdown_grace_seconds;
  o.max_connection_age_seconds = flags.max_connection_age_seconds;
  if (flags.metrics_bind_address != "0") {
    o.metrics_address = flags.metrics_bind_address;
  }
  o.transport = flags.tls_cert_file.empty()    ? "plaintext"
                : flags.client_ca_file.empty() ? "TLS"
                                               : "mutual TLS";
  return o;
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ServerCredentials(
    const Flags& flags) {
  const std::string& cert_file = flags.tls_cert_file;
  const std::string& key_file = flags.tls_private_key_file;
  const std::string& ca_file = flags.client_ca_file;
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
  common::TlsFiles tls;
  KSCORE_ASSIGN_OR_RETURN(tls.cert,
                          common::ReadPemFlag("tls-cert-file", cert_file));
  KSCORE_ASSIGN_OR_RETURN(
      tls.key, common::ReadPemFlag("tls-private-key-file", key_file));
  KSCORE_ASSIGN_OR_RETURN(tls.ca,
                          common::ReadPemFlag("client-ca-file", ca_file));
  grpc::SslServerCredentialsOptions options(
      tls.ca.empty()
          ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
          : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  options.pem_root_certs = tls.ca;
  options.pem_key_cert_pairs.push_back({tls.key, tls.cert});
  return grpc::SslServerCredentials(options);
}

int ExitCode(const absl::Status& status) {
  return status.code() == absl::StatusCode::kFailedPrecondition ? 1 : 2;
}

}  // namespace kscore::server
