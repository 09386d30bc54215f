#ifndef KSCORE_SCORER_PLUGINS_IMAGE_LOCALITY_H_
#define KSCORE_SCORER_PLUGINS_IMAGE_LOCALITY_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "model/yaml_decode.h"
#include "scorer/framework/plugin.h"

namespace kscore::plugins {

// ImageLocality prefers nodes that already have the pod's images (its init
// containers', containers' and image volumes'), by their size scaled by how
// many nodes of the cluster have them: an image every node has is worth
// nothing to choose between them.
class ImageLocality : public framework::ScorePlugin {
 public:
  static constexpr absl::string_view kName = "ImageLocality";
  // Sizes an image's score is clamped to: 23 MB, and 1000 MB per image of
  // the pod.
  static constexpr int64_t kMB = 1024 * 1024;
  static constexpr int64_t kMinThreshold = 23 * kMB;
  static constexpr int64_t kMaxContainerThreshold = 1000 * kMB;

  absl::string_view Name() const override { return kName; }
  // Pod.images, Node.images and ClusterData.node_count.
  std::vector<framework::pb::PodData> PodDataNeeded() const override {
    return {framework::pb::POD_DATA_IMAGES};
  }
  // No query, but the node count and the nodes' images come with the
  // plan's answers.
  bool Plans() const override { return true; }

  // Raw score in [0, 100]: the sum over the pod's images present on the
  // node of size * (nodes having it / nodes in the cluster), clamped to
  // [23 MB, 1000 MB * images] and scaled. No NormalizeScore.
  framework::PluginStatus Score(
      const framework::CycleState& state, const framework::pb::Pod& pod,
      absl::Span<const framework::pb::Node* const> nodes,
      absl::Span<int64_t> scores) const override;
  model::ScoreRange RawScoreRange() const override {
    return {0, model::kMaxNodeScore};
  }

  // Takes no args (absent, or only apiVersion/kind).
  static absl::StatusOr<std::unique_ptr<framework::Plugin>> New(
      const model::YamlField& args);
};

}  // namespace kscore::plugins

#endif  // KSCORE_SCORER_PLUGINS_IMAGE_LOCALITY_H_
