#ifndef KSCORE_SCORER_PLUGINS_NODE_UNSCHEDULABLE_H_
#define KSCORE_SCORER_PLUGINS_NODE_UNSCHEDULABLE_H_

#include <memory>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "model/yaml_decode.h"
#include "scorer/framework/plugin.h"

namespace kscore::plugins {

// NodeUnschedulable keeps pods off cordoned nodes (spec.unschedulable), unless
// the pod tolerates the node.kubernetes.io/unschedulable:NoSchedule taint.
class NodeUnschedulable : public framework::FilterPlugin {
 public:
  static constexpr absl::string_view kName = "NodeUnschedulable";
  static constexpr absl::string_view kReasonUnschedulable =
      "node(s) were unschedulable";
  static constexpr absl::string_view kTaintKey =
      "node.kubernetes.io/unschedulable";

  absl::string_view Name() const override { return kName; }
  // EventsToRegister as upstream's: A node added or uncordoned, or the pod
  // tolerating it.
  std::vector<framework::pb::ClusterEvent> EventsToRegister() const override {
    return {
        model::MakeEvent(framework::pb::EVENT_RESOURCE_NODE,
                         model::action::kAdd | model::action::kUpdateNodeTaint,
                         /*hinted=*/true),
        model::MakeEvent(framework::pb::EVENT_RESOURCE_TARGET_POD,
                         model::action::kUpdatePodToleration)};
  }
  // Upstream's isSchedulableAfterNodeChange: a schedulable node added, or a
  // node uncordoned. The pod's tolerations are not consulted, as upstream:
  // a pod tolerating the cordon was not rejected by this plugin.
  model::QueueingHint Hint(const framework::pb::Pod& pod,
                           const model::EventObjects& e) const override;

  framework::PluginStatus Filter(
      const framework::CycleState& state, const framework::pb::Pod& pod,
      const framework::pb::Node& node) const override;

  // Takes no args (absent, or only apiVersion/kind).
  static absl::StatusOr<std::unique_ptr<framework::Plugin>> New(
      const model::YamlField& args);
};

}  // namespace kscore::plugins

#endif  // KSCORE_SCORER_PLUGINS_NODE_UNSCHEDULABLE_H_
