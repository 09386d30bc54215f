#ifndef KSCORE_SCORER_PLUGINS_NODE_RESOURCES_FIT_H_
#define KSCORE_SCORER_PLUGINS_NODE_RESOURCES_FIT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "model/plugin_args/node_resources_fit_args.h"
#include "model/yaml_decode.h"
#include "scorer/framework/cycle_state.h"
#include "scorer/framework/plugin.h"

namespace kscore::plugins {

// ------------------------------------------------------------------------
// Shared with NodeResourcesBalancedAllocation, as kube-scheduler's
// resourceAllocationScorer is.

// A resource to score and its weight (config.ResourceSpec, decoded in
// model/plugin_args).
using model::DefaultResourceSpecs;
using model::ResourceSpec;

// v1helper.IsExtendedResourceName / schedutil.IsScalarResourceName.
bool IsExtendedResourceName(absl::string_view name);
bool IsScalarResourceName(absl::string_view name);

// A configured resource resolved once, so scoring compares no strings.
class ScoredResource {
 public:
  explicit ScoredResource(ResourceSpec spec);

  const ResourceSpec& spec() const { return spec_; }
  // Resources not named cpu/memory/ephemeral-storage that the pod does not
  // request are left out of the score.
  bool scalar() const { return scalar_; }
  // The pod's request (from PodRequests or PodNonZeroRequests).
  int64_t PodRequest(const framework::pb::Resources& pod) const;
  // The node's allocatable and already requested amounts; cpu and memory
  // come from non_zero_requested unless use_requested. {0, 0} when the node
  // does not have the resource.
  std::pair<int64_t, int64_t> NodeAmounts(const framework::pb::Node& node,
                                          bool use_requested) const;

 private:
  enum class Kind { kCpu, kMemory, kEphemeralStorage, kOther };
  ResourceSpec spec_;
  Kind kind_;
  bool scalar_;
};

// The pod's per-resource requests as CycleState bytes: comma-separated.
std::string EncodeRequests(absl::Span<const int64_t> requests);
absl::StatusOr<std::vector<int64_t>> DecodeRequests(absl::string_view bytes);

// The pod's per-resource requests for Score: read from the PreScore state
// under `key` (a State with a `requests` vector), or, when PreScore did not
// run, computed once per batch by `compute` (then *computed is set). Errors
// name the key when the state is corrupt or not `want` long.
template <typename State, typename Compute>
absl::StatusOr<std::vector<int64_t>> ScoreRequests(
    const framework::CycleState& state, absl::string_view key, size_t want,
    Compute compute, bool* computed) {
  std::vector<int64_t> requests;
  *computed = false;
  absl::StatusOr<const State*> read = state.Read<State>(key);
  if (read.ok()) {
    requests = (*read)->requests;
  } else if (absl::IsNotFound(read.status())) {
    requests = compute();
    *computed = true;
  } else {
    return read.status();
  }
  if (requests.size() != want) {
    return absl::InvalidArgumentError(absl::StrCat("cycle_state[\"", key,
                                                   "\"] has ", requests.size(),
                                                   " requests, want ", want));
  }
  return requests;
}

// Fills allocatable/allocated/requested (sized like resources) for one node:
// calculateNodeAllocatableRequest. Entries for resources left out are 0.
void NodeAllocatableRequest(absl::Span<const ScoredResource> resources,
                            absl::Span<const int64_t> pod_requests,
                            const framework::pb::Node& node, bool use_requested,
                            absl::Span<int64_t> requested,
                            absl::Span<int64_t> allocated,
                            absl::Span<int64_t> allocatable);

// ------------------------------------------------------------------------

// NodeResourcesFit rejects nodes without room for the pod's requests (and
// pod count), and scores the rest by a scoring strategy (LeastAllocated by
// default: emptier nodes first).
class NodeResourcesFit : public framework::PreFilterPlugin,
                         public framework::FilterPlugin,
                         public framework::PreScorePlugin,
                         public framework::ScorePlugin {
 public:
  static constexpr absl::string_view kName = "NodeResourcesFit";
  static constexpr absl::string_view kPreFilterStateKey =
      "PreFilterNodeResourcesFit";
  static constexpr absl::string_view kPreScoreStateKey =
      "PreScoreNodeResourcesFit";
  static constexpr absl::string_view kReasonTooManyPods = "Too many pods";
  static constexpr absl::string_view kReasonCpu = "Insufficient cpu";
  static constexpr absl::string_view kReasonMemory = "Insufficient memory";
  static constexpr absl::string_view kReasonEphemeralStorage =
      "Insufficient ephemeral-storage";
  // Other resources: "Insufficient <resource name>".
  static constexpr absl::string_view kReasonInsufficientPrefix =
      "Insufficient ";

  using Strategy = model::ScoringStrategyType;
  using ShapePoint = model::UtilizationShapePoint;
  // NodeResourcesFitArgs, defaulted as kube-scheduler does.
  using Args = model::NodeResourcesFitArgs;

  // The pod's requests to check against a node, ignored resources dropped
  // and other resources sorted by name. Encoded as a pb::Resources.
  struct PreFilterState {
    int64_t milli_cpu = 0;
    int64_t memory = 0;
    int64_t ephemeral_storage = 0;
    std::vector<std::pair<std::string, int64_t>> scalar;

    std::string Encode() const;
    static absl::StatusOr<PreFilterState> Decode(absl::string_view bytes);
  };

  // The pod's non-zero requests for each scored resource, in args order.
  // Encoded as comma-separated integers.
  struct PreScoreState {
    std::vector<int64_t> requests;

    std::string Encode() const;
    static absl::StatusOr<PreScoreState> Decode(absl::string_view bytes);
  };

  explicit NodeResourcesFit(Args args);

  absl::string_view Name() const override { return kName; }
  // EventsToRegister as upstream's: freed room (an assigned pod deleted or
  // scaled down, the pod scaled down) or a node with more allocatable.
  // Upstream's DeviceClass events are left out: kscore has no DRA. The
  // scale-down registrations stay unhinted: upstream's hints read the pods'
  // status resources, which pb::Pod does not carry.
  std::vector<framework::pb::ClusterEvent> EventsToRegister() const override {
    return {model::MakeEvent(framework::pb::EVENT_RESOURCE_ASSIGNED_POD,
                             model::action::kDelete, /*hinted=*/true),
            model::MakeEvent(
                framework::pb::EVENT_RESOURCE_NODE,
                model::action::kAdd | model::action::kUpdateNodeAllocatable,
                /*hinted=*/true),
            model::MakeEvent(framework::pb::EVENT_RESOURCE_ASSIGNED_POD,
                             model::action::kUpdatePodScaleDown),
            model::MakeEvent(framework::pb::EVENT_RESOURCE_TARGET_POD,
                             model::action::kUpdatePodScaleDown)};
  }
  // Upstream's isSchedulableAfterAssignedPodDelete (Queue unless the deleted
  // pod was never on a node) and isSchedulableAfterNodeChange (the pod fits
  // the node with no pods on it, by this plugin's own PreFilter and Filter;
  // for an update, the node also gained allocatable the pod asks for, or
  // pod room).
  model::QueueingHint Hint(const framework::pb::Pod& pod,
                           const model::EventObjects& e) const override;

  framework::PluginStatus PreFilter(
      framework::CycleState& state,
      const framework::pb::Pod& pod) const override;
  framework::PluginStatus Filter(
      const framework::CycleState& state, const framework::pb::Pod& pod,
      const framework::pb::Node& node) const override;
  framework::PluginStatus PreScore(
      framework::CycleState& state, const framework::pb::Pod& pod,
      absl::Span<const framework::pb::Node* const> nodes) const override;
  // Raw scores are already in [0, 100]: no NormalizeScore.
  framework::PluginStatus Score(
      const framework::CycleState& state, const framework::pb::Pod& pod,
      absl::Span<const framework::pb::Node* const> nodes,
      absl::Span<int64_t> scores) const override;
  model::ScoreRange RawScoreRange() const override {
    return {0, model::kMaxNodeScore};
  }

  const Args& args() const { return args_; }

  // The state PreFilter writes (exposed for the shim's and tests' use).
  PreFilterState ComputePreFilterState(const framework::pb::Pod& pod) const;

  static absl::StatusOr<Args> ParseArgs(const model::YamlField& args);
  static absl::StatusOr<std::unique_ptr<framework::Plugin>> New(
      const model::YamlField& args);

 private:
  bool Ignored(absl::string_view resource) const;
  // Upstream's isFit: whether the pod fits `node` with no pods on it.
  bool FitsEmptyNode(const framework::pb::Pod& pod,
                     const framework::pb::Node& node) const;
  int64_t ScoreNode(absl::Span<const int64_t> requested,
                    absl::Span<const int64_t> allocatable) const;

  Args args_;
  std::vector<ScoredResource> resources_;
  // args_.shape with scores scaled to [0, kMaxNodeScore].
  std::vector<ShapePoint> shape_;
};

}  // namespace kscore::plugins

#endif  // KSCORE_SCORER_PLUGINS_NODE_RESOURCES_FIT_H_
