#include "scorer/plugins/node_ports.h"

#include <string>

#include "common/status_macros.h"
#include "model/plugin_args/args.h"

namespace kscore::plugins {

using framework::CycleState;
using framework::PluginStatus;
namespace pb = framework::pb;

namespace {

constexpr absl::string_view kBindAllHostIp = "0.0.0.0";
constexpr absl::string_view kDefaultProtocol = "TCP";

absl::string_view OrDefault(const std::string& s, absl::string_view def) {
  return s.empty() ? def : absl::string_view(s);
}

// HostPortInfo.CheckConflict: same protocol and port, and the same host IP
// unless either side binds every address.
bool Conflicts(const pb::ContainerPort& want, const pb::Node& node) {
  if (want.host_port() <= 0) return false;
  absl::string_view ip = OrDefault(want.host_ip(), kBindAllHostIp);
  absl::string_view protocol = OrDefault(want.protocol(), kDefaultProtocol);
  for (const pb::HostPort& used : node.used_ports()) {
    if (used.port() != want.host_port() ||
        OrDefault(used.protocol(), kDefaultProtocol) != protocol) {
      continue;
    }
    absl::string_view used_ip = OrDefault(used.host_ip(), kBindAllHostIp);
    if (ip == kBindAllHostIp || used_ip == kBindAllHostIp || used_ip == ip) {
      return true;
    }
  }
  return false;
}

// Calls fn for each host port of the containers that run for the pod's whole
// life: regular containers and restartable (sidecar) init containers.
template <typename Fn>
bool AnyHostPort(const pb::Pod& pod, Fn fn) {
  for (const pb::Container& c : pod.init_containers()) {
    if (c.restart_policy() != "Always") continue;
    for (const pb::ContainerPort& p : c.ports()) {
      if (p.host_port() > 0 && fn(p)) return true;
    }
  }
  for (const pb::Container& c : pod.containers()) {
    for (const pb::ContainerPort& p : c.ports()) {
      if (p.host_port() > 0 && fn(p)) return true;
    }
  }
  return false;
}

}  // namespace

PluginStatus NodePorts::PreFilter(CycleState& /*state*/,
                                  const pb::Pod& pod) const {
  if (!AnyHostPort(pod, [](const pb::ContainerPort&) { return true; })) {
    return PluginStatus::Skip();
  }
  return PluginStatus::Success();
}

PluginStatus NodePorts::Filter(const CycleState& /*state*/, const pb::Pod& pod,
                               const pb::Node& node) const {
  if (node.used_ports().empty()) return PluginStatus::Success();
  if (AnyHostPort(pod, [&node](const pb::ContainerPort& p) {
        return Conflicts(p, node);
      })) {
    return PluginStatus::Unschedulable(std::string(kReasonPortsTaken));
  }
  return PluginStatus::Success();
}

model::QueueingHint NodePorts::Hint(const pb::Pod& pod,
                                    const model::EventObjects& e) const {
  using model::QueueingHint;
  if (e.event.action_type() != model::action::kDelete || e.old_pod == nullptr) {
    return QueueingHint::kQueue;
  }
  if (e.old_pod->node_name().empty()) return QueueingHint::kQueueSkip;
  // A node holding only the deleted pod's host ports: Filter rejects the
  // pod there exactly when the two share a port.
  pb::Node freed;
  AnyHostPort(*e.old_pod, [&freed](const pb::ContainerPort& p) {
    pb::HostPort* used = freed.add_used_ports();
    used->set_port(p.host_port());
    used->set_protocol(p.protocol());
    used->set_host_ip(p.host_ip());
    return false;
  });
  const CycleState state;  // Filter reads only the pod and the node
  return Filter(state, pod, freed).ok() ? QueueingHint::kQueueSkip
                                        : QueueingHint::kQueue;
}

absl::StatusOr<std::unique_ptr<framework::Plugin>> NodePorts::New(
    const model::YamlField& args) {
  KSCORE_RETURN_IF_ERROR(model::ExpectNoArgs(args));
  return std::make_unique<NodePorts>();
}

}  // namespace kscore::plugins
