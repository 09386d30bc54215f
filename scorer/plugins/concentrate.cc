#include "scorer/plugins/concentrate.h"

#include <algorithm>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "model/validation.h"
#include "scorer/framework/normalize.h"

namespace kscore::plugins {

using framework::CycleState;
using framework::PluginStatus;
namespace pb = framework::pb;

PluginStatus Concentrate::Filter(const CycleState& /*state*/,
                                 const pb::Pod& /*pod*/,
                                 const pb::Node& /*node*/) const {
  if (args_.reject_everything) {
    return PluginStatus::Unschedulable(std::string(kReasonRejectEverything));
  }
  return PluginStatus::Success();
}

PluginStatus Concentrate::PreScore(
    CycleState& state, const pb::Pod& pod,
    absl::Span<const pb::Node* const> /*nodes*/) const {
  auto it = pod.labels().find(args_.label_key);
  // A pod without the label has no workload to concentrate: all nodes equal.
  if (it == pod.labels().end()) return PluginStatus::Skip();
  state.Write(kStateKey, State{it->second});
  return PluginStatus::Success();
}

PluginStatus Concentrate::Score(const CycleState& state, const pb::Pod& pod,
                                absl::Span<const pb::Node* const> nodes,
                                absl::Span<int64_t> scores) const {
  // PreScore's value when it ran; the pod's own label when a profile
  // disables PreScore, as the Go reference does. A pod without the label then
  // scores every node 0.
  absl::StatusOr<const State*> s = state.Read<State>(kStateKey);
  std::string_view value;
  if (s.ok()) {
    value = (*s)->value;
  } else if (absl::IsNotFound(s.status())) {
    auto it = pod.labels().find(args_.label_key);
    if (it == pod.labels().end()) {
      std::fill(scores.begin(), scores.end(), 0);
      return PluginStatus::Success();
    }
    value = it->second;
  } else {
    return PluginStatus::Error(std::string(s.status().message()));
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    int64_t count = 0;
    for (const pb::LabelCount& lc : nodes[i]->label_counts()) {
      if (lc.key() == args_.label_key && lc.value() == value) {
        count = lc.count();
        break;
      }
    }
    scores[i] = count;
  }
  return PluginStatus::Success();
}

PluginStatus Concentrate::NormalizeScore(const CycleState& /*state*/,
                                         const pb::Pod& /*pod*/,
                                         absl::Span<int64_t> scores) const {
  framework::DefaultNormalizeScore(model::kMaxNodeScore, /*reverse=*/false,
                                   scores);
  return PluginStatus::Success();
}

absl::StatusOr<Concentrate::Args> Concentrate::ParseArgs(
    const model::YamlField& args) {
  return model::DecodeConcentrateArgs(args);
}

absl::StatusOr<std::unique_ptr<framework::Plugin>> Concentrate::New(
    const model::YamlField& args) {
  KSCORE_ASSIGN_OR_RETURN(Args a, ParseArgs(args));
  return std::make_unique<Concentrate>(std::move(a));
}

}  // namespace kscore::plugins
