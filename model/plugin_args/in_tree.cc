#include "model/plugin_args/in_tree.h"

#include <functional>
#include <map>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "model/plugin_args/args.h"
#include "model/plugin_args/concentrate_args.h"
#include "model/plugin_args/default_preemption_args.h"
#include "model/plugin_args/inter_pod_affinity_args.h"
#include "model/plugin_args/node_affinity_args.h"
#include "model/plugin_args/node_resources_balanced_allocation_args.h"
#include "model/plugin_args/node_resources_fit_args.h"
#include "model/plugin_args/pod_topology_spread_args.h"
#include "model/plugin_args/volume_binding_args.h"

namespace kscore::model {
namespace {

using ArgsCheck = std::function<absl::Status(const YamlField&)>;

template <typename Decode>
ArgsCheck StatusOf(Decode decode) {
  return [decode](const YamlField& args) { return decode(args).status(); };
}

const std::map<std::string, ArgsCheck, std::less<>>& RunPlugins() {
  static const auto* const kPlugins =
      new std::map<std::string, ArgsCheck, std::less<>>{
          {"Concentrate", StatusOf(&DecodeConcentrateArgs)},
          {"DefaultPreemption", StatusOf(&DecodeDefaultPreemptionArgs)},
          {"ImageLocality", &ExpectNoArgs},
          {"InterPodAffinity", StatusOf(&DecodeInterPodAffinityArgs)},
          {"NodeAffinity", StatusOf(&DecodeNodeAffinityArgs)},
          {"NodeDeclaredFeatures", &ExpectNoArgs},
          {"NodeName", &ExpectNoArgs},
          {"NodePorts", &ExpectNoArgs},
          {"NodeResourcesBalancedAllocation",
           StatusOf(&DecodeNodeResourcesBalancedAllocationArgs)},
          {"NodeResourcesFit", StatusOf(&DecodeNodeResourcesFitArgs)},
          {"NodeUnschedulable", &ExpectNoArgs},
          {"NodeVolumeLimits", &ExpectNoArgs},
          {"PodTopologySpread", StatusOf(&DecodePodTopologySpreadArgs)},
          {"TaintToleration", &ExpectNoArgs},
          {"VolumeBinding", StatusOf(&DecodeVolumeBindingArgs)},
          {"VolumeRestrictions", &ExpectNoArgs},
          {"VolumeZone", &ExpectNoArgs},
      };
  return *kPlugins;
}

std::string FlowYaml(const YAML::Node& node) {
  YAML::Emitter out;
  out.SetMapFormat(YAML::Flow);
  out.SetSeqFormat(YAML::Flow);
  out << node;
  return out.c_str();
}

bool SameYaml(const YAML::Node& a, const YAML::Node& b) {
  if (a.Type() != b.Type()) return false;
  switch (a.Type()) {
    case YAML::NodeType::Scalar:
      return a.Scalar() == b.Scalar();
    case YAML::NodeType::Sequence:
      if (a.size() != b.size()) return false;
      for (size_t i = 0; i < a.size(); ++i) {
        if (!SameYaml(a[i], b[i])) return false;
      }
      return true;
    case YAML::NodeType::Map:
      if (a.size() != b.size()) return false;
      for (const auto& kv : a) {
        if (!kv.first.IsScalar()) return false;
        const YAML::Node& cb = b;
        YAML::Node other = cb[kv.first.Scalar()];
        if (!other.IsDefined() || !SameYaml(kv.second, other)) return false;
      }
      return true;
    default:
      return true;
  }
}

// One field of the args of a plugin not run against its default.
absl::Status CheckFieldOfPluginNotRun(const PluginConfigEntry& e,
                                      const std::string& key,
                                      const YAML::Node& value,
                                      const YAML::Node& def,
                                      const std::string& defaults_yaml) {
  const YamlField field = YamlField(e.args, e.path).Child(key);
  if (!def.IsDefined() && defaults_yaml.empty()) {
    return field.Error(absl::StrCat("unknown field \"", key, "\": plugin \"",
                                    e.name, "\" takes no args"));
  }
  if (!def.IsDefined()) {
    return field.Error(absl::StrCat(
        "unknown field \"", key, "\": kscore does not run plugin \"", e.name,
        "\", so its args cannot take effect (only kube-scheduler's "
        "defaults are accepted: ",
        defaults_yaml, ")"));
  }
  if (!SameYaml(value, def)) {
    return field.Error(absl::StrCat("Invalid value: ", FlowYaml(value),
                                    ": kscore does not run plugin \"", e.name,
                                    "\", so only kube-scheduler's default (",
                                    FlowYaml(def), ") is accepted"));
  }
  return absl::OkStatus();
}

}  // namespace

bool IsInTreePluginRun(absl::string_view name) {
  return RunPlugins().find(name) != RunPlugins().end();
}

std::vector<std::string> InTreePluginsRun() {
  std::vector<std::string> out;
  for (const auto& [name, check] : RunPlugins()) out.push_back(name);
  return out;
}

absl::Status ValidateInTreePluginArgs(absl::string_view name,
                                      const YamlField& args) {
  auto it = RunPlugins().find(name);
  return it == RunPlugins().end() ? absl::OkStatus() : it->second(args);
}

std::vector<PluginNotRun> InTreePluginsNotRun() {
  std::vector<PluginNotRun> out;
  for (const char* name : {"SchedulingGates", "PrioritySort", "DefaultBinder",
                           "GangScheduling", "DeferredPodScheduling",
                           "TopologyPlacementGenerator", "PodGroupPodsCount"}) {
    out.push_back({name, ""});
  }
  // The one that takes args, with kube-scheduler's defaulted args (default
  // feature gates; apis/config/v1/defaults.go).
  for (const auto& [name, args] : DefaultPluginArgs()) {
    if (name == "DynamicResources") out.push_back({name, args});
  }
  return out;
}

absl::Status CheckArgsOfPluginNotRun(const PluginConfigEntry& e,
                                     const std::string& defaults_yaml) {
  YamlField args(e.args, e.path);
  if (!args.present()) return absl::OkStatus();
  YAML::Node defaults = defaults_yaml.empty() ? YAML::Node(YAML::NodeType::Map)
                                              : YAML::Load(defaults_yaml);
  const YAML::Node& cdefaults = defaults;
  for (const auto& kv : args.node()) {
    if (!kv.first.IsScalar()) return args.Error("keys must be strings");
    const std::string& key = kv.first.Scalar();
    if (key == "apiVersion") continue;
    if (key == "kind") {
      KSCORE_RETURN_IF_ERROR(CheckArgsKind(args, e.name));
      continue;
    }
    KSCORE_RETURN_IF_ERROR(CheckFieldOfPluginNotRun(
        e, key, kv.second, cdefaults[key], defaults_yaml));
  }
  return absl::OkStatus();
}

absl::Status ValidatePluginConfig(const SchedulerConfig& config) {
  std::vector<PluginNotRun> not_run = InTreePluginsNotRun();
  for (const ProfileConfig& profile : config.profiles) {
    for (const PluginConfigEntry& e : profile.plugin_config) {
      if (IsInTreePluginRun(e.name)) {
        KSCORE_RETURN_IF_ERROR(
            ValidateInTreePluginArgs(e.name, YamlField(e.args, e.path)));
        continue;
      }
      for (const PluginNotRun& p : not_run) {
        if (p.name == e.name) {
          KSCORE_RETURN_IF_ERROR(CheckArgsOfPluginNotRun(e, p.default_args));
        }
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace kscore::model
