#ifndef KSCORE_SHIM_OBJECTS_INFORMER_CODECS_H_
#define KSCORE_SHIM_OBJECTS_INFORMER_CODECS_H_

#include "shim/kube/object_codec.h"
#include "shim/objects/objects.h"
#include "shim/objects/storage.h"

namespace kscore::objects {

// Pods for the shim's informer, decoded once into PodInfo in either
// encoding. The store keeps only the identity: handlers read each new pod
// whole and never the old one (kube-scheduler's informers keep whole
// objects minus managedFields; at 10k pods that is most of its memory).
kube::ObjectCodec<PodInfo> PodCodec();

// Nodes, decoded once into NodeInfo. The store keeps all of it (only what
// the plugins read), so an update is compared with the old state typed.
kube::ObjectCodec<NodeInfo> NodeCodec();

// Namespaces, decoded into NamespaceInfo; the store keeps the identity (a
// delete needs only the name).
kube::ObjectCodec<NamespaceInfo> NamespaceCodec();

// Services, ReplicaSets, StatefulSets or ReplicationControllers (`kind`
// says which), decoded into WorkloadInfo; the store keeps the kind and the
// identity.
kube::ObjectCodec<WorkloadInfo> WorkloadCodec(WorkloadKind kind);

// PodDisruptionBudgets, decoded into PdbInfo (the cache keeps each whole);
// the store keeps the identity (a delete needs only namespace and name).
kube::ObjectCodec<PdbInfo> PdbCodec();
inline constexpr char kPdbPath[] = "/apis/policy/v1/poddisruptionbudgets";

// The storage objects VolumeBinding reads, from JSON (few, small), each
// kept whole.
kube::ObjectCodec<ClaimInfo> ClaimCodec();
kube::ObjectCodec<VolumeInfo> VolumeCodec();
kube::ObjectCodec<StorageClassInfo> StorageClassCodec();
kube::ObjectCodec<CsiDriverInfo> CsiDriverCodec();
kube::ObjectCodec<CapacityInfo> CapacityCodec();
// And those NodeVolumeLimits reads.
kube::ObjectCodec<CsiNodeInfo> CsiNodeCodec();
kube::ObjectCodec<AttachmentInfo> AttachmentCodec();
inline constexpr char kCsiNodePath[] = "/apis/storage.k8s.io/v1/csinodes";
inline constexpr char kAttachmentPath[] =
    "/apis/storage.k8s.io/v1/volumeattachments";
inline constexpr char kClaimPath[] = "/api/v1/persistentvolumeclaims";
inline constexpr char kVolumePath[] = "/api/v1/persistentvolumes";
inline constexpr char kStorageClassPath[] =
    "/apis/storage.k8s.io/v1/storageclasses";
inline constexpr char kCsiDriverPath[] = "/apis/storage.k8s.io/v1/csidrivers";
inline constexpr char kCapacityPath[] =
    "/apis/storage.k8s.io/v1/csistoragecapacities";

// The collection the informer of `kind` lists and watches
// ("/api/v1/services", "/apis/apps/v1/replicasets", ...).
const char* WorkloadPath(WorkloadKind kind);

}  // namespace kscore::objects

#endif  // KSCORE_SHIM_OBJECTS_INFORMER_CODECS_H_
