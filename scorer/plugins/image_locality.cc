#include "scorer/plugins/image_locality.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "model/plugin_args/args.h"
#include "model/saturating.h"
#include "model/selectors.h"

namespace kscore::plugins {

using framework::CycleState;
using framework::PluginStatus;
namespace pb = framework::pb;

namespace {

// calculatePriority: the summed image scores clamped to the thresholds and
// mapped onto [0, 100].
int64_t Priority(int64_t sum, int64_t image_count) {
  const int64_t max_threshold =
      model::SatMul(ImageLocality::kMaxContainerThreshold, image_count);
  if (sum < ImageLocality::kMinThreshold) {
    sum = ImageLocality::kMinThreshold;
  } else if (sum > max_threshold) {
    sum = max_threshold;
  }
  // In 128 bits: 100 * a clamped sum of many large images overflows int64.
  return model::MulDiv(model::kMaxNodeScore, sum - ImageLocality::kMinThreshold,
                       max_threshold - ImageLocality::kMinThreshold);
}

}  // namespace

PluginStatus ImageLocality::Score(const CycleState& state, const pb::Pod& pod,
                                  absl::Span<const pb::Node* const> nodes,
                                  absl::Span<int64_t> scores) const {
  const int32_t total_nodes = state.cluster().node_count();
  // Every image of the pod counts, each time it appears.
  std::vector<std::string> wanted;
  wanted.reserve(pod.images_size());
  for (const std::string& image : pod.images()) {
    wanted.push_back(model::NormalizedImageName(image));
  }
  for (size_t n = 0; n < nodes.size(); ++n) {
    int64_t sum = 0;
    for (const std::string& name : wanted) {
      for (const pb::ImageState& image : nodes[n]->images()) {
        if (image.name() != name) continue;
        if (total_nodes <= 0) {
          return PluginStatus::Error(
              "cluster.node_count is 0: scoring the nodes' images needs the "
              "number of nodes in the cluster");
        }
        // scaledImageScore, in float64 as kube-scheduler: the size times
        // the share of nodes that have the image, truncated. Saturating:
        // sizes and counts come from the request.
        const double spread = static_cast<double>(image.num_nodes()) /
                              static_cast<double>(total_nodes);
        sum = model::SatAdd(
            sum, model::SatFromDouble(static_cast<double>(image.size_bytes()) *
                                      spread));
        break;
      }
    }
    scores[n] = Priority(sum, pod.images_size());
  }
  return PluginStatus::Success();
}

absl::StatusOr<std::unique_ptr<framework::Plugin>> ImageLocality::New(
    const model::YamlField& args) {
  KSCORE_RETURN_IF_ERROR(model::ExpectNoArgs(args));
  return std::make_unique<ImageLocality>();
}

}  // namespace kscore::plugins
