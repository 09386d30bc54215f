#ifndef KSCORE_SCORER_PLUGINS_NODE_DECLARED_FEATURES_H_
#define KSCORE_SCORER_PLUGINS_NODE_DECLARED_FEATURES_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "model/yaml_decode.h"
#include "scorer/framework/plugin.h"

namespace kscore::plugins {

// NodeDeclaredFeatures keeps a pod off nodes whose kubelet does not declare
// (status.declaredFeatures) a node feature the pod's spec needs. The features
// are inferred from the spec as kube-scheduler v1.37 infers them
// (k8s.io/component-helpers/nodedeclaredfeatures, InferForScheduling); its
// feature gate is GA and locked on, so the plugin is in the default profile.
class NodeDeclaredFeatures : public framework::PreFilterPlugin,
                             public framework::FilterPlugin {
 public:
  static constexpr absl::string_view kName = "NodeDeclaredFeatures";
  static constexpr absl::string_view kStateKey =
      "PreFilterNodeDeclaredFeatures";
  static constexpr absl::string_view kReasonUnsatisfied =
      "node(s) didn't match Pod's required features";

  // The node features the pod needs, sorted by name.
  struct State {
    std::vector<std::string> features;
    std::string Encode() const { return absl::StrJoin(features, ","); }
    static absl::StatusOr<State> Decode(absl::string_view bytes) {
      return State{absl::StrSplit(bytes, ',', absl::SkipEmpty())};
    }
  };

  absl::string_view Name() const override { return kName; }
  // EventsToRegister as upstream's: A node added or declaring other features,
  // or the pod updated. Unhinted: upstream's hints (features declared
  // before and after) are not done yet; every such event queues.
  std::vector<framework::pb::ClusterEvent> EventsToRegister() const override {
    return {model::MakeEvent(framework::pb::EVENT_RESOURCE_NODE,
                             model::action::kAdd |
                                 model::action::kUpdateNodeDeclaredFeature),
            model::MakeEvent(framework::pb::EVENT_RESOURCE_TARGET_POD,
                             model::action::kUpdate)};
  }

  // The features a pod needs of its node, sorted by name; empty for most.
  static std::vector<std::string> RequiredFeatures(
      const framework::pb::Pod& pod);

  // Skip when the pod needs no feature, so Filter does not run.
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

#endif  // KSCORE_SCORER_PLUGINS_NODE_DECLARED_FEATURES_H_
