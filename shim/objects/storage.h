#ifndef KSCORE_SHIM_OBJECTS_STORAGE_H_
#define KSCORE_SHIM_OBJECTS_STORAGE_H_

#include <string>

#include "absl/status/statusor.h"
#include "kscore/scorer/v1/scorer.pb.h"
#include "nlohmann/json.hpp"

// What the shim keeps of the storage objects the volume plugins read:
// PersistentVolumeClaims, PersistentVolumes, StorageClasses, CSIDrivers and
// CSIStorageCapacities, decoded from JSON into the scorer's messages
// (pb::PodVolumes' parts) plus the identity the informers diff on.
namespace kscore::objects {

namespace pb = ::kscore::scorer::v1;

// The annotations VolumeBinding reads and writes.
inline constexpr char kAnnBindCompleted[] = "pv.kubernetes.io/bind-completed";
inline constexpr char kAnnBoundByController[] =
    "pv.kubernetes.io/bound-by-controller";
inline constexpr char kAnnSelectedNode[] = "volume.kubernetes.io/selected-node";
inline constexpr char kAnnBetaStorageClass[] =
    "volume.beta.kubernetes.io/storage-class";

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
};

struct StorageClassInfo {
  std::string resource_version;
  pb::StorageClass sc;  // capacity_tracked is the catalog's to set
};

struct CsiDriverInfo {
  std::string name;
  std::string resource_version;
  bool storage_capacity = false;  // spec.storageCapacity
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

}  // namespace kscore::objects

#endif  // KSCORE_SHIM_OBJECTS_STORAGE_H_
