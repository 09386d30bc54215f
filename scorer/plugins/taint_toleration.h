#ifndef KSCORE_SCORER_PLUGINS_TAINT_TOLERATION_H_
#define KSCORE_SCORER_PLUGINS_TAINT_TOLERATION_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "model/selectors.h"
#include "model/yaml_decode.h"
#include "scorer/framework/plugin.h"

namespace kscore::plugins {

inline constexpr absl::string_view kEffectNoSchedule = "NoSchedule";
inline constexpr absl::string_view kEffectPreferNoSchedule = "PreferNoSchedule";
inline constexpr absl::string_view kEffectNoExecute = "NoExecute";

// The toleration rules live in the framework (selectors.h): the shim uses
// them too, to answer queries that honour the pod's taints.
using model::ToleratesTaint;
using model::TolerationsTolerateTaint;

// TaintToleration keeps pods off nodes with NoSchedule/NoExecute taints they
// do not tolerate, and prefers nodes with fewer untolerated PreferNoSchedule
// taints.
class TaintToleration : public framework::FilterPlugin,
                        public framework::PreScorePlugin,
                        public framework::ScorePlugin {
 public:
  static constexpr absl::string_view kName = "TaintToleration";
  static constexpr absl::string_view kStateKey = "PreScoreTaintToleration";
  static constexpr absl::string_view kReasonUntolerated =
      "node(s) had untolerated taint(s)";

  // The pod's tolerations that can match a PreferNoSchedule taint (that
  // effect, or empty). Travels in CycleState as a pb::Pod holding only them.
  struct State {
    std::vector<framework::pb::Toleration> tolerations;
    std::string Encode() const;
    static absl::StatusOr<State> Decode(absl::string_view bytes);
  };

  absl::string_view Name() const override { return kName; }
  // EventsToRegister as upstream's: A node added or its taints changed, or the
  // pod gaining a toleration.
  std::vector<framework::pb::ClusterEvent> EventsToRegister() const override {
    return {
        model::MakeEvent(framework::pb::EVENT_RESOURCE_NODE,
                         model::action::kAdd | model::action::kUpdateNodeTaint,
                         /*hinted=*/true),
        model::MakeEvent(framework::pb::EVENT_RESOURCE_TARGET_POD,
                         model::action::kUpdatePodToleration)};
  }
  // Upstream's isSchedulableAfterNodeChange: Filter rejected the node before
  // (or it is new) and passes it now.
  model::QueueingHint Hint(const framework::pb::Pod& pod,
                           const model::EventObjects& e) const override;

  framework::PluginStatus Filter(
      const framework::CycleState& state, const framework::pb::Pod& pod,
      const framework::pb::Node& node) const override;
  framework::PluginStatus PreScore(
      framework::CycleState& state, const framework::pb::Pod& pod,
      absl::Span<const framework::pb::Node* const> nodes) const override;
  // Raw score: the number of PreferNoSchedule taints the pod does not
  // tolerate (fewer is better; NormalizeScore reverses).
  framework::PluginStatus Score(
      const framework::CycleState& state, const framework::pb::Pod& pod,
      absl::Span<const framework::pb::Node* const> nodes,
      absl::Span<int64_t> scores) const override;
  framework::PluginStatus NormalizeScore(
      const framework::CycleState& state, const framework::pb::Pod& pod,
      absl::Span<int64_t> scores) const override;

  // Takes no args (absent, or only apiVersion/kind).
  static absl::StatusOr<std::unique_ptr<framework::Plugin>> New(
      const model::YamlField& args);
};

}  // namespace kscore::plugins

#endif  // KSCORE_SCORER_PLUGINS_TAINT_TOLERATION_H_
