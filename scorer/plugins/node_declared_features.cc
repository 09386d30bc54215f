#include "scorer/plugins/node_declared_features.h"

#include <algorithm>
#include <string>

#include "common/status_macros.h"
#include "model/plugin_args/args.h"

namespace kscore::plugins {

using framework::CycleState;
using framework::PluginStatus;
namespace pb = framework::pb;

namespace {

// Feature names, as kubelets declare them.
constexpr absl::string_view kRestartAllContainers =
    "RestartAllContainersOnContainerExits";
constexpr absl::string_view kUserNamespacesHostNetwork =
    "UserNamespacesHostNetworkSupport";
constexpr absl::string_view kVolumeBindMountOptions = "VolumeBindMountOptions";

bool AnyContainer(const pb::Pod& pod, bool (*pred)(const pb::Container&)) {
  return std::any_of(pod.containers().begin(), pod.containers().end(), pred) ||
         std::any_of(pod.init_containers().begin(), pod.init_containers().end(),
                     pred);
}

}  // namespace

std::vector<std::string> NodeDeclaredFeatures::RequiredFeatures(
    const pb::Pod& pod) {
  // The features of v1.37's registry whose InferForScheduling can be true;
  // the others (in-place resize, DRA, websockets) only matter to updates or
  // to the kubelet. In name order.
  std::vector<std::string> out;
  if (AnyContainer(pod, [](const pb::Container& c) {
        return std::find(c.restart_rule_actions().begin(),
                         c.restart_rule_actions().end(),
                         "RestartAllContainers") !=
               c.restart_rule_actions().end();
      })) {
    out.emplace_back(kRestartAllContainers);
  }
  // A pod in the host's network namespace but its own user namespace.
  if (pod.host_network() && pod.has_host_users() && !pod.host_users()) {
    out.emplace_back(kUserNamespacesHostNetwork);
  }
  if (AnyContainer(
          pod, [](const pb::Container& c) { return c.bind_mount_options(); })) {
    out.emplace_back(kVolumeBindMountOptions);
  }
  return out;
}

PluginStatus NodeDeclaredFeatures::PreFilter(CycleState& state,
                                             const pb::Pod& pod) const {
  State s{RequiredFeatures(pod)};
  if (s.features.empty()) return PluginStatus::Skip();
  state.Write(kStateKey, std::move(s));
  return PluginStatus::Success();
}

PluginStatus NodeDeclaredFeatures::Filter(const CycleState& state,
                                          const pb::Pod& /*pod*/,
                                          const pb::Node& node) const {
  absl::StatusOr<const State*> s = state.Read<State>(kStateKey);
  if (!s.ok()) return PluginStatus::Error(std::string(s.status().message()));
  for (const std::string& f : (*s)->features) {
    if (std::find(node.declared_features().begin(),
                  node.declared_features().end(),
                  f) == node.declared_features().end()) {
      return PluginStatus::UnschedulableAndUnresolvable(
          std::string(kReasonUnsatisfied));
    }
  }
  return PluginStatus::Success();
}

absl::StatusOr<std::unique_ptr<framework::Plugin>> NodeDeclaredFeatures::New(
    const model::YamlField& args) {
  KSCORE_RETURN_IF_ERROR(model::ExpectNoArgs(args));
  return std::make_unique<NodeDeclaredFeatures>();
}

}  // namespace kscore::plugins
