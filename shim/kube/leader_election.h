#ifndef KSCORE_SHIM_KUBE_LEADER_ELECTION_H_
#define KSCORE_SHIM_KUBE_LEADER_ELECTION_H_

#include <atomic>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "shim/kube/client.h"

namespace kscore::kube {

struct LeaderElectionConfig {
  std::string lease_namespace;
  std::string lease_name;
  std::string identity;  // empty: hostname + "_" + random
  absl::Duration lease_duration = absl::Seconds(15);
  absl::Duration renew_deadline = absl::Seconds(10);
  absl::Duration retry_period = absl::Seconds(2);
  // On Stop, a leader hands the Lease over at once instead of letting it
  // expire (client-go's ReleaseOnCancel).
  bool release_on_cancel = false;
  // Called from the elector's thread; keep them short. on_stopped_leading
  // follows every on_started_leading (lost lease or Stop).
  std::function<void()> on_started_leading;
  std::function<void()> on_stopped_leading;
};

// metav1.MicroTime, "2006-01-02T15:04:05.000000Z".
std::string FormatMicroTime(absl::Time t);
absl::StatusOr<absl::Time> ParseMicroTime(absl::string_view s);

// The Lease spec after `identity` acquires or renews it at `now`, or nullopt
// when another holder's lease (renewTime + leaseDurationSeconds) is still
// valid at `now`. An empty holderIdentity is free to take.
std::optional<nlohmann::json> NextLeaseSpec(const nlohmann::json& spec,
                                            const std::string& identity,
                                            absl::Duration lease_duration,
                                            absl::Time now);

// The spec a leader writes on release: no holder, 1s duration.
nlohmann::json ReleasedLeaseSpec(const nlohmann::json& spec, absl::Time now);

// client-go-style leader election on a coordination.k8s.io/v1 Lease: create
// it or take it over once expired (PUT with its resourceVersion, so a 409
// means another candidate won), renew every retry_period, stop leading when
// renewals fail for renew_deadline, then try to acquire again. One thread.
class LeaderElector {
 public:
  LeaderElector(Client* client, LeaderElectionConfig config);
  ~LeaderElector();
  LeaderElector(const LeaderElector&) = delete;
  LeaderElector& operator=(const LeaderElector&) = delete;

  // Validates the config (client-go's rules) and starts the thread. Once.
  absl::Status Start();
  // Stops; a leader releases the Lease first when release_on_cancel.
  void Stop();
  bool IsLeader() const { return leading_.load(); }
  const std::string& identity() const { return config_.identity; }

 private:
  void Run();
  // One GET and a POST or PUT; true when we hold the Lease afterwards.
  bool TryAcquireOrRenew(absl::Duration timeout);
  void Release();
  std::string LeasePath() const;
  // Sleeps, waking early on Stop; false when stopping.
  bool Sleep(absl::Duration d);

  Client* const client_;
  LeaderElectionConfig config_;
  std::atomic<bool> leading_{false};
  std::atomic<bool> stop_{false};
  absl::Notification stopping_;
  std::thread thread_;
  std::mt19937_64 rng_{std::random_device{}()};  // elector thread only
};

}  // namespace kscore::kube

#endif  // KSCORE_SHIM_KUBE_LEADER_ELECTION_H_
