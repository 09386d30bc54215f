#ifndef KSCORE_SCORER_PLUGINS_NODE_VOLUME_LIMITS_H_
#define KSCORE_SCORER_PLUGINS_NODE_VOLUME_LIMITS_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "model/yaml_decode.h"
#include "scorer/framework/plugin.h"

namespace kscore::plugins {

// NodeVolumeLimits (upstream's CSILimits) keeps a pod off nodes where its
// CSI volumes would pass a driver's limit (the node's CSINode
// allocatable.count), or whose CSINode lacks a driver that must be there.
// In-tree volumes count through CSI migration on nodes with a CSINode.
// The shim resolves and translates volumes (Pod.volumes.attachable) and
// counts what a node already uses (Node.csi_drivers, Node.volumes_in_use);
// the verdicts are here.
class NodeVolumeLimits : public framework::PreFilterPlugin,
                         public framework::FilterPlugin {
 public:
  static constexpr absl::string_view kName = "NodeVolumeLimits";
  static constexpr absl::string_view kReasonMaxVolumeCount =
      "node(s) exceed max volume count";
  // Preceded by the driver's name.
  static constexpr absl::string_view kReasonDriverMissing =
      " CSI driver is not installed on the node";

  absl::string_view Name() const override { return kName; }
  std::vector<framework::pb::PodData> PodDataNeeded() const override {
    return {framework::pb::POD_DATA_VOLUMES};
  }

  // Upstream's: a CSINode added (unhinted) or updated (upstream hints a
  // raised limit; unhinted here, as model::EventObjects carries no
  // CSINode), a claim added (upstream hints a claim of the pod; unhinted
  // here), an assigned pod deleted and a VolumeAttachment deleted (hinted).
  std::vector<framework::pb::ClusterEvent> EventsToRegister() const override;
  // A deleted pod helps only if it had claims or in-tree volumes CSI
  // migration knows; a deleted attachment only a pod with a
  // persistentVolumeClaim volume or such an in-tree volume.
  model::QueueingHint Hint(const framework::pb::Pod& pod,
                           const model::EventObjects& e) const override;

  // Skip for a pod without persistentVolumeClaim or ephemeral volumes or
  // in-tree volumes CSI migration knows (Pod.in_tree_volumes).
  framework::PluginStatus PreFilter(
      framework::CycleState& state,
      const framework::pb::Pod& pod) const override;
  // In upstream's order: a missing claim (UnschedulableAndUnresolvable),
  // an ephemeral one the pod does not own (Error) or, on a node with a
  // CSINode, an in-tree inline volume whose translation fails (Error); a
  // driver that must be on the node and is not; the node's pods' volume
  // error (Node.volume_error); then per driver with a limit, the volumes
  // in use there plus the pod's new ones against it (migrated ones only on
  // a node with a CSINode).
  framework::PluginStatus Filter(
      const framework::CycleState& state, const framework::pb::Pod& pod,
      const framework::pb::Node& node) const override;

  // Takes no args (absent, or only apiVersion/kind).
  static absl::StatusOr<std::unique_ptr<framework::Plugin>> New(
      const model::YamlField& args);
};

}  // namespace kscore::plugins

#endif  // KSCORE_SCORER_PLUGINS_NODE_VOLUME_LIMITS_H_
