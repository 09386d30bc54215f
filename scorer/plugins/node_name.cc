#include "scorer/plugins/node_name.h"

#include <string>

#include "common/status_macros.h"
#include "model/plugin_args/args.h"

namespace kscore::plugins {

using framework::CycleState;
using framework::PluginStatus;
namespace pb = framework::pb;

PluginStatus NodeName::PreFilter(CycleState& /*state*/,
                                 const pb::Pod& /*pod*/) const {
  return PluginStatus::Success();
}

std::optional<std::vector<std::string>> NodeName::PreFilterNodeNames(
    const CycleState& /*state*/, const pb::Pod& pod) const {
  if (pod.node_name().empty()) return std::nullopt;
  return std::vector<std::string>{pod.node_name()};
}

PluginStatus NodeName::Filter(const CycleState& /*state*/, const pb::Pod& pod,
                              const pb::Node& node) const {
  if (pod.node_name().empty() || pod.node_name() == node.name()) {
    return PluginStatus::Success();
  }
  return PluginStatus::UnschedulableAndUnresolvable(
      std::string(kReasonMismatch));
}

absl::StatusOr<std::unique_ptr<framework::Plugin>> NodeName::New(
    const model::YamlField& args) {
  KSCORE_RETURN_IF_ERROR(model::ExpectNoArgs(args));
  return std::make_unique<NodeName>();
}

}  // namespace kscore::plugins
