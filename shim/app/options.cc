#include "shim/app/options.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "model/plugin_args/in_tree.h"
#include "model/plugin_points.h"
#include "shim/app/serving_cert.h"
#include "shim/kube/protobuf_codec.h"

namespace kscore::app {
namespace {

absl::Status FlagError(const std::string& message) {
  return absl::InvalidArgumentError(message);
}

// A positive duration flag ("15s", "1m30s"); empty keeps *out.
absl::Status DurationFlag(const std::string& value, const char* name,
                          absl::Duration* out) {
  if (value.empty()) return absl::OkStatus();
  absl::Duration d;
  if (!absl::ParseDuration(value, &d) || d <= absl::ZeroDuration()) {
    return FlagError(absl::StrFormat(
        "--%s: invalid duration \"%s\" (a positive duration such as 15s)", name,
        value));
  }
  *out = d;
  return absl::OkStatus();
}

// "--a (5s) must be greater than --b (10s)" unless a > b.
absl::Status Longer(absl::Duration a, const char* a_flag, absl::Duration b,
                    const char* b_flag) {
  if (a > b) return absl::OkStatus();
  return FlagError(absl::StrCat("--", a_flag, " (", absl::FormatDuration(a),
                                ") must be greater than --", b_flag, " (",
                                absl::FormatDuration(b), ")"));
}

absl::Status ApplyLeaderElection(const Flags& flags, Options* o) {
  model::LeaderElectionConfig& le = o->leader_election;
  if (flags.leader_elect.has_value()) le.leader_elect = *flags.leader_elect;
  KSCORE_RETURN_IF_ERROR(DurationFlag(
      flags.lease_duration, "leader-elect-lease-duration", &le.lease_duration));
  KSCORE_RETURN_IF_ERROR(DurationFlag(
      flags.renew_deadline, "leader-elect-renew-deadline", &le.renew_deadline));
  KSCORE_RETURN_IF_ERROR(DurationFlag(
      flags.retry_period, "leader-elect-retry-period", &le.retry_period));
  // The configuration checks its own values; flags may break the order.
  if (le.leader_elect) {
    KSCORE_RETURN_IF_ERROR(
        Longer(le.lease_duration, "leader-elect-lease-duration",
               le.renew_deadline, "leader-elect-renew-deadline"));
    KSCORE_RETURN_IF_ERROR(
        Longer(le.renew_deadline, "leader-elect-renew-deadline",
               le.retry_period, "leader-elect-retry-period"));
  }
  o->lease_name = flags.resource_name;
  if (o->lease_name.empty()) {
    // Named after the scheduler, never kube-scheduler's own lock.
    o->lease_name = le.resource_name_set
                        ? le.resource_name
                        : o->config.profiles.front().scheduler_name;
  }
  o->lease_namespace = flags.resource_namespace.empty()
                           ? le.resource_namespace
                           : flags.resource_namespace;
  return absl::OkStatus();
}

// --scorer-ca-file turns TLS to the scorer on; --scorer-cert-file and
// --scorer-key-file (together) make it mutual.
absl::Status ScorerTls(const Flags& flags, Options* o) {
  const bool cert = !flags.scorer_cert_file.empty();
  const bool key = !flags.scorer_key_file.empty();
  if (cert != key) {
    return FlagError("--scorer-cert-file and --scorer-key-file go together");
  }
  if (flags.scorer_ca_file.empty()) {
    if (cert || !flags.scorer_tls_server_name.empty()) {
      return FlagError(
          "--scorer-ca-file is required for TLS to the scorer (the CA that "
          "signed the scorer's certificate)");
    }
    return absl::OkStatus();
  }
  KSCORE_ASSIGN_OR_RETURN(
      o->scorer_tls.ca,
      common::ReadPemFlag("scorer-ca-file", flags.scorer_ca_file));
  KSCORE_ASSIGN_OR_RETURN(
      o->scorer_tls.cert,
      common::ReadPemFlag("scorer-cert-file", flags.scorer_cert_file));
  KSCORE_ASSIGN_OR_RETURN(
      o->scorer_tls.key,
      common::ReadPemFlag("scorer-key-file", flags.scorer_key_file));
  o->scorer_tls_server_name = flags.scorer_tls_server_name;
  return absl::OkStatus();
}

// kube-scheduler's serving flags: --bind-address an IP, --secure-port,
// the certificate and key together (checked to match), the always-allowed
// paths, and the plain-HTTP address when asked for.
absl::Status ApplyServing(const Flags& flags, Options* o) {
  Serving& s = o->serving;
  in6_addr ip{};
  const std::string& bind = flags.bind_address;
  if (inet_pton(AF_INET, bind.c_str(), &ip) != 1 &&
      inet_pton(AF_INET6, bind.c_str(), &ip) != 1) {
    std::string hint;
    if (absl::StrContains(bind, ':') && !absl::StrContains(bind, "::")) {
      hint =
          " (it is the IP only, as kube-scheduler's; the port is "
          "--secure-port, and plain HTTP is --insecure-serving-address)";
    }
    return FlagError(absl::StrCat("--bind-address: \"", bind,
                                  "\" is not an IP address", hint));
  }
  s.bind_address = bind;
  if (flags.secure_port < 0 || flags.secure_port > 65535) {
    return FlagError(
        absl::StrCat("--secure-port: must be 0 (no HTTPS) or 1-65535, not ",
                     flags.secure_port));
  }
  s.secure_port = flags.secure_port;
  if (flags.tls_cert_file.empty() != flags.tls_private_key_file.empty()) {
    return FlagError("--tls-cert-file and --tls-private-key-file go together");
  }
  KSCORE_ASSIGN_OR_RETURN(
      s.cert_pem, common::ReadPemFlag("tls-cert-file", flags.tls_cert_file));
  KSCORE_ASSIGN_OR_RETURN(
      s.key_pem,
      common::ReadPemFlag("tls-private-key-file", flags.tls_private_key_file));
  if (!s.cert_pem.empty()) {
    KSCORE_RETURN_IF_ERROR(CheckCertKey({s.cert_pem, s.key_pem}));
  }
  KSCORE_ASSIGN_OR_RETURN(
      o->always_allow_paths,
      PathAllowList::Parse(flags.authorization_always_allow_paths));
  o->authentication_kubeconfig = flags.authentication_kubeconfig;
  o->authorization_kubeconfig = flags.authorization_kubeconfig;
  const std::string& plain = flags.insecure_serving_address;
  if (!plain.empty()) {
    const size_t colon = plain.rfind(':');
    int port = -1;
    if (colon == std::string::npos ||
        !absl::SimpleAtoi(plain.substr(colon + 1), &port) || port < 0 ||
        port > 65535) {
      return FlagError(absl::StrCat("--insecure-serving-address: \"", plain,
                                    "\" is not host:port"));
    }
  }
  s.insecure_address = plain;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Options> MakeOptions(const Flags& flags,
                                    model::SchedulerConfig config) {
  if (flags.scorer.empty()) {
    return FlagError("--scorer is required (the scorer's gRPC target)");
  }
  if (flags.scorer_batch_size < 1) {
    return FlagError(
        absl::StrCat("--scorer-batch-size: must be at least 1, not ",
                     flags.scorer_batch_size));
  }
  if (flags.bind_workers < 1) {
    return FlagError(absl::StrCat("--bind-workers: must be at least 1, not ",
                                  flags.bind_workers));
  }
  if (flags.preemption_max_victim_pods < 1) {
    return FlagError(
        absl::StrCat("--preemption-max-victim-pods: must be at least 1, not ",
                     flags.preemption_max_victim_pods));
  }
  if (flags.explain_decisions < 0) {
    return FlagError(
        absl::StrCat("--explain-decisions: must be at least 0, not ",
                     flags.explain_decisions));
  }
  if (config.profiles.empty()) {
    return absl::FailedPreconditionError("profiles: at least one is required");
  }
  // kube-scheduler's clientConnection.contentType: protobuf by default (the
  // API server then encodes each pod once for all protobuf watchers), JSON
  // on request. The shim reads every object it watches in either.
  const std::string& content_type = config.client_connection.content_type;
  if (content_type != kube::kProtobufContentType &&
      content_type != "application/json") {
    return absl::FailedPreconditionError(absl::StrFormat(
        "clientConnection.contentType: \"%s\" is not supported (use %s or "
        "application/json)",
        content_type, kube::kProtobufContentType));
  }
  Options o;
  o.protobuf = content_type == kube::kProtobufContentType;
  o.kubeconfig = flags.kubeconfig;
  o.scorer_target = flags.scorer;
  o.scorer_timeout = absl::Seconds(5);
  KSCORE_RETURN_IF_ERROR(
      DurationFlag(flags.scorer_timeout, "scorer-timeout", &o.scorer_timeout));
  KSCORE_RETURN_IF_ERROR(ScorerTls(flags, &o));
  o.scorer_batch_size = flags.scorer_batch_size;
  o.bind_workers = flags.bind_workers;
  o.preemption_max_victim_pods = flags.preemption_max_victim_pods;
  o.explain_decisions = flags.explain_decisions;
  o.record_scores = flags.record_scores;
  KSCORE_RETURN_IF_ERROR(ApplyServing(flags, &o));
  for (const auto& p : config.profiles) o.served.push_back(p.scheduler_name);
  o.leader_election = config.leader_election;
  o.config = std::move(config);
  KSCORE_RETURN_IF_ERROR(ApplyLeaderElection(flags, &o));
  return o;
}

absl::StatusOr<Options> LoadOptions(const Flags& flags) {
  if (flags.config.empty()) {
    return FlagError(
        "--config is required (a KubeSchedulerConfiguration file)");
  }
  if (flags.scorer.empty()) {
    return FlagError("--scorer is required (the scorer's gRPC target)");
  }
  // Strictly decoded as the scorer decodes it, and the in-tree plugins'
  // args checked with the scorer's own checks (model/plugin_args), so the
  // shim never runs a configuration the scorer refuses for them; where an
  // in-tree plugin is enabled is checked against model/plugin_points. A
  // name that is not in-tree (a custom scorer's plugin) is the scorer's to
  // check: the shim links no plugin.
  absl::StatusOr<model::SchedulerConfig> config =
      model::LoadSchedulerConfig(flags.config);
  if (config.ok()) {
    absl::Status s = model::ValidatePluginConfig(*config);
    if (s.ok()) s = model::CheckEnabledPoints(*config);
    if (!s.ok()) {
      config =
          absl::Status(s.code(), absl::StrCat(flags.config, ": ", s.message()));
    }
  }
  if (!config.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "invalid configuration: ",
        config.status().ToString(absl::StatusToStringMode::kWithNoExtraData)));
  }
  return MakeOptions(flags, *std::move(config));
}

int ExitCode(const absl::Status& status) {
  if (status.ok()) return 0;
  return status.code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
}

}  // namespace kscore::app
