#include "model/config.h"

#include <fstream>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/status_macros.h"
#include "model/yaml_decode.h"

namespace kscore::model {
namespace {

constexpr absl::string_view kApiVersion = "kubescheduler.config.k8s.io/v1";
constexpr absl::string_view kKind = "KubeSchedulerConfiguration";

constexpr absl::string_view kPointNames[] = {
    "multiPoint",     "preEnqueue",
    "queueSort",      "preFilter",
    "filter",         "postFilter",
    "preScore",       "score",
    "reserve",        "permit",
    "preBind",        "bind",
    "postBind",       "placementGenerate",
    "placementScore", "podGroupPostFilter"};
static_assert(std::size(kPointNames) ==
              static_cast<size_t>(ExtensionPoint::kCount));

absl::Status ParseDuration(const YamlField& f, absl::Duration* out) {
  if (!f.present()) return absl::OkStatus();
  KSCORE_ASSIGN_OR_RETURN(std::string s, f.String());
  absl::Duration d;
  if (!absl::ParseDuration(s, &d)) {
    return f.Error(absl::StrCat("invalid duration \"", s, "\" (e.g. \"15s\")"));
  }
  if (d <= absl::ZeroDuration()) return f.Error("must be greater than zero");
  *out = d;
  return absl::OkStatus();
}

absl::Status ParsePluginList(const YamlField& list, std::vector<PluginRef>* out,
                             bool allow_weight) {
  KSCORE_RETURN_IF_ERROR(list.ExpectSequence());
  if (!list.present()) return absl::OkStatus();
  for (size_t i = 0; i < list.size(); ++i) {
    YamlField item = list.Index(i);
    KSCORE_RETURN_IF_ERROR(item.ExpectMap({"name", "weight"}));
    if (!item.present()) return item.Error("expected a plugin {name, weight}");
    PluginRef ref;
    ref.path = item.path();
    YamlField name = item.Child("name");
    if (!name.present()) return name.Error("Required value: plugin name");
    KSCORE_ASSIGN_OR_RETURN(ref.name, name.String());
    if (ref.name.empty()) return name.Error("Required value: plugin name");
    if (YamlField w = item.Child("weight"); w.present()) {
      if (!allow_weight)
        return w.Error("weight is only allowed for enabled plugins");
      int64_t weight = 0;
      KSCORE_ASSIGN_OR_RETURN(weight, w.Int(0, INT32_MAX));
      ref.weight = static_cast<int32_t>(weight);
    }
    out->push_back(std::move(ref));
  }
  return absl::OkStatus();
}

absl::Status ParsePluginSet(const YamlField& f, PluginSet* out) {
  KSCORE_RETURN_IF_ERROR(f.ExpectMap({"enabled", "disabled"}));
  if (absl::Status s = ParsePluginList(f.Child("enabled"), &out->enabled, true);
      !s.ok()) {
    return s;
  }
  return ParsePluginList(f.Child("disabled"), &out->disabled, false);
}

absl::Status ParseProfile(const YamlField& f, size_t count,
                          ProfileConfig* out) {
  out->path = f.path();
  if (absl::Status s = f.ExpectMap({"schedulerName", "percentageOfNodesToScore",
                                    "plugins", "pluginConfig"});
      !s.ok()) {
    return s;
  }
  if (YamlField name = f.Child("schedulerName"); name.present()) {
    KSCORE_ASSIGN_OR_RETURN(out->scheduler_name, name.String());
  } else if (count == 1) {
    out->scheduler_name = "default-scheduler";
  }
  if (out->scheduler_name.empty()) {
    return f.Child("schedulerName").Error("Required value");
  }
  if (YamlField p = f.Child("percentageOfNodesToScore"); p.present()) {
    int64_t v = 0;
    KSCORE_ASSIGN_OR_RETURN(v, p.Int(0, 100));
    out->percentage_of_nodes_to_score = static_cast<int32_t>(v);
  }
  YamlField plugins = f.Child("plugins");
  if (absl::Status s = plugins.ExpectMap(
          {"multiPoint", "preEnqueue", "queueSort", "preFilter", "filter",
           "postFilter", "preScore", "score", "reserve", "permit", "preBind",
           "bind", "postBind", "placementGenerate", "placementScore",
           "podGroupPostFilter"});
      !s.ok()) {
    return s;
  }
  for (size_t i = 0; i < std::size(kPointNames); ++i) {
    if (absl::Status s =
            ParsePluginSet(plugins.Child(kPointNames[i]), &out->plugins[i]);
        !s.ok()) {
      return s;
    }
  }

  YamlField configs = f.Child("pluginConfig");
  KSCORE_RETURN_IF_ERROR(configs.ExpectSequence());
  absl::flat_hash_map<std::string, size_t> seen;
  for (size_t i = 0; configs.present() && i < configs.size(); ++i) {
    YamlField item = configs.Index(i);
    KSCORE_RETURN_IF_ERROR(item.ExpectMap({"name", "args"}));
    PluginConfigEntry entry;
    YamlField name = item.Child("name");
    if (!name.present()) return name.Error("Required value: plugin name");
    KSCORE_ASSIGN_OR_RETURN(entry.name, name.String());
    if (auto [it, inserted] = seen.emplace(entry.name, i); !inserted) {
      return item.Error(absl::StrCat("Duplicate value: \"", entry.name,
                                     "\" (also in ", configs.path(), "[",
                                     it->second, "])"));
    }
    YamlField args = item.Child("args");
    if (args.present() && !args.node().IsMap()) {
      return args.Error("expected a mapping of the plugin's arguments");
    }
    entry.args = args.node();
    entry.path = args.path();
    out->plugin_config.push_back(std::move(entry));
  }
  return absl::OkStatus();
}

absl::Status ParseLeaderElection(const YamlField& f,
                                 LeaderElectionConfig* out) {
  if (absl::Status s = f.ExpectMap(
          {"leaderElect", "leaseDuration", "renewDeadline", "retryPeriod",
           "resourceLock", "resourceName", "resourceNamespace"});
      !s.ok()) {
    return s;
  }
  if (YamlField v = f.Child("leaderElect"); v.present()) {
    KSCORE_ASSIGN_OR_RETURN(out->leader_elect, v.Bool());
  }
  if (absl::Status s =
          ParseDuration(f.Child("leaseDuration"), &out->lease_duration);
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          ParseDuration(f.Child("renewDeadline"), &out->renew_deadline);
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          ParseDuration(f.Child("retryPeriod"), &out->retry_period);
      !s.ok()) {
    return s;
  }
  if (YamlField v = f.Child("resourceLock"); v.present()) {
    KSCORE_ASSIGN_OR_RETURN(out->resource_lock, v.String());
  }
  if (YamlField v = f.Child("resourceName"); v.present()) {
    KSCORE_ASSIGN_OR_RETURN(out->resource_name, v.String());
    out->resource_name_set = !out->resource_name.empty();
    if (out->resource_name.empty()) out->resource_name = "kube-scheduler";
  }
  if (YamlField v = f.Child("resourceNamespace"); v.present()) {
    KSCORE_ASSIGN_OR_RETURN(out->resource_namespace, v.String());
    if (out->resource_namespace.empty())
      out->resource_namespace = "kube-system";
  }
  if (out->leader_elect) {
    if (out->resource_lock != "leases") {
      return f.Child("resourceLock")
          .Error(absl::StrCat("Invalid value: \"", out->resource_lock,
                              "\": resourceLock value must be \"leases\""));
    }
    if (out->lease_duration <= out->renew_deadline) {
      return f.Child("leaseDuration")
          .Error("must be greater than renewDeadline");
    }
    if (out->renew_deadline <= out->retry_period) {
      return f.Child("renewDeadline").Error("must be greater than retryPeriod");
    }
  }
  return absl::OkStatus();
}

absl::Status ParseClientConnection(const YamlField& f,
                                   ClientConnectionConfig* out) {
  if (absl::Status s = f.ExpectMap(
          {"kubeconfig", "acceptContentTypes", "contentType", "qps", "burst"});
      !s.ok()) {
    return s;
  }
  if (YamlField v = f.Child("kubeconfig"); v.present()) {
    KSCORE_ASSIGN_OR_RETURN(out->kubeconfig, v.String());
  }
  if (YamlField v = f.Child("acceptContentTypes"); v.present()) {
    KSCORE_ASSIGN_OR_RETURN(out->accept_content_types, v.String());
  }
  if (YamlField v = f.Child("contentType"); v.present()) {
    KSCORE_ASSIGN_OR_RETURN(out->content_type, v.String());
  }
  if (YamlField v = f.Child("qps"); v.present()) {
    KSCORE_ASSIGN_OR_RETURN(out->qps, v.Double());
    if (out->qps == 0) out->qps = 50;
    if (out->qps < 0) return v.Error("must be greater than or equal to 0");
  }
  if (YamlField v = f.Child("burst"); v.present()) {
    int64_t burst = 0;
    KSCORE_ASSIGN_OR_RETURN(burst, v.Int(0, INT32_MAX));
    out->burst = burst == 0 ? 100 : static_cast<int32_t>(burst);
  }
  return absl::OkStatus();
}

// apiVersion and kind: this file is a KubeSchedulerConfiguration of v1.
absl::Status ParseTypeMeta(const YamlField& top) {
  std::string api_version, kind;
  if (YamlField v = top.Child("apiVersion"); v.present()) {
    KSCORE_ASSIGN_OR_RETURN(api_version, v.String());
  }
  if (api_version != kApiVersion) {
    return top.Child("apiVersion")
        .Error(absl::StrCat("expected \"", kApiVersion, "\", got \"",
                            api_version, "\""));
  }
  if (YamlField v = top.Child("kind"); v.present()) {
    KSCORE_ASSIGN_OR_RETURN(kind, v.String());
  }
  if (kind != kKind) {
    return top.Child("kind").Error(
        absl::StrCat("expected \"", kKind, "\", got \"", kind, "\""));
  }
  return absl::OkStatus();
}

absl::Status ParseParallelism(const YamlField& v, int32_t* out) {
  if (!v.present()) return absl::OkStatus();
  int64_t p = 0;
  KSCORE_ASSIGN_OR_RETURN(p, v.Int(INT32_MIN, INT32_MAX));
  if (p <= 0) {
    return v.Error(
        absl::StrCat("Invalid value: ", p,
                     ": should be an integer value greater than zero"));
  }
  *out = static_cast<int32_t>(p);
  return absl::OkStatus();
}

// The top level's own switches: profiling, delayCacheUntilActive and
// percentageOfNodesToScore.
absl::Status ParseTopLevel(const YamlField& top, SchedulerConfig* cfg) {
  if (YamlField v = top.Child("enableProfiling"); v.present()) {
    KSCORE_ASSIGN_OR_RETURN(cfg->enable_profiling, v.Bool());
  }
  if (YamlField v = top.Child("enableContentionProfiling"); v.present()) {
    KSCORE_ASSIGN_OR_RETURN(cfg->enable_contention_profiling, v.Bool());
  }
  if (YamlField v = top.Child("delayCacheUntilActive"); v.present()) {
    KSCORE_ASSIGN_OR_RETURN(cfg->delay_cache_until_active, v.Bool());
  }
  if (YamlField v = top.Child("percentageOfNodesToScore"); v.present()) {
    int64_t p = 0;
    KSCORE_ASSIGN_OR_RETURN(p, v.Int(0, 100));
    cfg->percentage_of_nodes_to_score = static_cast<int32_t>(p);
  }
  return absl::OkStatus();
}

absl::Status ParseBackoff(const YamlField& top, SchedulerConfig* cfg) {
  if (YamlField v = top.Child("podInitialBackoffSeconds"); v.present()) {
    KSCORE_ASSIGN_OR_RETURN(cfg->pod_initial_backoff_seconds,
                            v.Int(INT64_MIN, INT64_MAX));
    if (cfg->pod_initial_backoff_seconds <= 0) {
      return v.Error("must be greater than 0");
    }
  }
  if (YamlField v = top.Child("podMaxBackoffSeconds"); v.present()) {
    KSCORE_ASSIGN_OR_RETURN(cfg->pod_max_backoff_seconds,
                            v.Int(INT64_MIN, INT64_MAX));
  }
  if (cfg->pod_max_backoff_seconds < cfg->pod_initial_backoff_seconds) {
    return top.Child("podMaxBackoffSeconds")
        .Error("must be greater than or equal to podInitialBackoffSeconds");
  }
  return absl::OkStatus();
}

// profiles: one default-scheduler profile when none is given; names unique.
absl::Status ParseProfiles(const YamlField& profiles,
                           std::vector<ProfileConfig>* out) {
  KSCORE_RETURN_IF_ERROR(profiles.ExpectSequence());
  size_t count = profiles.present() ? profiles.size() : 0;
  if (count == 0) {
    ProfileConfig p;
    p.scheduler_name = "default-scheduler";
    p.path = "profiles[0]";
    out->push_back(std::move(p));
  }
  absl::flat_hash_map<std::string, size_t> names;
  for (size_t i = 0; i < count; ++i) {
    YamlField item = profiles.Index(i);
    ProfileConfig p;
    KSCORE_RETURN_IF_ERROR(ParseProfile(item, count, &p));
    if (auto [it, inserted] = names.emplace(p.scheduler_name, i); !inserted) {
      return item.Child("schedulerName")
          .Error(absl::StrCat("Duplicate value: \"", p.scheduler_name,
                              "\" (also profiles[", it->second, "])"));
    }
    out->push_back(std::move(p));
  }
  return absl::OkStatus();
}

}  // namespace

absl::string_view ExtensionPointName(ExtensionPoint p) {
  return kPointNames[static_cast<int>(p)];
}

absl::StatusOr<SchedulerConfig> ParseSchedulerConfig(absl::string_view yaml) {
  if (yaml.size() > kMaxConfigBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("larger than ", kMaxConfigBytes,
                     " bytes (the bound on a configuration)"));
  }
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("not valid YAML: line ", e.mark.line + 1, ", column ",
                     e.mark.column + 1, ": ", e.msg));
  }
  if (!root.IsMap()) {
    return absl::InvalidArgumentError(
        "expected a KubeSchedulerConfiguration mapping at the top level");
  }
  // Before anything reads a field: a repeated key anywhere, plugin args
  // included, is an error rather than "first one wins"; and the walk bounds
  // what every later reader walks.
  KSCORE_RETURN_IF_ERROR(CheckNoDuplicateKeys(root, "", kMaxConfigNodes));
  YamlField top(root, "");
  KSCORE_RETURN_IF_ERROR(
      top.ExpectMap({"apiVersion", "kind", "parallelism", "leaderElection",
                     "clientConnection", "enableProfiling",
                     "enableContentionProfiling", "percentageOfNodesToScore",
                     "podInitialBackoffSeconds", "podMaxBackoffSeconds",
                     "profiles", "extenders", "delayCacheUntilActive"}));
  KSCORE_RETURN_IF_ERROR(ParseTypeMeta(top));
  SchedulerConfig cfg;
  KSCORE_RETURN_IF_ERROR(
      ParseParallelism(top.Child("parallelism"), &cfg.parallelism));
  KSCORE_RETURN_IF_ERROR(
      ParseLeaderElection(top.Child("leaderElection"), &cfg.leader_election));
  KSCORE_RETURN_IF_ERROR(ParseClientConnection(top.Child("clientConnection"),
                                               &cfg.client_connection));
  KSCORE_RETURN_IF_ERROR(ParseTopLevel(top, &cfg));
  KSCORE_RETURN_IF_ERROR(ParseBackoff(top, &cfg));
  YamlField extenders = top.Child("extenders");
  KSCORE_RETURN_IF_ERROR(extenders.ExpectSequence());
  if (extenders.present() && extenders.size() > 0) {
    return extenders.Error("extenders are not supported by kscore");
  }
  KSCORE_RETURN_IF_ERROR(ParseProfiles(top.Child("profiles"), &cfg.profiles));
  return cfg;
}

absl::StatusOr<SchedulerConfig> LoadSchedulerConfig(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return absl::NotFoundError(
        absl::StrCat("cannot read config file \"", path, "\""));
  }
  // One byte past the bound is enough to refuse the file without reading
  // all of it (it may be a device that never ends).
  std::string text(kMaxConfigBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  absl::StatusOr<SchedulerConfig> cfg = ParseSchedulerConfig(text);
  if (!cfg.ok()) {
    return absl::Status(cfg.status().code(),
                        absl::StrCat(path, ": ", cfg.status().message()));
  }
  return cfg;
}

std::vector<PluginRef> DefaultMultiPointPlugins() {
  auto p = [](std::string n, std::optional<int32_t> w = std::nullopt) {
    return PluginRef{std::move(n), w, "default plugins"};
  };
  return {p("SchedulingGates"),
          p("PrioritySort"),
          p("NodeName"),
          p("NodeUnschedulable"),
          p("TaintToleration", 3),
          p("NodeAffinity", 2),
          p("NodePorts"),
          p("NodeResourcesFit", 1),
          p("VolumeRestrictions"),
          p("NodeVolumeLimits"),
          p("VolumeBinding"),
          p("VolumeZone"),
          p("PodTopologySpread", 2),
          p("InterPodAffinity", 2),
          p("DynamicResources", 2),
          p("DefaultPreemption"),
          p("NodeResourcesBalancedAllocation", 1),
          p("ImageLocality", 1),
          p("DefaultBinder"),
          p("NodeDeclaredFeatures")};
}

PluginSet MergePluginSet(const std::vector<PluginRef>& defaults,
                         const PluginSet& custom) {
  absl::flat_hash_set<std::string> disabled;
  for (const PluginRef& d : custom.disabled) disabled.insert(d.name);
  absl::flat_hash_map<std::string, size_t> custom_index;
  for (size_t i = 0; i < custom.enabled.size(); ++i) {
    custom_index.emplace(custom.enabled[i].name, i);
  }
  PluginSet out;
  out.disabled = custom.disabled;
  absl::flat_hash_set<size_t> replaced;
  if (!disabled.contains("*")) {
    for (const PluginRef& d : defaults) {
      if (disabled.contains(d.name)) continue;
      if (auto it = custom_index.find(d.name); it != custom_index.end()) {
        out.enabled.push_back(custom.enabled[it->second]);
        replaced.insert(it->second);
      } else {
        out.enabled.push_back(d);
      }
    }
  }
  for (size_t i = 0; i < custom.enabled.size(); ++i) {
    if (!replaced.contains(i)) out.enabled.push_back(custom.enabled[i]);
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> DefaultPluginArgs() {
  // pkg/scheduler/apis/config/v1/defaults.go, in name order as upstream
  // appends them (field order as kube-scheduler's v1 types marshal).
  return {
      {"DefaultPreemption",
       "{minCandidateNodesPercentage: 10, minCandidateNodesAbsolute: 100}"},
      {"DynamicResources", "{filterTimeout: 10s, bindingTimeout: 10m0s}"},
      {"InterPodAffinity",
       "{hardPodAffinityWeight: 1, ignorePreferredTermsOfExistingPods: "
       "false}"},
      {"NodeAffinity", "{}"},
      {"NodeResourcesBalancedAllocation",
       "{resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}]}"},
      {"NodeResourcesFit",
       "{scoringStrategy: {type: LeastAllocated, resources: [{name: cpu, "
       "weight: 1}, {name: memory, weight: 1}]}}"},
      {"PodTopologySpread", "{defaultingType: System}"},
      {"VolumeBinding",
       "{bindTimeoutSeconds: 600, shape: [{utilization: 0, score: 10}, "
       "{utilization: 100, score: 0}]}"},
  };
}

}  // namespace kscore::model
