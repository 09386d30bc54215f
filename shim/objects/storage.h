#ifndef KSCORE_SHIM_OBJECTS_STORAGE_H_
#define KSCORE_SHIM_OBJECTS_STORAGE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kscore/scorer/v1/scorer.pb.h"
#include "nlohmann/json.hpp"

// What the shim keeps of the storage objects the volume plugins read:
// PersistentVolumeClaims, PersistentVolumes, StorageClasses, CSIDrivers,
// CSIStorageCapacities, CSINodes and VolumeAttachments, decoded from JSON into
// the scorer's messages (pb::PodVolumes' parts) plus the identity the informers
// diff on.
namespace kscore::objects {

namespace pb = ::kscore::scorer::v1;

// The annotations VolumeBinding reads and writes.
inline constexpr char kAnnBindCompleted[] = "pv.kubernetes.io/bind-completed";
inline constexpr char kAnnBoundByController[] =
    "pv.kubernetes.io/bound-by-controller";
inline constexpr char kAnnSelectedNode[] = "volume.kubernetes.io/selected-node";
inline constexpr char kAnnBetaStorageClass[] =
    "volume.beta.kubernetes.io/storage-class";

// The in-tree plugins csi-translation-lib migrates, by upstream's names
// (pb::InTreeVolume::plugin, StorageClass provisioners).
inline constexpr char kPluginAwsEbs[] = "kubernetes.io/aws-ebs";
inline constexpr char kPluginGcePd[] = "kubernetes.io/gce-pd";
inline constexpr char kPluginAzureDisk[] = "kubernetes.io/azure-disk";
inline constexpr char kPluginCinder[] = "kubernetes.io/cinder";
inline constexpr char kPluginPortworx[] = "kubernetes.io/portworx-volume";
inline constexpr char kPluginAzureFile[] = "kubernetes.io/azure-file";
inline constexpr char kPluginVsphere[] = "kubernetes.io/vsphere-volume";

struct ClaimInfo {
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string resource_version;
  // The uid of its ownerReference with controller: true, if any.
  std::string controller_uid;
  pb::ClaimState state;  // name and found set
};

struct VolumeInfo {
  std::string uid;
  std::string resource_version;
  bool deleting = false;  // metadata.deletionTimestamp is set
  pb::PersistentVolume pv;
  // spec.csi.driver and spec.csi.volumeHandle (NodeVolumeLimits), empty
  // for a volume of another source.
  bool has_csi = false;  // spec.csi is set
  std::string csi_driver;
  std::string csi_handle;
  // Its in-tree source, of one of the plugins whose CSI migration
  // NodeVolumeLimits counts (aws-ebs, gce-pd, azure-disk, cinder,
  // portworx-volume; name and claims_before unset). The labels CSI
  // translation reads are pv's.
  std::optional<pb::InTreeVolume> in_tree;
};

struct StorageClassInfo {
  std::string resource_version;
  pb::StorageClass sc;  // capacity_tracked is the catalog's to set
};

struct CsiDriverInfo {
  std::string name;
  std::string resource_version;
  bool storage_capacity = false;  // spec.storageCapacity
  // spec.preventPodSchedulingIfMissing (NodeVolumeLimits).
  bool prevent_if_missing = false;
};

// A CSINode: per driver of spec.drivers, its name and allocatable.count.
struct CsiNodeInfo {
  std::string name;  // the node's
  std::string resource_version;
  struct Driver {
    std::string name;
    std::optional<int64_t> limit;
  };
  std::vector<Driver> drivers;
};

// A VolumeAttachment: what NodeVolumeLimits counts of it.
struct AttachmentInfo {
  std::string name;
  std::string resource_version;
  std::string attacher;     // spec.attacher
  std::string node;         // spec.nodeName
  std::string volume_name;  // spec.source.persistentVolumeName, if set
};

struct CapacityInfo {
  std::string namespace_;
  std::string name;
  std::string resource_version;
  pb::StorageCapacity capacity;  // name is "namespace/name"
};

absl::StatusOr<ClaimInfo> ClaimFromJson(const nlohmann::json& obj);
absl::StatusOr<VolumeInfo> VolumeFromJson(const nlohmann::json& obj);
absl::StatusOr<StorageClassInfo> StorageClassFromJson(
    const nlohmann::json& obj);
absl::StatusOr<CsiDriverInfo> CsiDriverFromJson(const nlohmann::json& obj);
absl::StatusOr<CapacityInfo> CapacityFromJson(const nlohmann::json& obj);
absl::StatusOr<CsiNodeInfo> CsiNodeFromJson(const nlohmann::json& obj);
absl::StatusOr<AttachmentInfo> AttachmentFromJson(const nlohmann::json& obj);

}  // namespace kscore::objects

#endif  // KSCORE_SHIM_OBJECTS_STORAGE_H_
