#ifndef KSCORE_SCORER_PLUGINS_VOLUME_BINDING_H_
#define KSCORE_SCORER_PLUGINS_VOLUME_BINDING_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "model/plugin_args/volume_binding_args.h"
#include "model/yaml_decode.h"
#include "scorer/framework/plugin.h"

namespace kscore::plugins {

// VolumeBinding: the pod's PersistentVolumeClaims (Pod.volumes, which the
// shim fills from its informers) must be bound, or bindable on the node: a
// bound claim's volume must reach the node, an unbound claim whose class
// waits for the first consumer needs an available volume that fits and
// reaches the node, or a class that provisions there with enough capacity.
// Scores nodes by how full the matched volumes or the node's storage
// capacity would be (StorageCapacityScoring). It only decides: binding
// (Reserve, PreBind) is the caller's, from DecideVolumes.
class VolumeBinding : public framework::PreFilterPlugin,
                      public framework::FilterPlugin,
                      public framework::PreScorePlugin,
                      public framework::ScorePlugin,
                      public framework::VolumeDecisionPlugin {
 public:
  static constexpr absl::string_view kName = "VolumeBinding";
  static constexpr absl::string_view kStateKey = "VolumeBinding";
  // kube-scheduler's ConflictReasons, in the order Filter reports them.
  static constexpr absl::string_view kReasonNodeConflict =
      "node(s) didn't match PersistentVolume's node affinity";
  static constexpr absl::string_view kReasonBindConflict =
      "node(s) didn't find available persistent volumes to bind";
  static constexpr absl::string_view kReasonNotEnoughSpace =
      "node(s) did not have enough free storage";
  static constexpr absl::string_view kReasonPVNotExist =
      "node(s) unavailable due to one or more pvc(s) bound to non-existent "
      "pv(s)";
  static constexpr absl::string_view kReasonUnboundImmediate =
      "pod has unbound immediate PersistentVolumeClaims";

  // What PreFilter learnt of the claims (GetPodVolumeClaims): one byte per
  // Pod.volume_claims entry, 'b' bound, 'd' unbound with delayed binding
  // (immediate ones fail PreFilter). None for a pod without claims.
  struct State {
    std::string kinds;

    std::string Encode() const { return kinds; }
    static absl::StatusOr<State> Decode(absl::string_view bytes);
  };

  absl::string_view Name() const override { return kName; }
  std::vector<framework::pb::PodData> PodDataNeeded() const override {
    return {framework::pb::POD_DATA_VOLUMES};
  }
  // Node labels for pods with claims (volume node affinity, allowed
  // topologies, capacity topology), through the plan.
  bool Plans() const override { return true; }
  void AddToPlan(const framework::pb::Pod& pod,
                 framework::pb::PlanResponse& plan) const override;
  PlanSize PlanBytes(const framework::pb::Pod& pod) const override;
  // Upstream's registrations that the contract can name: a node added or
  // relabelled. Its StorageClass, PersistentVolumeClaim, PersistentVolume,
  // CSINode, CSIDriver and CSIStorageCapacity events have no
  // pb::EventResource yet.
  std::vector<framework::pb::ClusterEvent> EventsToRegister() const override;

  // Skip for a pod without claims; UnschedulableAndUnresolvable with
  // upstream's words for a claim missing, lost, being deleted or not the
  // pod's, and for unbound immediate claims; Error for a class without
  // volumeBindingMode.
  framework::PluginStatus PreFilter(
      framework::CycleState& state,
      const framework::pb::Pod& pod) const override;
  // FindPodVolumes: UnschedulableAndUnresolvable with its reasons.
  framework::PluginStatus Filter(
      const framework::CycleState& state, const framework::pb::Pod& pod,
      const framework::pb::Node& node) const override;
  // Never skips (StorageCapacityScoring is on).
  framework::PluginStatus PreScore(
      framework::CycleState& state, const framework::pb::Pod& pod,
      absl::Span<const framework::pb::Node* const> nodes) const override;
  // The shape of the utilisation per class of the static bindings or,
  // without them, of the provisioned claims against the node's capacity;
  // already in [0, 100].
  framework::PluginStatus Score(
      const framework::CycleState& state, const framework::pb::Pod& pod,
      absl::Span<const framework::pb::Node* const> nodes,
      absl::Span<int64_t> scores) const override;
  framework::ScoreRange RawScoreRange() const override {
    return {0, model::kMaxNodeScore};
  }
  // What Reserve would assume on the node: each delayed claim's volume
  // (static binding) or "" (provisioned there), by claim index.
  framework::PluginStatus DecideVolumes(
      const framework::CycleState& state, const framework::pb::Pod& pod,
      const framework::pb::Node& node,
      framework::pb::NodeVolumes& out) const override;
  int64_t BindTimeoutSeconds() const override {
    return args_.bind_timeout_seconds;
  }

  using Args = model::VolumeBindingArgs;

  VolumeBinding() : VolumeBinding(Args()) {}
  explicit VolumeBinding(Args args);

  const Args& args() const { return args_; }

  static absl::StatusOr<Args> ParseArgs(const model::YamlField& args);
  static absl::StatusOr<std::unique_ptr<framework::Plugin>> New(
      const model::YamlField& args);

 private:
  // helper.FunctionShape: the args' shape, scores scaled to [0, 100].
  int64_t ScoreClasses(
      absl::Span<const std::pair<int64_t, int64_t>> requested_capacity) const;

  Args args_;
  std::vector<model::UtilizationShapePoint> shape_;
};

}  // namespace kscore::plugins

#endif  // KSCORE_SCORER_PLUGINS_VOLUME_BINDING_H_
