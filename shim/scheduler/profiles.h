#ifndef KSCORE_SHIM_SCHEDULER_PROFILES_H_
#define KSCORE_SHIM_SCHEDULER_PROFILES_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "kscore/scorer/v1/scorer.pb.h"
#include "shim/queue/scheduling_queue.h"

namespace kscore::scheduler {

namespace pb = ::kscore::scorer::v1;

// What the shim sends for one profile, as the scorer's ListProfiles
// describes it: the shim itself knows no plugin.
struct ProfileInfo {
  std::string scheduler_name;
  std::vector<std::string> label_count_keys;
  int32_t percentage_of_nodes_to_score = 0;  // 0: the adaptive default
  pb::NodeLabels node_labels = pb::NODE_LABELS_ALWAYS;
  // The scorer's configuration hash: every request carries it, so a replica
  // with another configuration refuses the call instead of answering.
  std::string config_hash;
  // What the Pod message carries beyond its spec, and whether pods need a
  // Plan (cluster-wide data) before their cycle.
  std::vector<pb::PodData> pod_data;
  bool plans = false;
  // The scorer batches pods of the same template (pb::Profile::batches).
  bool batches = false;
  // PreBind's wait for the claims it bound (pb::Profile::
  // volume_bind_timeout_seconds).
  absl::Duration volume_bind_timeout = absl::ZeroDuration();
  // The scorer keeps nodes by content key
  // (pb::ListProfilesResponse::content_keys).
  bool content_keys = false;
  // What each PreFilter/Filter plugin registers (PluginInfo.events): which
  // cluster events move a pod it rejected.
  std::shared_ptr<const queue::PluginEvents> plugin_events;
  // A plugin runs at PostFilter (DefaultPreemption): a pod no node took
  // asks the scorer where to preempt (Preempt).
  bool post_filter = false;
  // The Filter plugins, in the order they run (explanations name the ones
  // a node passed).
  std::vector<std::string> filter_plugins = {};

  // Whether requests for this pod must carry node labels.
  bool NeedsNodeLabels(const pb::Pod& pod) const;
};

// The profiles the shim serves (its configuration's schedulerNames), with
// the facts the scorer gives for them. Asked for on first use and again
// after Invalidate (a replica refused a call for its configuration hash) or,
// while refused, every `recheck`. Scheduling for a profile is refused, with
// a reason for the pod's event, while the scorer is unreachable, while its
// replicas answer with different configuration hashes, or when it does not
// serve the profile. Thread-safe.
class Profiles {
 public:
  using ListFn = std::function<absl::StatusOr<pb::ListProfilesResponse>()>;
  struct Options {
    std::vector<std::string> served;  // schedulerNames, from the config
    // ListProfiles calls per check; each may reach another replica.
    int probes = 3;
    absl::Duration recheck = absl::Seconds(2);
    std::function<absl::Time()> now = [] { return absl::Now(); };
    // Told each check's outcome: "" when adopted, else why refused.
    std::function<void(const std::string& refusal)> on_check;
  };

  Profiles(Options options, ListFn list);

  // Whether `name` is one of the shim's profiles (its pods are ours).
  bool Serves(absl::string_view name) const;
  const std::vector<std::string>& served() const { return options_.served; }

  // The facts for a profile, or an error saying why its pods cannot be
  // scheduled now: Unavailable when the scorer did not answer (the pods
  // wait for it to answer again), else FailedPrecondition.
  absl::StatusOr<std::shared_ptr<const ProfileInfo>> Lookup(
      absl::string_view name);
  // The scorer answers again: a refusal because it did not answer is
  // checked again at the next Lookup, without waiting for `recheck`.
  void ScorerAnswered();

  // Drops what was learnt: the next Lookup asks the scorer again.
  void Invalidate(const std::string& why);

 private:
  // Asks the scorer `probes` times and adopts the answer if all agree.
  void CheckLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::string Adopt(const std::vector<pb::ListProfilesResponse>& answers)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  const ListFn list_;
  absl::Mutex mu_;
  bool checked_ ABSL_GUARDED_BY(mu_) = false;
  absl::Time last_check_ ABSL_GUARDED_BY(mu_);
  // Why every profile is refused ("" when the last check succeeded).
  std::string refusal_ ABSL_GUARDED_BY(mu_);
  // The refusal is that the scorer did not answer (UNAVAILABLE).
  bool unreachable_ ABSL_GUARDED_BY(mu_) = false;
  std::map<std::string, std::shared_ptr<const ProfileInfo>, std::less<>> known_
      ABSL_GUARDED_BY(mu_);
  std::string serving_ ABSL_GUARDED_BY(mu_);  // the scorer's profile names
  std::string adopted_hash_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kscore::scheduler

#endif  // KSCORE_SHIM_SCHEDULER_PROFILES_H_
