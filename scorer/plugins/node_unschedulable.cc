#include "scorer/plugins/node_unschedulable.h"

#include <string>

#include "common/status_macros.h"
#include "model/plugin_args/args.h"
#include "scorer/plugins/taint_toleration.h"

namespace kscore::plugins {

using framework::CycleState;
using framework::PluginStatus;
namespace pb = framework::pb;

PluginStatus NodeUnschedulable::Filter(const CycleState& /*state*/,
                                       const pb::Pod& pod,
                                       const pb::Node& node) const {
  if (!node.unschedulable()) return PluginStatus::Success();
  // Tolerating the cordon taint means tolerating spec.unschedulable too.
  if (TolerationsTolerateTaint(pod.tolerations(), kTaintKey, /*value=*/"",
                               kEffectNoSchedule)) {
    return PluginStatus::Success();
  }
  return PluginStatus::UnschedulableAndUnresolvable(
      std::string(kReasonUnschedulable));
}

model::QueueingHint NodeUnschedulable::Hint(
    const pb::Pod& /*pod*/, const model::EventObjects& e) const {
  using model::QueueingHint;
  if (e.new_node == nullptr) return QueueingHint::kQueue;
  const bool was_unschedulable =
      e.old_node == nullptr || e.old_node->unschedulable();
  return was_unschedulable && !e.new_node->unschedulable()
             ? QueueingHint::kQueue
             : QueueingHint::kQueueSkip;
}

absl::StatusOr<std::unique_ptr<framework::Plugin>> NodeUnschedulable::New(
    const model::YamlField& args) {
  KSCORE_RETURN_IF_ERROR(model::ExpectNoArgs(args));
  return std::make_unique<NodeUnschedulable>();
}

}  // namespace kscore::plugins
