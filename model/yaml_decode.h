#ifndef KSCORE_MODEL_YAML_DECODE_H_
#define KSCORE_MODEL_YAML_DECODE_H_

#include <cstdint>
#include <initializer_list>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "yaml-cpp/yaml.h"

namespace kscore::model {

// Strict decoding of YAML, the way kube-scheduler decodes its configuration:
// unknown fields and wrong types are errors that name the field's path, e.g.
// "profiles[0].plugins.score.enabled[0].weight: expected an integer, got
// \"ten\"".
class YamlField {
 public:
  // An invalid node (yaml-cpp's answer for a missing key) counts as absent.
  YamlField(YAML::Node node, std::string path)
      : node_(node.IsDefined() ? std::move(node)
                               : YAML::Node(YAML::NodeType::Undefined)),
        path_(std::move(path)) {}

  const YAML::Node& node() const { return node_; }
  const std::string& path() const { return path_; }
  bool present() const { return node_.IsDefined() && !node_.IsNull(); }

  YamlField Child(absl::string_view key) const;
  YamlField Index(size_t i) const;
  size_t size() const { return node_.size(); }

  // Errors unless the field is a mapping whose keys are all in `allowed`.
  absl::Status ExpectMap(
      std::initializer_list<absl::string_view> allowed) const {
    return ExpectMap(absl::Span<const absl::string_view>(allowed));
  }
  absl::Status ExpectMap(absl::Span<const absl::string_view> allowed) const;
  // Errors unless the field is a sequence (absent counts as empty).
  absl::Status ExpectSequence() const;

  absl::StatusOr<std::string> String() const;
  absl::StatusOr<bool> Bool() const;
  absl::StatusOr<int64_t> Int(int64_t min, int64_t max) const;
  absl::StatusOr<double> Double() const;

  // "<path>: <message>" as InvalidArgument.
  absl::Status Error(absl::string_view message) const;

 private:
  std::string Describe() const;

  YAML::Node node_;
  std::string path_;
};

// Errors when a mapping anywhere in `node` gives a key twice, naming the
// repeated key's path and both lines. kube-scheduler decodes its file
// strictly and refuses this; yaml-cpp would keep both entries and lookups
// would silently see only the first. Also errors once the walk has visited
// more than `max_nodes` nodes, aliases expanded (each alias is walked
// again, as every later decoder walks it), so what follows is bounded too.
absl::Status CheckNoDuplicateKeys(const YAML::Node& node,
                                  const std::string& path, size_t max_nodes);

}  // namespace kscore::model

#endif  // KSCORE_MODEL_YAML_DECODE_H_
