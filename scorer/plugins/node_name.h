#ifndef KSCORE_SCORER_PLUGINS_NODE_NAME_H_
#define KSCORE_SCORER_PLUGINS_NODE_NAME_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "model/yaml_decode.h"
#include "scorer/framework/plugin.h"

namespace kscore::plugins {

// NodeName honours spec.nodeName: a pod that names a node fits only there.
// Its PreFilterResult is that node, so no other node is filtered.
class NodeName : public framework::PreFilterPlugin,
                 public framework::FilterPlugin {
 public:
  static constexpr absl::string_view kName = "NodeName";
  static constexpr absl::string_view kReasonMismatch =
      "node(s) didn't match the requested node name";

  absl::string_view Name() const override { return kName; }
  // EventsToRegister as upstream's: A node added. Unhinted, as upstream:
  // the event alone queues.
  std::vector<framework::pb::ClusterEvent> EventsToRegister() const override {
    return {model::MakeEvent(framework::pb::EVENT_RESOURCE_NODE,
                             model::action::kAdd)};
  }

  framework::PluginStatus PreFilter(
      framework::CycleState& state,
      const framework::pb::Pod& pod) const override;
  std::optional<std::vector<std::string>> PreFilterNodeNames(
      const framework::CycleState& state,
      const framework::pb::Pod& pod) const override;

  framework::PluginStatus Filter(
      const framework::CycleState& state, const framework::pb::Pod& pod,
      const framework::pb::Node& node) const override;

  // Takes no args (absent, or only apiVersion/kind).
  static absl::StatusOr<std::unique_ptr<framework::Plugin>> New(
      const model::YamlField& args);
};

}  // namespace kscore::plugins

#endif  // KSCORE_SCORER_PLUGINS_NODE_NAME_H_
