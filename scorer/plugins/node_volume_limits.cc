#include "scorer/plugins/node_volume_limits.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "model/plugin_args/args.h"

namespace kscore::plugins {

using framework::CycleState;
using framework::PluginStatus;
namespace pb = framework::pb;

namespace {

// filterAttachableVolumes' lookups of the pod's own claims, in spec order
// up to an in-tree inline volume whose translation fails on a node with a
// CSINode (`csi_node`), and that one's error.
PluginStatus CheckClaims(const pb::Pod& pod, bool csi_node) {
  const pb::PodVolumes& volumes = pod.volumes();
  if (volumes.claims_size() != pod.volume_claims_size()) {
    return PluginStatus::Error(
        absl::StrCat("pod.volumes.claims has ", volumes.claims_size(),
                     " entries, pod.volume_claims ", pod.volume_claims_size()));
  }
  const bool fails = csi_node && volumes.has_migration_error();
  const int checked = fails
                          ? std::min(volumes.migration_error().claims_before(),
                                     pod.volume_claims_size())
                          : pod.volume_claims_size();
  for (int i = 0; i < checked; ++i) {
    const pb::ClaimState& claim = volumes.claims(i);
    if (claim.name().empty()) {
      return PluginStatus::Error("PersistentVolumeClaim had no name");
    }
    if (!claim.found()) {
      return PluginStatus::UnschedulableAndUnresolvable(absl::StrCat(
          "looking up PVC ", pod.namespace_(), "/", claim.name(),
          ": persistentvolumeclaim \"", claim.name(), "\" not found"));
    }
    if (pod.volume_claims(i).ephemeral() && !claim.owned_by_pod()) {
      return PluginStatus::Error(
          absl::StrCat("PVC ", pod.namespace_(), "/", claim.name(),
                       " was not created for pod ", pod.namespace_(), "/",
                       pod.name(), " (pod is not owner)"));
    }
  }
  if (fails) return PluginStatus::Error(volumes.migration_error().message());
  return PluginStatus::Success();
}

const pb::CsiDriverUse* FindDriver(const pb::Node& node,
                                   const std::string& name) {
  for (const pb::CsiDriverUse& d : node.csi_drivers()) {
    if (d.name() == name) return &d;
  }
  return nullptr;
}

// getVolumeLimits: the drivers with allocatable.count (a later entry of a
// name wins, as in upstream's map).
std::map<std::string, const pb::CsiDriverUse*> Limits(const pb::Node& node) {
  std::map<std::string, const pb::CsiDriverUse*> out;
  for (const pb::CsiDriverUse& d : node.csi_drivers()) {
    if (d.has_limit()) out[d.name()] = &d;
  }
  return out;
}

}  // namespace

std::vector<pb::ClusterEvent> NodeVolumeLimits::EventsToRegister() const {
  namespace action = model::action;
  return {
      model::MakeEvent(pb::EVENT_RESOURCE_CSI_NODE, action::kAdd),
      model::MakeEvent(pb::EVENT_RESOURCE_CSI_NODE, action::kUpdate),
      model::MakeEvent(pb::EVENT_RESOURCE_ASSIGNED_POD, action::kDelete,
                       /*hinted=*/true),
      model::MakeEvent(pb::EVENT_RESOURCE_PERSISTENT_VOLUME_CLAIM,
                       action::kAdd),
      model::MakeEvent(pb::EVENT_RESOURCE_VOLUME_ATTACHMENT, action::kDelete,
                       /*hinted=*/true)};
}

model::QueueingHint NodeVolumeLimits::Hint(const pb::Pod& pod,
                                           const model::EventObjects& e) const {
  using model::QueueingHint;
  if (e.event.resource() == pb::EVENT_RESOURCE_ASSIGNED_POD) {
    // isSchedulableAfterAssignedPodDeleted: a pod with claims or in-tree
    // volumes CSI migration knows.
    if (e.old_pod == nullptr) return QueueingHint::kQueue;
    if ((e.old_pod->volume_claims().empty() &&
         e.old_pod->in_tree_volumes().empty()) ||
        e.old_pod->node_name().empty()) {
      return QueueingHint::kQueueSkip;
    }
    return QueueingHint::kQueue;
  }
  if (e.event.resource() == pb::EVENT_RESOURCE_VOLUME_ATTACHMENT) {
    // isSchedulableAfterVolumeAttachmentDeleted: persistentVolumeClaim
    // volumes, not ephemeral ones; and in-tree inline volumes, which
    // upstream queues for when the attachment's attacher is their CSI
    // driver (or their translation fails): model::EventObjects carries no
    // VolumeAttachment, so any queues.
    for (const pb::VolumeClaim& c : pod.volume_claims()) {
      if (!c.ephemeral()) return QueueingHint::kQueue;
    }
    if (!pod.in_tree_volumes().empty()) return QueueingHint::kQueue;
    return QueueingHint::kQueueSkip;
  }
  return QueueingHint::kQueue;
}

PluginStatus NodeVolumeLimits::PreFilter(CycleState& /*state*/,
                                         const pb::Pod& pod) const {
  // Upstream's IsInlineMigratable: in-tree volumes CSI migration knows.
  if (pod.volume_claims().empty() && pod.in_tree_volumes().empty())
    return PluginStatus::Skip();
  return PluginStatus::Success();
}

PluginStatus NodeVolumeLimits::Filter(const CycleState& /*state*/,
                                      const pb::Pod& pod,
                                      const pb::Node& node) const {
  if (pod.volume_claims().empty() && pod.in_tree_volumes().empty())
    return PluginStatus::Success();
  // CSI migration counts in-tree volumes only on nodes with a CSINode.
  const bool csi_node = node.has_csi_node();
  if (PluginStatus s = CheckClaims(pod, csi_node); !s.ok()) return s;
  const auto& attachable = pod.volumes().attachable();
  std::vector<int> counted;  // indexes into attachable
  for (int i = 0; i < attachable.size(); ++i) {
    if (csi_node || !attachable[i].migrated()) counted.push_back(i);
  }
  if (counted.empty()) return PluginStatus::Success();
  // VolumeLimitScaling (beta, on in v1.37): a driver whose CSIDriver asks
  // for it must be among the node's CSINode drivers. With two such drivers
  // missing, upstream names either (map order); here the pod's first.
  for (int i : counted) {
    const pb::AttachableVolume& v = attachable[i];
    if (v.required_on_node() && FindDriver(node, v.driver()) == nullptr) {
      return PluginStatus::Unschedulable(
          absl::StrCat(v.driver(), kReasonDriverMissing));
    }
  }
  const std::map<std::string, const pb::CsiDriverUse*> limits = Limits(node);
  if (limits.empty()) return PluginStatus::Success();
  // Upstream reads the node's pods' volumes only now.
  if (!node.volume_error().empty())
    return PluginStatus::Error(node.volume_error());
  // The volumes the node's pods use already count there once.
  absl::flat_hash_set<int32_t> in_use(node.volumes_in_use().begin(),
                                      node.volumes_in_use().end());
  std::map<std::string, int64_t> added;
  for (int i : counted) {
    if (!in_use.contains(i)) ++added[attachable[i].driver()];
  }
  for (const auto& [driver, count] : added) {
    auto it = limits.find(driver);
    if (it == limits.end()) continue;
    if (int64_t{it->second->attached()} + count > it->second->limit()) {
      return PluginStatus::Unschedulable(std::string(kReasonMaxVolumeCount));
    }
  }
  return PluginStatus::Success();
}

absl::StatusOr<std::unique_ptr<framework::Plugin>> NodeVolumeLimits::New(
    const model::YamlField& args) {
  KSCORE_RETURN_IF_ERROR(model::ExpectNoArgs(args));
  return std::make_unique<NodeVolumeLimits>();
}

}  // namespace kscore::plugins
