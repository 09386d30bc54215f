#ifndef KSCORE_SCORER_PLUGINS_VOLUME_RESTRICTIONS_H_
#define KSCORE_SCORER_PLUGINS_VOLUME_RESTRICTIONS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "model/yaml_decode.h"
#include "scorer/framework/plugin.h"

namespace kscore::plugins {

// VolumeRestrictions keeps a pod off nodes where a pod already mounts one of
// its in-tree disks (GCE PD, AWS EBS, iSCSI, RBD) in a way they cannot
// share, and off every node while a claim of it with the ReadWriteOncePod
// access mode is in use by another pod.
class VolumeRestrictions : public framework::PreFilterPlugin,
                           public framework::FilterPlugin {
 public:
  static constexpr absl::string_view kName = "VolumeRestrictions";
  static constexpr absl::string_view kPreFilterStateKey =
      "PreFilterVolumeRestrictions";
  static constexpr absl::string_view kReasonDiskConflict =
      "node(s) had no available disk";
  static constexpr absl::string_view kReasonReadWriteOncePodConflict =
      "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod "
      "access mode already in-use by another pod";

  // Found in PreFilter: the pod's claims (indices into Pod.volume_claims,
  // one per name) with the ReadWriteOncePod access mode, and how many of
  // them pods already use.
  struct PreFilterState {
    std::vector<int32_t> rwop_claims;
    int64_t conflicts = 0;

    std::string Encode() const;
    static absl::StatusOr<PreFilterState> Decode(absl::string_view bytes);
  };

  absl::string_view Name() const override { return kName; }
  // Pod.volumes: the claims' access modes and the volumes naming them.
  std::vector<framework::pb::PodData> PodDataNeeded() const override {
    return {framework::pb::POD_DATA_VOLUMES};
  }

  // EventsToRegister as upstream's: an assigned pod deleted (hinted), a
  // node added, a claim added. Upstream hints the claim event (one the pod
  // names), but model::EventObjects carries no claims: it is unhinted.
  std::vector<framework::pb::ClusterEvent> EventsToRegister() const override;
  // Upstream's isSchedulableAfterAssignedPodDeleted: Queue when the deleted
  // pod, in the pod's namespace, held a disk the pod conflicts with or named
  // one of the pod's claims.
  model::QueueingHint Hint(const framework::pb::Pod& pod,
                           const model::EventObjects& e) const override;

  // UnschedulableAndUnresolvable ("persistentvolumeclaim \"c\" not found")
  // for a missing claim; Skip when the pod has no in-tree disk and none of
  // its ReadWriteOncePod claims is in use.
  framework::PluginStatus PreFilter(
      framework::CycleState& state,
      const framework::pb::Pod& pod) const override;
  // Unschedulable when a disk of the pod conflicts with one on the node
  // (Node.disks), then when a ReadWriteOncePod claim is in use.
  framework::PluginStatus Filter(
      const framework::CycleState& state, const framework::pb::Pod& pod,
      const framework::pb::Node& node) const override;

  // Upstream's isVolumeConflict for two disks.
  static bool Conflict(const framework::pb::InlineDisk& a,
                       const framework::pb::InlineDisk& b);
  // PreFilter's state, or the status that stops the pod (Error when
  // pod.volumes does not match pod.volume_claims).
  static framework::PluginStatus Prepare(const framework::pb::Pod& pod,
                                         absl::Span<const int64_t> freed,
                                         PreFilterState& out);

  // Takes no args (absent, or only apiVersion/kind).
  static absl::StatusOr<std::unique_ptr<framework::Plugin>> New(
      const model::YamlField& args);
};

}  // namespace kscore::plugins

#endif  // KSCORE_SCORER_PLUGINS_VOLUME_RESTRICTIONS_H_
