#ifndef KSCORE_SCORER_FRAMEWORK_REGISTRY_H_
#define KSCORE_SCORER_FRAMEWORK_REGISTRY_H_

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "model/yaml_decode.h"
#include "scorer/framework/plugin.h"

namespace kscore::framework {

// A plugin's factory validates its args once (pluginConfig[i].args, possibly
// absent) and returns a ready plugin, or InvalidArgument naming the field.
// What a pod asks of a plugin the scorer does not run, in words for the
// pod's event ("pod uses required podAntiAffinity, ..."), or "" when the pod
// asks nothing of it.
using PodGate = std::function<std::string(const pb::Pod& pod)>;

using PluginFactory = std::function<absl::StatusOr<std::unique_ptr<Plugin>>(
    const model::YamlField& args)>;

// Maps plugin names to factories. Built by value (see DefaultRegistry in
// scorer/plugins/registry.h); there is no global registry.
class Registry {
 public:
  void Register(std::string name, PluginFactory factory) {
    factories_[std::move(name)] = std::move(factory);
  }
  const PluginFactory* Find(absl::string_view name) const {
    auto it = factories_.find(std::string(name));
    return it == factories_.end() ? nullptr : &it->second;
  }
  const std::map<std::string, PluginFactory>& factories() const {
    return factories_;
  }

  // kube-scheduler plugins the scorer does not run (the shim does their job,
  // or they are not supported yet): a configuration may name them, and they
  // are then left out instead of failing as unknown. A `gate` names what of
  // a pod the missing plugin would have to honour: a profile that enables
  // the plugin (at PreFilter or Filter) refuses such a pod in PreFilter,
  // UnschedulableAndUnresolvable with the gate's message, rather than place
  // it while ignoring a requirement. `default_args` is kube-scheduler's
  // defaulted args for the plugin as a YAML mapping ("" when it takes none):
  // the only pluginConfig args accepted for a plugin that does not run, so
  // a dump of kube-scheduler's effective configuration still loads while
  // args that would change something are refused.
  void RegisterKnown(std::string name, PodGate gate = nullptr,
                     std::string default_args = "") {
    KnownPlugin& k = known_[std::move(name)];
    k.gate = std::move(gate);
    k.default_args = std::move(default_args);
  }
  bool IsKnown(absl::string_view name) const {
    return known_.contains(std::string(name));
  }
  // The gate of a known plugin, or nullptr.
  const PodGate* Gate(absl::string_view name) const {
    auto it = known_.find(std::string(name));
    return it == known_.end() || !it->second.gate ? nullptr : &it->second.gate;
  }
  // kube-scheduler's default args of a known plugin ("" if none).
  std::string DefaultArgs(absl::string_view name) const {
    auto it = known_.find(std::string(name));
    return it == known_.end() ? "" : it->second.default_args;
  }

 private:
  struct KnownPlugin {
    PodGate gate;
    std::string default_args;
  };
  std::map<std::string, PluginFactory> factories_;
  std::map<std::string, KnownPlugin> known_;
};

}  // namespace kscore::framework

#endif  // KSCORE_SCORER_FRAMEWORK_REGISTRY_H_
