#include "model/cluster_event.h"

#include "absl/strings/str_cat.h"

namespace kscore::model {
namespace {

bool MatchResources(pb::EventResource registered, pb::EventResource incoming) {
  return registered == pb::EVENT_RESOURCE_WILDCARD || registered == incoming ||
         (registered == pb::EVENT_RESOURCE_POD &&
          (incoming == pb::EVENT_RESOURCE_ASSIGNED_POD ||
           incoming == pb::EVENT_RESOURCE_UNSCHEDULED_POD ||
           incoming == pb::EVENT_RESOURCE_TARGET_POD));
}

const char* ResourceName(pb::EventResource r) {
  switch (r) {
    case pb::EVENT_RESOURCE_WILDCARD:
      return "*";
    case pb::EVENT_RESOURCE_NODE:
      return "Node";
    case pb::EVENT_RESOURCE_POD:
      return "Pod";
    case pb::EVENT_RESOURCE_ASSIGNED_POD:
      return "AssignedPod";
    case pb::EVENT_RESOURCE_UNSCHEDULED_POD:
      return "UnscheduledPod";
    case pb::EVENT_RESOURCE_TARGET_POD:
      return "TargetPod";
    case pb::EVENT_RESOURCE_PERSISTENT_VOLUME:
      return "PersistentVolume";
    case pb::EVENT_RESOURCE_PERSISTENT_VOLUME_CLAIM:
      return "PersistentVolumeClaim";
    case pb::EVENT_RESOURCE_STORAGE_CLASS:
      return "StorageClass";
    case pb::EVENT_RESOURCE_CSI_NODE:
      return "CSINode";
    case pb::EVENT_RESOURCE_CSI_DRIVER:
      return "CSIDriver";
    case pb::EVENT_RESOURCE_CSI_STORAGE_CAPACITY:
      return "CSIStorageCapacity";
    case pb::EVENT_RESOURCE_VOLUME_ATTACHMENT:
      return "VolumeAttachment";
    default:
      return "";
  }
}

const char* ActionName(uint32_t a) {
  switch (a) {
    case action::kAdd:
      return "Add";
    case action::kDelete:
      return "Delete";
    case action::kUpdateNodeAllocatable:
      return "UpdateNodeAllocatable";
    case action::kUpdateNodeLabel:
      return "UpdateNodeLabel";
    case action::kUpdateNodeTaint:
      return "UpdateNodeTaint";
    case action::kUpdateNodeCondition:
      return "UpdateNodeCondition";
    case action::kUpdateNodeAnnotation:
      return "UpdateNodeAnnotation";
    case action::kUpdateNodeDeclaredFeature:
      return "UpdateNodeDeclaredFeature";
    case action::kUpdateNodePreemptionPolicy:
      return "UpdateNodePreemptionPolicy";
    case action::kUpdatePodLabel:
      return "UpdatePodLabel";
    case action::kUpdatePodScaleDown:
      return "UpdatePodScaleDown";
    case action::kUpdatePodScaleUp:
      return "UpdatePodScaleUp";
    case action::kUpdatePodToleration:
      return "UpdatePodToleration";
    case action::kUpdatePodSchedulingGatesEliminated:
      return "UpdatePodSchedulingGatesEliminated";
    case action::kUpdatePodGeneratedResourceClaim:
      return "UpdatePodGeneratedResourceClaim";
    case action::kAll:
      return "All";
    case action::kUpdate:
      return "Update";
    default:
      return "";
  }
}

}  // namespace

bool MatchClusterEvents(const pb::ClusterEvent& registered,
                        const pb::ClusterEvent& incoming) {
  // As upstream, an incoming event of several bits matches only a
  // registration that covers at least its highest bit.
  return IsWildCard(registered) ||
         (MatchResources(registered.resource(), incoming.resource()) &&
          (registered.action_type() & incoming.action_type()) != 0 &&
          incoming.action_type() <= registered.action_type());
}

std::string EventLabel(const pb::ClusterEvent& e) {
  return absl::StrCat(ResourceName(e.resource()), ActionName(e.action_type()));
}

}  // namespace kscore::model
