#ifndef KSCORE_SCORER_PLUGINS_CONCENTRATE_H_
#define KSCORE_SCORER_PLUGINS_CONCENTRATE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "model/plugin_args/concentrate_args.h"
#include "model/yaml_decode.h"
#include "scorer/framework/plugin.h"

namespace kscore::plugins {

// Concentrate packs a workload together: a node scores by how many pods with
// the incoming pod's own value of `labelKey` already run there (same
// namespace, not terminated, not being deleted), the inverse of spreading.
class Concentrate : public framework::FilterPlugin,
                    public framework::PreScorePlugin,
                    public framework::ScorePlugin {
 public:
  static constexpr absl::string_view kName = "Concentrate";
  static constexpr absl::string_view kStateKey = "PreScoreConcentrate";
  static constexpr absl::string_view kReasonRejectEverything =
      "node(s) were rejected by Concentrate (rejectEverything)";

  using Args = model::ConcentrateArgs;

  // The label value PreScore found on the pod; travels in CycleState.
  struct State {
    std::string value;
    std::string Encode() const { return value; }
    static absl::StatusOr<State> Decode(absl::string_view bytes) {
      return State{std::string(bytes)};
    }
  };

  explicit Concentrate(Args args) : args_(std::move(args)) {}

  absl::string_view Name() const override { return kName; }
  std::vector<std::string> LabelCountKeys() const override {
    return {args_.label_key};
  }
  bool FiltersWheneverEnabled() const override {
    return args_.reject_everything;
  }

  framework::PluginStatus Filter(
      const framework::CycleState& state, const framework::pb::Pod& pod,
      const framework::pb::Node& node) const override;
  framework::PluginStatus PreScore(
      framework::CycleState& state, const framework::pb::Pod& pod,
      absl::Span<const framework::pb::Node* const> nodes) const override;
  framework::PluginStatus Score(
      const framework::CycleState& state, const framework::pb::Pod& pod,
      absl::Span<const framework::pb::Node* const> nodes,
      absl::Span<int64_t> scores) const override;
  framework::PluginStatus NormalizeScore(
      const framework::CycleState& state, const framework::pb::Pod& pod,
      absl::Span<int64_t> scores) const override;

  const Args& args() const { return args_; }

  // Decodes and validates pluginConfig args (absent args mean defaults).
  static absl::StatusOr<Args> ParseArgs(const model::YamlField& args);
  static absl::StatusOr<std::unique_ptr<framework::Plugin>> New(
      const model::YamlField& args);

 private:
  Args args_;
};

}  // namespace kscore::plugins

#endif  // KSCORE_SCORER_PLUGINS_CONCENTRATE_H_
