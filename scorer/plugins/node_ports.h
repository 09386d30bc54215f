#ifndef KSCORE_SCORER_PLUGINS_NODE_PORTS_H_
#define KSCORE_SCORER_PLUGINS_NODE_PORTS_H_

#include <memory>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "model/yaml_decode.h"
#include "scorer/framework/plugin.h"

namespace kscore::plugins {

// NodePorts rejects nodes where a host port the pod asks for (regular and
// sidecar containers) is already in use (pb::Node::used_ports).
class NodePorts : public framework::PreFilterPlugin,
                  public framework::FilterPlugin {
 public:
  static constexpr absl::string_view kName = "NodePorts";
  static constexpr absl::string_view kReasonPortsTaken =
      "node(s) didn't have free ports for the requested pod ports";

  absl::string_view Name() const override { return kName; }
  // EventsToRegister as upstream's: An assigned pod deleted (its ports freed)
  // or a node added.
  std::vector<framework::pb::ClusterEvent> EventsToRegister() const override {
    return {model::MakeEvent(framework::pb::EVENT_RESOURCE_ASSIGNED_POD,
                             model::action::kDelete, /*hinted=*/true),
            // Unhinted upstream too: a new node always queues.
            model::MakeEvent(framework::pb::EVENT_RESOURCE_NODE,
                             model::action::kAdd)};
  }
  // Upstream's isSchedulableAfterAssignedPodDeleted: the deleted pod was on
  // a node and held a host port the pod wants (by Filter's conflict rule).
  model::QueueingHint Hint(const framework::pb::Pod& pod,
                           const model::EventObjects& e) const override;

  // Skip when the pod asks for no host port. Filter reads the ports from the
  // pod itself, so there is no state to carry.
  framework::PluginStatus PreFilter(
      framework::CycleState& state,
      const framework::pb::Pod& pod) const override;
  framework::PluginStatus Filter(
      const framework::CycleState& state, const framework::pb::Pod& pod,
      const framework::pb::Node& node) const override;

  // Takes no args (absent, or only apiVersion/kind).
  static absl::StatusOr<std::unique_ptr<framework::Plugin>> New(
      const model::YamlField& args);
};

}  // namespace kscore::plugins

#endif  // KSCORE_SCORER_PLUGINS_NODE_PORTS_H_
