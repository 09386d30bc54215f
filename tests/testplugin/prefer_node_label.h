#ifndef KSCORE_TESTS_TESTPLUGIN_PREFER_NODE_LABEL_H_
#define KSCORE_TESTS_TESTPLUGIN_PREFER_NODE_LABEL_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "model/yaml_decode.h"
#include "scorer/framework/plugin.h"

namespace kscore::testplugin {

// A placement rule the shim has never heard of, for the test that a rule
// ships by rolling the scorer alone: nodes labelled labelKey=labelValue
// score 100, the others 0. It reads node labels, which the shim sends only
// because the scorer's ListProfiles says this profile needs them.
class PreferNodeLabel : public framework::ScorePlugin {
 public:
  static constexpr absl::string_view kName = "PreferNodeLabel";

  PreferNodeLabel(std::string key, std::string value)
      : key_(std::move(key)), value_(std::move(value)) {}
  absl::string_view Name() const override { return kName; }
  framework::NodeLabelUse NodeLabels() const override {
    return framework::NodeLabelUse::kAlways;
  }
  framework::PluginStatus Score(
      const framework::CycleState& state, const framework::pb::Pod& pod,
      absl::Span<const framework::pb::Node* const> nodes,
      absl::Span<int64_t> scores) const override;

  // args: {labelKey: required, labelValue: default "true"}.
  static absl::StatusOr<std::unique_ptr<framework::Plugin>> New(
      const model::YamlField& args);

 private:
  std::string key_;
  std::string value_;
};

}  // namespace kscore::testplugin

#endif  // KSCORE_TESTS_TESTPLUGIN_PREFER_NODE_LABEL_H_
