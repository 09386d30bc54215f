#include "shim/kube/leader_election.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "shim/kube/json_parse.h"
#include "spdlog/spdlog.h"

namespace kscore::kube {
namespace {

constexpr double kJitter = 1.2;  // client-go's JitterFactor

std::string DefaultIdentity(std::mt19937_64& rng) {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) host[0] = '\0';
  return absl::StrFormat("%s_%016x", host, rng());
}

int64_t DurationSeconds(absl::Duration d) {
  return std::max<int64_t>(1, absl::ToInt64Seconds(d));
}

// A string field of the spec ("" when absent or null), or nullopt when it
// has another type: an API server stores no such Lease, and the elector
// leaves one alone rather than guess.
std::optional<std::string> StringField(const nlohmann::json& spec,
                                       const char* key) {
  auto it = spec.find(key);
  if (it == spec.end() || it->is_null()) return std::string();
  if (!it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

std::optional<int64_t> IntField(const nlohmann::json& spec, const char* key) {
  auto it = spec.find(key);
  if (it == spec.end() || it->is_null()) return 0;
  if (!it->is_number_integer()) return std::nullopt;
  if (it->is_number_unsigned() &&
      it->get<uint64_t>() >
          static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return std::nullopt;
  }
  return it->get<int64_t>();
}

}  // namespace

std::string FormatMicroTime(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", t, absl::UTCTimeZone());
}

absl::StatusOr<absl::Time> ParseMicroTime(absl::string_view s) {
  absl::Time t;
  std::string err;
  if (!absl::ParseTime(absl::RFC3339_full, s, &t, &err)) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad time \"", s, "\": ", err));
  }
  return t;
}

std::optional<nlohmann::json> NextLeaseSpec(const nlohmann::json& spec,
                                            const std::string& identity,
                                            absl::Duration lease_duration,
                                            absl::Time now) {
  const nlohmann::json empty = nlohmann::json::object();
  const nlohmann::json& old = spec.is_object() ? spec : empty;
  const std::optional<std::string> holder = StringField(old, "holderIdentity");
  const std::optional<std::string> renew_time = StringField(old, "renewTime");
  const std::optional<int64_t> seconds = IntField(old, "leaseDurationSeconds");
  const std::optional<int64_t> transitions = IntField(old, "leaseTransitions");
  if (!holder || !renew_time || !seconds || !transitions) return std::nullopt;
  if (!holder->empty() && *holder != identity) {
    absl::StatusOr<absl::Time> renewed = ParseMicroTime(*renew_time);
    if (renewed.ok() && *renewed + absl::Seconds(*seconds) > now) {
      return std::nullopt;
    }
  }
  nlohmann::json next = old;
  next["holderIdentity"] = identity;
  next["leaseDurationSeconds"] = DurationSeconds(lease_duration);
  next["renewTime"] = FormatMicroTime(now);
  if (*holder != identity) {
    next["acquireTime"] = FormatMicroTime(now);
    next["leaseTransitions"] =
        *transitions < std::numeric_limits<int64_t>::max() ? *transitions + 1
                                                           : *transitions;
  }
  return next;
}

nlohmann::json ReleasedLeaseSpec(const nlohmann::json& spec, absl::Time now) {
  nlohmann::json next = spec.is_object() ? spec : nlohmann::json::object();
  next["holderIdentity"] = "";
  next["leaseDurationSeconds"] = 1;
  next["renewTime"] = FormatMicroTime(now);
  next["acquireTime"] = FormatMicroTime(now);
  return next;
}

LeaderElector::LeaderElector(Client* client, LeaderElectionConfig config)
    : client_(client), config_(std::move(config)) {
  if (config_.identity.empty()) config_.identity = DefaultIdentity(rng_);
}

LeaderElector::~LeaderElector() { Stop(); }

absl::Status LeaderElector::Start() {
  const LeaderElectionConfig& c = config_;
  if (c.lease_namespace.empty() || c.lease_name.empty()) {
    return absl::InvalidArgumentError(
        "leader election: lease namespace and name are required");
  }
  if (c.retry_period <= absl::ZeroDuration() ||
      c.renew_deadline <= c.retry_period * kJitter ||
      c.lease_duration <= c.renew_deadline) {
    return absl::InvalidArgumentError(absl::StrCat(
        "leader election: want leaseDuration (",
        absl::FormatDuration(c.lease_duration), ") > renewDeadline (",
        absl::FormatDuration(c.renew_deadline), ") > 1.2 * retryPeriod (",
        absl::FormatDuration(c.retry_period), ") > 0"));
  }
  thread_ = std::thread([this] { Run(); });
  return absl::OkStatus();
}

void LeaderElector::Stop() {
  stop_ = true;
  if (!stopping_.HasBeenNotified()) stopping_.Notify();
  if (thread_.joinable()) thread_.join();
}

bool LeaderElector::Sleep(absl::Duration d) {
  return !stopping_.WaitForNotificationWithTimeout(d);
}

std::string LeaderElector::LeasePath() const {
  return absl::StrCat("/apis/coordination.k8s.io/v1/namespaces/",
                      config_.lease_namespace, "/leases/", config_.lease_name);
}

void LeaderElector::Run() {
  std::uniform_real_distribution<double> jitter(1.0, kJitter);
  while (!stop_) {
    if (!TryAcquireOrRenew(config_.renew_deadline)) {
      Sleep(config_.retry_period * jitter(rng_));
      continue;
    }
    absl::Time renewed = absl::Now();
    leading_ = true;
    spdlog::info("leader election: {} acquired lease {}/{}", config_.identity,
                 config_.lease_namespace, config_.lease_name);
    if (config_.on_started_leading) config_.on_started_leading();
    while (Sleep(config_.retry_period)) {
      const absl::Time attempt = absl::Now();
      const absl::Duration left = renewed + config_.renew_deadline - attempt;
      if (TryAcquireOrRenew(std::max(left, absl::Milliseconds(100)))) {
        renewed = attempt;
      } else if (absl::Now() - renewed >= config_.renew_deadline) {
        spdlog::warn("leader election: {} failed to renew lease {}/{} for {}",
                     config_.identity, config_.lease_namespace,
                     config_.lease_name,
                     absl::FormatDuration(config_.renew_deadline));
        break;
      }
    }
    leading_ = false;
    if (stop_ && config_.release_on_cancel) Release();
    if (config_.on_stopped_leading) config_.on_stopped_leading();
  }
}

bool LeaderElector::TryAcquireOrRenew(absl::Duration timeout) {
  const absl::Time now = absl::Now();
  absl::StatusOr<Response> got = client_->DoWithTimeout(
      "GET", LeasePath(), "", "application/json", timeout);
  if (!got.ok()) {
    spdlog::warn("leader election: {}", std::string(got.status().message()));
    return false;
  }
  if (got->status == 404) {
    nlohmann::json spec =
        *NextLeaseSpec({}, config_.identity, config_.lease_duration, now);
    spec["leaseTransitions"] = 0;
    const nlohmann::json lease = {{"apiVersion", "coordination.k8s.io/v1"},
                                  {"kind", "Lease"},
                                  {"metadata",
                                   {{"name", config_.lease_name},
                                    {"namespace", config_.lease_namespace}}},
                                  {"spec", spec}};
    absl::StatusOr<Response> created = client_->DoWithTimeout(
        "POST",
        absl::StrCat("/apis/coordination.k8s.io/v1/namespaces/",
                     config_.lease_namespace, "/leases"),
        lease.dump(), "application/json", timeout);
    return created.ok() && created->status == 201;
  }
  if (got->status != 200) {
    spdlog::warn("leader election: GET lease: HTTP {}", got->status);
    return false;
  }
  absl::StatusOr<nlohmann::json> parsed = ParseJson(got->body);
  if (!parsed.ok() || !parsed->is_object()) {
    spdlog::warn("leader election: GET lease: not a JSON object");
    return false;
  }
  nlohmann::json& lease = *parsed;
  std::optional<nlohmann::json> next =
      NextLeaseSpec(lease.value("spec", nlohmann::json::object()),
                    config_.identity, config_.lease_duration, now);
  if (!next.has_value()) return false;  // someone else holds it
  lease["spec"] = *std::move(next);
  // The body keeps metadata.resourceVersion: a concurrent writer makes
  // this a 409.
  absl::StatusOr<Response> put = client_->DoWithTimeout(
      "PUT", LeasePath(), lease.dump(), "application/json", timeout);
  return put.ok() && put->status == 200;
}

void LeaderElector::Release() {
  absl::StatusOr<Response> got = client_->Do("GET", LeasePath());
  if (!got.ok() || got->status != 200) return;
  absl::StatusOr<nlohmann::json> parsed = ParseJson(got->body);
  if (!parsed.ok() || !parsed->is_object()) return;
  nlohmann::json& lease = *parsed;
  const nlohmann::json spec = lease.value("spec", nlohmann::json::object());
  if (!spec.is_object() ||
      StringField(spec, "holderIdentity") != config_.identity) {
    return;
  }
  lease["spec"] = ReleasedLeaseSpec(lease["spec"], absl::Now());
  absl::StatusOr<Response> put = client_->Do("PUT", LeasePath(), lease.dump());
  if (!put.ok() || put->status != 200) {
    spdlog::warn("leader election: release of lease {}/{} failed",
                 config_.lease_namespace, config_.lease_name);
  }
}

}  // namespace kscore::kube
