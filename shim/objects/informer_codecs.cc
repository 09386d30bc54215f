#include "shim/objects/informer_codecs.h"

namespace kscore::objects {

kube::ObjectCodec<PodInfo> PodCodec() {
  kube::ObjectCodec<PodInfo> codec;
  codec.from_protobuf = PodFromProto;
  codec.from_json = PodFromJson;
  codec.identity = [](const PodInfo& p) {
    return kube::Identity{p.key, p.uid, p.resource_version};
  };
  codec.keep = [](const PodInfo& p) {
    PodInfo kept;
    kept.key = p.key;
    kept.namespace_ = p.namespace_;
    kept.name = p.name;
    kept.uid = p.uid;
    kept.resource_version = p.resource_version;
    return kept;
  };
  return codec;
}

kube::ObjectCodec<NodeInfo> NodeCodec() {
  kube::ObjectCodec<NodeInfo> codec;
  codec.from_protobuf = NodeFromProto;
  codec.from_json = NodeFromJson;
  codec.identity = [](const NodeInfo& n) {
    return kube::Identity{n.node.name(), n.uid, n.resource_version};
  };
  // Without the images: their digest tells an update that changed them.
  codec.keep = [](const NodeInfo& n) {
    NodeInfo kept = n;
    kept.images.clear();
    kept.images.shrink_to_fit();
    return kept;
  };
  return codec;
}

kube::ObjectCodec<NamespaceInfo> NamespaceCodec() {
  kube::ObjectCodec<NamespaceInfo> codec;
  codec.from_protobuf = NamespaceFromProto;
  codec.from_json = NamespaceFromJson;
  codec.identity = [](const NamespaceInfo& ns) {
    return kube::Identity{ns.name, ns.uid, ns.resource_version};
  };
  codec.keep = [](const NamespaceInfo& ns) {
    NamespaceInfo kept;
    kept.name = ns.name;
    kept.uid = ns.uid;
    kept.resource_version = ns.resource_version;
    return kept;
  };
  return codec;
}

kube::ObjectCodec<WorkloadInfo> WorkloadCodec(WorkloadKind kind) {
  kube::ObjectCodec<WorkloadInfo> codec;
  codec.from_protobuf = [kind](absl::string_view raw) {
    return WorkloadFromProto(kind, raw);
  };
  codec.from_json = [kind](const nlohmann::json& obj) {
    return WorkloadFromJson(kind, obj);
  };
  codec.identity = [](const WorkloadInfo& w) {
    return kube::Identity{kube::KeyOf(w.namespace_, w.name), w.uid,
                          w.resource_version};
  };
  codec.keep = [](const WorkloadInfo& w) {
    WorkloadInfo kept;
    kept.kind = w.kind;
    kept.namespace_ = w.namespace_;
    kept.name = w.name;
    kept.uid = w.uid;
    kept.resource_version = w.resource_version;
    return kept;
  };
  return codec;
}

kube::ObjectCodec<PdbInfo> PdbCodec() {
  kube::ObjectCodec<PdbInfo> codec;
  codec.from_protobuf = PdbFromProto;
  codec.from_json = PdbFromJson;
  codec.identity = [](const PdbInfo& p) {
    return kube::Identity{kube::KeyOf(p.namespace_, p.name), p.uid,
                          p.resource_version};
  };
  codec.keep = [](const PdbInfo& p) {
    PdbInfo kept;
    kept.namespace_ = p.namespace_;
    kept.name = p.name;
    kept.uid = p.uid;
    kept.resource_version = p.resource_version;
    return kept;
  };
  return codec;
}

kube::ObjectCodec<ClaimInfo> ClaimCodec() {
  kube::ObjectCodec<ClaimInfo> codec;
  codec.from_json = ClaimFromJson;
  codec.identity = [](const ClaimInfo& c) {
    return kube::Identity{kube::KeyOf(c.namespace_, c.name), c.uid,
                          c.resource_version};
  };
  return codec;
}

kube::ObjectCodec<VolumeInfo> VolumeCodec() {
  kube::ObjectCodec<VolumeInfo> codec;
  codec.from_json = VolumeFromJson;
  codec.identity = [](const VolumeInfo& v) {
    return kube::Identity{v.pv.name(), v.uid, v.resource_version};
  };
  return codec;
}

kube::ObjectCodec<StorageClassInfo> StorageClassCodec() {
  kube::ObjectCodec<StorageClassInfo> codec;
  codec.from_json = StorageClassFromJson;
  codec.identity = [](const StorageClassInfo& c) {
    return kube::Identity{c.sc.name(), "", c.resource_version};
  };
  return codec;
}

kube::ObjectCodec<CsiDriverInfo> CsiDriverCodec() {
  kube::ObjectCodec<CsiDriverInfo> codec;
  codec.from_json = CsiDriverFromJson;
  codec.identity = [](const CsiDriverInfo& d) {
    return kube::Identity{d.name, "", d.resource_version};
  };
  return codec;
}

kube::ObjectCodec<CapacityInfo> CapacityCodec() {
  kube::ObjectCodec<CapacityInfo> codec;
  codec.from_json = CapacityFromJson;
  codec.identity = [](const CapacityInfo& c) {
    return kube::Identity{kube::KeyOf(c.namespace_, c.name), "",
                          c.resource_version};
  };
  return codec;
}

kube::ObjectCodec<CsiNodeInfo> CsiNodeCodec() {
  kube::ObjectCodec<CsiNodeInfo> codec;
  codec.from_json = CsiNodeFromJson;
  codec.identity = [](const CsiNodeInfo& n) {
    return kube::Identity{n.name, "", n.resource_version};
  };
  return codec;
}

kube::ObjectCodec<AttachmentInfo> AttachmentCodec() {
  kube::ObjectCodec<AttachmentInfo> codec;
  codec.from_json = AttachmentFromJson;
  codec.identity = [](const AttachmentInfo& a) {
    return kube::Identity{a.name, "", a.resource_version};
  };
  return codec;
}

const char* WorkloadPath(WorkloadKind kind) {
  switch (kind) {
    case WorkloadKind::kService:
      return "/api/v1/services";
    case WorkloadKind::kReplicaSet:
      return "/apis/apps/v1/replicasets";
    case WorkloadKind::kStatefulSet:
      return "/apis/apps/v1/statefulsets";
    case WorkloadKind::kReplicationController:
      return "/api/v1/replicationcontrollers";
  }
  return "";
}

}  // namespace kscore::objects
