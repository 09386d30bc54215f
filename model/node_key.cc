#include "model/node_key.h"

#include <openssl/sha.h>

#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace kscore::model {

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
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(),
         digest);
  return std::string(reinterpret_cast<const char*>(digest), kNodeKeyBytes);
}

}  // namespace kscore::model
