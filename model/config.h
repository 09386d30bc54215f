#ifndef KSCORE_MODEL_CONFIG_H_
#define KSCORE_MODEL_CONFIG_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "yaml-cpp/yaml.h"

namespace kscore::model {

// KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1), decoded
// strictly and defaulted as kube-scheduler does. Both the scorer and the shim
// read the same file.

struct PluginRef {
  std::string name;
  std::optional<int32_t> weight;
  std::string path;  // e.g. "profiles[0].plugins.score.enabled[0]"
};

struct PluginSet {
  std::vector<PluginRef> enabled;
  std::vector<PluginRef> disabled;
};

// The extension points a profile can configure: kube-scheduler v1.37's
// v1.Plugins, the pod-group placement points included.
enum class ExtensionPoint {
  kMultiPoint,
  kPreEnqueue,
  kQueueSort,
  kPreFilter,
  kFilter,
  kPostFilter,
  kPreScore,
  kScore,
  kReserve,
  kPermit,
  kPreBind,
  kBind,
  kPostBind,
  kPlacementGenerate,
  kPlacementScore,
  kPodGroupPostFilter,
  kCount,
};
absl::string_view ExtensionPointName(ExtensionPoint p);

struct PluginConfigEntry {
  std::string name;
  YAML::Node args;   // may be undefined
  std::string path;  // e.g. "profiles[0].pluginConfig[1].args"
};

struct ProfileConfig {
  std::string scheduler_name;
  std::optional<int32_t> percentage_of_nodes_to_score;
  // As written in the file (not yet merged with the defaults).
  PluginSet plugins[static_cast<int>(ExtensionPoint::kCount)];
  std::vector<PluginConfigEntry> plugin_config;
  std::string path;  // "profiles[i]"

  const PluginSet& at(ExtensionPoint p) const {
    return plugins[static_cast<int>(p)];
  }
};

struct LeaderElectionConfig {
  bool leader_elect = true;
  absl::Duration lease_duration = absl::Seconds(15);
  absl::Duration renew_deadline = absl::Seconds(10);
  absl::Duration retry_period = absl::Seconds(2);
  std::string resource_lock = "leases";
  std::string resource_name = "kube-scheduler";
  std::string resource_namespace = "kube-system";
  // Whether resourceName was given; the shim names its Lease after the
  // scheduler otherwise, so it never takes kube-scheduler's lock.
  bool resource_name_set = false;
};

struct ClientConnectionConfig {
  std::string kubeconfig;
  std::string accept_content_types;
  std::string content_type = "application/vnd.kubernetes.protobuf";
  double qps = 50;
  int32_t burst = 100;
};

struct SchedulerConfig {
  int32_t parallelism = 16;
  LeaderElectionConfig leader_election;
  ClientConnectionConfig client_connection;
  bool enable_profiling = true;
  bool enable_contention_profiling = true;
  // 0 means kube-scheduler's adaptive default.
  int32_t percentage_of_nodes_to_score = 0;
  int64_t pod_initial_backoff_seconds = 1;
  int64_t pod_max_backoff_seconds = 10;
  bool delay_cache_until_active = false;
  std::vector<ProfileConfig> profiles;
};

// kube-scheduler v1.37's default multiPoint plugins, with default feature
// gates: DynamicResources and NodeDeclaredFeatures are GA and on; the gates
// that add DeferredPodScheduling, GangScheduling and the placement plugins
// are off. (The only point with defaults.)
std::vector<PluginRef> DefaultMultiPointPlugins();

// kube-scheduler's mergePluginSet: defaults minus disabled ("*" drops all),
// custom entries replacing same-named defaults in place, then the rest of the
// custom entries in order. With DefaultMultiPointPlugins at multiPoint (and
// nothing elsewhere) it is v1 defaulting of a profile's plugins.
PluginSet MergePluginSet(const std::vector<PluginRef>& defaults,
                         const PluginSet& custom);

// kube-scheduler v1.37's defaulted args of its in-tree plugins that take
// args, as flow YAML mappings without kind and apiVersion, by plugin name
// in name order: what v1 defaulting appends to a profile's pluginConfig
// for each enabled plugin the file gives no args for.
std::vector<std::pair<std::string, std::string>> DefaultPluginArgs();

// Bounds on a configuration, so a hostile or mistaken file cannot keep a
// program from starting: its size, and its nodes once aliases are expanded
// (aliases nested within aliases multiply: a few hundred bytes can stand
// for 10^9 nodes, which yaml-cpp shares but a decoder walks).
inline constexpr size_t kMaxConfigBytes = size_t{1} << 20;
inline constexpr size_t kMaxConfigNodes = size_t{1} << 20;

// Decodes, defaults and validates. Errors are InvalidArgument and name the
// field: "profiles[1].schedulerName: Duplicate value: \"x\"".
absl::StatusOr<SchedulerConfig> ParseSchedulerConfig(absl::string_view yaml);
absl::StatusOr<SchedulerConfig> LoadSchedulerConfig(const std::string& path);

}  // namespace kscore::model

#endif  // KSCORE_MODEL_CONFIG_H_
