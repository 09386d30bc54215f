#include "scorer/plugins/taint_toleration.h"

#include "common/status_macros.h"
#include "model/plugin_args/args.h"
#include "scorer/framework/normalize.h"

namespace kscore::plugins {

using framework::CycleState;
using framework::PluginStatus;
namespace pb = framework::pb;

std::string TaintToleration::State::Encode() const {
  pb::Pod pod;
  for (const pb::Toleration& t : tolerations) *pod.add_tolerations() = t;
  return pod.SerializeAsString();
}

absl::StatusOr<TaintToleration::State> TaintToleration::State::Decode(
    absl::string_view bytes) {
  pb::Pod pod;
  if (!pod.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InvalidArgumentError("not a serialized toleration list");
  }
  State s;
  s.tolerations.assign(pod.tolerations().begin(), pod.tolerations().end());
  return s;
}

PluginStatus TaintToleration::Filter(const CycleState& /*state*/,
                                     const pb::Pod& pod,
                                     const pb::Node& node) const {
  for (const pb::Taint& taint : node.taints()) {
    if (taint.effect() != kEffectNoSchedule &&
        taint.effect() != kEffectNoExecute) {
      continue;
    }
    if (!TolerationsTolerateTaint(pod.tolerations(), taint.key(), taint.value(),
                                  taint.effect())) {
      return PluginStatus::UnschedulableAndUnresolvable(
          std::string(kReasonUntolerated));
    }
  }
  return PluginStatus::Success();
}

model::QueueingHint TaintToleration::Hint(const pb::Pod& pod,
                                          const model::EventObjects& e) const {
  using model::QueueingHint;
  if (e.new_node == nullptr) return QueueingHint::kQueue;
  const CycleState state;  // Filter reads only the pod and the node
  const bool was_untolerated =
      e.old_node == nullptr || !Filter(state, pod, *e.old_node).ok();
  const bool is_untolerated = !Filter(state, pod, *e.new_node).ok();
  return was_untolerated && !is_untolerated ? QueueingHint::kQueue
                                            : QueueingHint::kQueueSkip;
}

PluginStatus TaintToleration::PreScore(
    CycleState& state, const pb::Pod& pod,
    absl::Span<const pb::Node* const> /*nodes*/) const {
  State s;
  for (const pb::Toleration& t : pod.tolerations()) {
    // An empty effect matches every effect, PreferNoSchedule included.
    if (t.effect().empty() || t.effect() == kEffectPreferNoSchedule) {
      s.tolerations.push_back(t);
    }
  }
  state.Write(kStateKey, std::move(s));
  return PluginStatus::Success();
}

PluginStatus TaintToleration::Score(const CycleState& state,
                                    const pb::Pod& /*pod*/,
                                    absl::Span<const pb::Node* const> nodes,
                                    absl::Span<int64_t> scores) const {
  absl::StatusOr<const State*> s = state.Read<State>(kStateKey);
  if (!s.ok()) return PluginStatus::Error(std::string(s.status().message()));
  const std::vector<pb::Toleration>& tolerations = (*s)->tolerations;
  for (size_t i = 0; i < nodes.size(); ++i) {
    int64_t intolerable = 0;
    for (const pb::Taint& taint : nodes[i]->taints()) {
      if (taint.effect() != kEffectPreferNoSchedule) continue;
      bool tolerated = false;
      for (const pb::Toleration& t : tolerations) {
        if (ToleratesTaint(t, taint.key(), taint.value(), taint.effect())) {
          tolerated = true;
          break;
        }
      }
      if (!tolerated) ++intolerable;
    }
    scores[i] = intolerable;
  }
  return PluginStatus::Success();
}

PluginStatus TaintToleration::NormalizeScore(const CycleState& /*state*/,
                                             const pb::Pod& /*pod*/,
                                             absl::Span<int64_t> scores) const {
  framework::DefaultNormalizeScore(model::kMaxNodeScore, /*reverse=*/true,
                                   scores);
  return PluginStatus::Success();
}

absl::StatusOr<std::unique_ptr<framework::Plugin>> TaintToleration::New(
    const model::YamlField& args) {
  KSCORE_RETURN_IF_ERROR(model::ExpectNoArgs(args));
  return std::make_unique<TaintToleration>();
}

}  // namespace kscore::plugins
