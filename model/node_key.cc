#include "model/node_key.h"

#include <openssl/evp.h>
#include <openssl/sha.h>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace kscore::model {

namespace {

std::string Digest(absl::string_view bytes) {
  // Fetched once: OpenSSL 3's SHA256() looks the algorithm up in its
  // provider tables on every call, which cost more than hashing a node.
  static EVP_MD* const sha256 = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (sha256 == nullptr || EVP_Digest(bytes.data(), bytes.size(), digest, &size,
                                      sha256, nullptr) != 1) {
    SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(),
           digest);
  }
  return std::string(reinterpret_cast<const char*>(digest), kNodeKeyBytes);
}

}  // namespace

void ClearCycleParts(pb::Node& node) {
  node.clear_label_counts();
  node.clear_query_counts();
  node.clear_term_counts();
  node.clear_images();
  node.clear_disks();
  node.clear_volumes_in_use();
}

bool HasCycleParts(const pb::Node& node) {
  return node.label_counts_size() > 0 || node.query_counts_size() > 0 ||
         node.term_counts_size() > 0 || node.images_size() > 0 ||
         node.disks_size() > 0 || node.volumes_in_use_size() > 0;
}

void AppendDeterministic(const google::protobuf::MessageLite& m,
                         std::string* out) {
  google::protobuf::io::StringOutputStream stream(out);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  m.SerializeToCodedStream(&coded);
}

std::string NodeContentKey(const pb::Node& node) {
  if (HasCycleParts(node) || !node.content_key().empty()) {
    pb::Node bare = node;
    ClearCycleParts(bare);
    bare.clear_content_key();
    return NodeContentKey(bare);
  }
  std::string bytes;
  AppendDeterministic(node, &bytes);
  return Digest(bytes);
}

void ClearAggregates(pb::Node& node) {
  ClearCycleParts(node);
  node.clear_content_key();
  node.clear_requested();
  node.clear_non_zero_requested();
  node.clear_pod_count();
  node.clear_used_ports();
  node.clear_csi_drivers();
  node.clear_has_csi_node();
  node.clear_volume_error();
}

NodeKeyParts NodeKeyPartsOf(const pb::Node& object) {
  pb::Node head = object;
  ClearAggregates(head);
  pb::Node middle;
  middle.mutable_declared_features()->Swap(head.mutable_declared_features());
  NodeKeyParts parts;
  AppendDeterministic(head, &parts.head);
  AppendDeterministic(middle, &parts.middle);
  return parts;
}

void AppendAggregates(const pb::Node& aggregates, std::string* low,
                      std::string* high) {
  pb::Node part;
  if (aggregates.has_requested()) {
    *part.mutable_requested() = aggregates.requested();
  }
  if (aggregates.has_non_zero_requested()) {
    *part.mutable_non_zero_requested() = aggregates.non_zero_requested();
  }
  part.set_pod_count(aggregates.pod_count());
  *part.mutable_used_ports() = aggregates.used_ports();
  AppendDeterministic(part, low);
  part.Clear();
  *part.mutable_csi_drivers() = aggregates.csi_drivers();
  part.set_has_csi_node(aggregates.has_csi_node());
  part.set_volume_error(aggregates.volume_error());
  AppendDeterministic(part, high);
}

std::string NodeContentKey(const NodeKeyParts& parts, absl::string_view low,
                           absl::string_view high) {
  return Digest(absl::StrCat(parts.head, low, parts.middle, high));
}

}  // namespace kscore::model
