#include "shim/app/configz.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/time/time.h"
#include "model/config.h"
#include "nlohmann/json.hpp"
#include "yaml-cpp/yaml.h"

namespace kscore::app {
namespace {

using Json = nlohmann::ordered_json;
using model::ExtensionPoint;

constexpr char kApiVersion[] = "kubescheduler.config.k8s.io/v1";

// A metav1.Duration as Go's time.Duration.String() writes it: "15s",
// "1m30s", "10m0s", "1.5s".
std::string GoDuration(absl::Duration d) {
  if (d == absl::ZeroDuration()) return "0s";
  std::string out = absl::FormatDuration(d);
  // absl omits trailing zero units ("10m"); Go writes seconds when there
  // are hours or minutes ("10m0s").
  if (!out.empty() && (out.back() == 'm' || out.back() == 'h') &&
      out.find("ms") == std::string::npos) {
    out += out.back() == 'h' ? "0m0s" : "0s";
  }
  return out;
}

// A YAML value as JSON: plain scalars that read as JSON literals (numbers,
// true/false, null) become them, as sigs.k8s.io/yaml does; quoted ones and
// the rest stay strings.
Json YamlToJson(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map: {
      Json out = Json::object();
      for (const auto& kv : n) out[kv.first.Scalar()] = YamlToJson(kv.second);
      return out;
    }
    case YAML::NodeType::Sequence: {
      Json out = Json::array();
      for (const auto& e : n) out.push_back(YamlToJson(e));
      return out;
    }
    case YAML::NodeType::Scalar: {
      const std::string& s = n.Scalar();
      if (n.Tag() == "!") return s;  // quoted
      if (s == "true") return true;
      if (s == "false") return false;
      if (s == "null" || s == "~") return nullptr;
      if (int64_t i; absl::SimpleAtoi(s, &i)) return i;
      if (double d;
          absl::SimpleAtod(s, &d) &&
          s.find_first_not_of("0123456789+-.eE") == std::string::npos) {
        return d;
      }
      return s;
    }
    default:
      return nullptr;
  }
}

// A float as Go marshals a float32: integral values without a fraction.
Json Number(double v) {
  if (v == static_cast<double>(static_cast<int64_t>(v))) {
    return static_cast<int64_t>(v);
  }
  return v;
}

Json PluginList(const std::vector<model::PluginRef>& refs) {
  Json out = Json::array();
  for (const model::PluginRef& r : refs) {
    // The round trip through the internal type makes every weight explicit.
    out.push_back(Json{{"name", r.name}, {"weight", r.weight.value_or(0)}});
  }
  return out;
}

Json PluginSetJson(const model::PluginSet& set) {
  Json out = Json::object();
  if (!set.enabled.empty()) out["enabled"] = PluginList(set.enabled);
  if (!set.disabled.empty()) out["disabled"] = PluginList(set.disabled);
  return out;
}

// v1.Plugins' fields in their marshalled order.
constexpr ExtensionPoint kPluginsOrder[] = {
    ExtensionPoint::kPreEnqueue,     ExtensionPoint::kQueueSort,
    ExtensionPoint::kPreFilter,      ExtensionPoint::kFilter,
    ExtensionPoint::kPostFilter,     ExtensionPoint::kPreScore,
    ExtensionPoint::kScore,          ExtensionPoint::kReserve,
    ExtensionPoint::kPermit,         ExtensionPoint::kPreBind,
    ExtensionPoint::kBind,           ExtensionPoint::kPostBind,
    ExtensionPoint::kMultiPoint,     ExtensionPoint::kPlacementGenerate,
    ExtensionPoint::kPlacementScore, ExtensionPoint::kPodGroupPostFilter,
};

Json ProfileJson(const model::ProfileConfig& p) {
  Json out = Json::object();
  out["schedulerName"] = p.scheduler_name;
  if (p.percentage_of_nodes_to_score.has_value()) {
    out["percentageOfNodesToScore"] = *p.percentage_of_nodes_to_score;
  }
  Json plugins = Json::object();
  std::set<std::string> enabled;  // every point, for the args defaults
  for (ExtensionPoint point : kPluginsOrder) {
    const model::PluginSet merged = model::MergePluginSet(
        point == ExtensionPoint::kMultiPoint ? model::DefaultMultiPointPlugins()
                                             : std::vector<model::PluginRef>{},
        p.at(point));
    for (const model::PluginRef& r : merged.enabled) enabled.insert(r.name);
    plugins[std::string(model::ExtensionPointName(point))] =
        PluginSetJson(merged);
  }
  out["plugins"] = std::move(plugins);

  Json config = Json::array();
  std::set<std::string> given;
  for (const model::PluginConfigEntry& e : p.plugin_config) {
    given.insert(e.name);
    Json entry{{"name", e.name}};
    entry["args"] = e.args.IsDefined() && !e.args.IsNull() ? YamlToJson(e.args)
                                                           : Json(nullptr);
    config.push_back(std::move(entry));
  }
  for (const auto& [name, yaml] : model::DefaultPluginArgs()) {
    if (!enabled.contains(name) || given.contains(name)) continue;
    Json args{{"kind", name + "Args"}, {"apiVersion", kApiVersion}};
    const Json defaults = YamlToJson(YAML::Load(yaml));
    for (const auto& [k, v] : defaults.items()) args[k] = v;
    config.push_back(Json{{"name", name}, {"args", std::move(args)}});
  }
  out["pluginConfig"] = std::move(config);
  return out;
}

}  // namespace

std::string ConfigzJson(const Options& o) {
  const model::SchedulerConfig& c = o.config;
  const model::LeaderElectionConfig& le = o.leader_election;
  Json cfg = Json::object();
  cfg["kind"] = "KubeSchedulerConfiguration";
  cfg["apiVersion"] = kApiVersion;
  cfg["parallelism"] = c.parallelism;
  cfg["leaderElection"] = Json{{"leaderElect", le.leader_elect},
                               {"leaseDuration", GoDuration(le.lease_duration)},
                               {"renewDeadline", GoDuration(le.renew_deadline)},
                               {"retryPeriod", GoDuration(le.retry_period)},
                               {"resourceLock", le.resource_lock},
                               {"resourceName", o.lease_name},
                               {"resourceNamespace", o.lease_namespace}};
  cfg["clientConnection"] =
      Json{{"kubeconfig", o.kubeconfig.empty() ? c.client_connection.kubeconfig
                                               : o.kubeconfig},
           {"acceptContentTypes", c.client_connection.accept_content_types},
           {"contentType", c.client_connection.content_type},
           {"qps", Number(c.client_connection.qps)},
           {"burst", c.client_connection.burst}};
  cfg["enableProfiling"] = c.enable_profiling;
  cfg["enableContentionProfiling"] = c.enable_contention_profiling;
  cfg["percentageOfNodesToScore"] = c.percentage_of_nodes_to_score;
  cfg["podInitialBackoffSeconds"] = c.pod_initial_backoff_seconds;
  cfg["podMaxBackoffSeconds"] = c.pod_max_backoff_seconds;
  Json profiles = Json::array();
  for (const model::ProfileConfig& p : c.profiles) {
    profiles.push_back(ProfileJson(p));
  }
  cfg["profiles"] = std::move(profiles);
  if (c.delay_cache_until_active) cfg["delayCacheUntilActive"] = true;
  return Json{{"componentconfig", std::move(cfg)}}.dump();
}

}  // namespace kscore::app
