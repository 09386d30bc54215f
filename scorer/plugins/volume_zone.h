#ifndef KSCORE_SCORER_PLUGINS_VOLUME_ZONE_H_
#define KSCORE_SCORER_PLUGINS_VOLUME_ZONE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "model/yaml_decode.h"
#include "scorer/framework/plugin.h"

namespace kscore::plugins {

// VolumeZone keeps a pod off nodes whose zone or region labels differ from
// those of the PersistentVolumes its claims are bound to.
class VolumeZone : public framework::PreFilterPlugin,
                   public framework::FilterPlugin {
 public:
  static constexpr absl::string_view kName = "VolumeZone";
  static constexpr absl::string_view kPreFilterStateKey = "PreFilterVolumeZone";
  static constexpr absl::string_view kReasonConflict =
      "node(s) had no available volume zone";
  // Upstream's topologyLabels, in its order: the beta keys, then GA.
  static constexpr absl::string_view kBetaZone =
      "failure-domain.beta.kubernetes.io/zone";
  static constexpr absl::string_view kBetaRegion =
      "failure-domain.beta.kubernetes.io/region";
  static constexpr absl::string_view kZone = "topology.kubernetes.io/zone";
  static constexpr absl::string_view kRegion = "topology.kubernetes.io/region";

  // One topology label of a bound volume: its key and the zones its value
  // lists (volumehelpers.LabelZonesToSet: "a__b" is {a, b}), sorted.
  struct Topology {
    std::string key;
    std::vector<std::string> values;
  };
  // The pod's volumes' topologies, found in PreFilter.
  struct PreFilterState {
    std::vector<Topology> topologies;

    std::string Encode() const;
    static absl::StatusOr<PreFilterState> Decode(absl::string_view bytes);
  };

  absl::string_view Name() const override { return kName; }
  // Pod.volumes: the claims, their volumes and classes.
  std::vector<framework::pb::PodData> PodDataNeeded() const override {
    return {framework::pb::POD_DATA_VOLUMES};
  }
  // No query; the plan asks for node labels when a volume has topology.
  bool Plans() const override { return true; }
  void AddToPlan(const framework::pb::Pod& pod,
                 framework::pb::PlanResponse& plan) const override;
  PlanSize PlanBytes(const framework::pb::Pod& pod) const override;

  // EventsToRegister as upstream's: a StorageClass added, a node added or
  // relabelled, a claim or volume added or updated. Upstream hints the
  // storage events (a WaitForFirstConsumer class; a claim of the pod; a
  // volume whose topology changed), but model::EventObjects carries no
  // storage objects: they are registered unhinted (every such event
  // requeues). Upstream does not hint the node event either.
  std::vector<framework::pb::ClusterEvent> EventsToRegister() const override;

  // Skip when no claim of the pod is bound to a volume with topology labels
  // (unbound claims of a WaitForFirstConsumer class are skipped);
  // UnschedulableAndUnresolvable in upstream's words when a claim, its
  // class or its volume is missing, or it is unbound otherwise.
  framework::PluginStatus PreFilter(
      framework::CycleState& state,
      const framework::pb::Pod& pod) const override;
  // Every volume topology label must hold the node's value for the same key
  // (or the GA key, for a beta one). A node without any topology label
  // passes.
  framework::PluginStatus Filter(
      const framework::CycleState& state, const framework::pb::Pod& pod,
      const framework::pb::Node& node) const override;

  // Upstream's getPVbyPod: fills `out` with the topologies and returns
  // Success, or returns the status that stops the pod (Error when
  // pod.volumes does not match pod.volume_claims).
  static framework::PluginStatus Prepare(const framework::pb::Pod& pod,
                                         PreFilterState& out);

  // Takes no args (absent, or only apiVersion/kind).
  static absl::StatusOr<std::unique_ptr<framework::Plugin>> New(
      const model::YamlField& args);
};

}  // namespace kscore::plugins

#endif  // KSCORE_SCORER_PLUGINS_VOLUME_ZONE_H_
