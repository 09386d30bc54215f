#ifndef KSCORE_SHIM_CACHE_VOLUME_USE_H_
#define KSCORE_SHIM_CACHE_VOLUME_USE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "kscore/scorer/v1/scorer.pb.h"

namespace kscore::cache {

namespace pb = ::kscore::scorer::v1;

// What the pods bound or assumed on nodes use of volumes, as
// VolumeRestrictions reads it: references to claims (kube-scheduler's
// PVCRefCounts) and in-tree disks per node. Kept incrementally as pods come
// and go, so a cycle asks a few maps. Not thread-safe (the Cache's lock).
class VolumeUse {
 public:
  // What one pod adds: the claim names of its persistentVolumeClaim volumes
  // (ephemeral ones are not counted, as upstream), and its in-tree disks.
  struct PodUse {
    std::string namespace_;
    std::vector<std::string> claims;
    std::vector<pb::InlineDisk> disks;
  };
  static PodUse Of(const pb::Pod& pod);

  void Add(const PodUse& use, const std::string& node);
  void Remove(const PodUse& use, const std::string& node);

  // The volumes naming claim `ns`/`name` (ClaimState.pod_refs).
  int64_t ClaimRefs(const std::string& ns, const std::string& name) const;
  // The disks on `node` of the same kind and id as one of `wanted`, one per
  // volume (Node.disks).
  void DisksOn(const std::string& node,
               const google::protobuf::RepeatedPtrField<pb::InlineDisk>& wanted,
               google::protobuf::RepeatedPtrField<pb::InlineDisk>* out) const;
  // The disks of `use` of the same kind and id as one of `wanted`
  // (VictimPod.disks).
  static void Matching(
      const PodUse& use,
      const google::protobuf::RepeatedPtrField<pb::InlineDisk>& wanted,
      google::protobuf::RepeatedPtrField<pb::InlineDisk>* out);
  // Per claim of `use`, the index of the first persistentVolumeClaim
  // volume of `pod` naming the same claim, in any namespace
  // (VictimPod.claim_refs).
  static void ClaimRefsInto(const PodUse& use, const pb::Pod& pod,
                            google::protobuf::RepeatedField<int32_t>* out);

 private:
  // "namespace/name" -> volumes naming it.
  absl::flat_hash_map<std::string, int64_t> claims_;
  // kind and id -> node -> the disks there, one per volume.
  absl::flat_hash_map<
      std::string,
      absl::flat_hash_map<std::string, std::vector<pb::InlineDisk>>>
      disks_;
};

}  // namespace kscore::cache

#endif  // KSCORE_SHIM_CACHE_VOLUME_USE_H_
