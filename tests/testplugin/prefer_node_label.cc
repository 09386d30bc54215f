#include "tests/testplugin/prefer_node_label.h"

namespace kscore::testplugin {

framework::PluginStatus PreferNodeLabel::Score(
    const framework::CycleState&, const framework::pb::Pod&,
    absl::Span<const framework::pb::Node* const> nodes,
    absl::Span<int64_t> scores) const {
  for (size_t i = 0; i < nodes.size(); ++i) {
    auto it = nodes[i]->labels().find(key_);
    scores[i] = it != nodes[i]->labels().end() && it->second == value_
                    ? model::kMaxNodeScore
                    : 0;
  }
  return framework::PluginStatus::Success();
}

absl::StatusOr<std::unique_ptr<framework::Plugin>> PreferNodeLabel::New(
    const model::YamlField& args) {
  if (absl::Status s =
          args.ExpectMap({"apiVersion", "kind", "labelKey", "labelValue"});
      !s.ok()) {
    return s;
  }
  if (!args.Child("labelKey").present()) {
    return args.Child("labelKey").Error("Required value");
  }
  absl::StatusOr<std::string> key = args.Child("labelKey").String();
  if (!key.ok()) return key.status();
  std::string value = "true";
  if (args.Child("labelValue").present()) {
    absl::StatusOr<std::string> v = args.Child("labelValue").String();
    if (!v.ok()) return v.status();
    value = *v;
  }
  return std::make_unique<PreferNodeLabel>(*key, value);
}

}  // namespace kscore::testplugin
