#include "shim/cache/informer_codecs.h"

namespace kscore::cache {

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
  return codec;
}

}  // namespace kscore::cache
