#include "model/node_key.h"

#include <string>

#include "absl/strings/escaping.h"
#include "gtest/gtest.h"

namespace kscore::model {
namespace {

std::string Hex(const std::string& key) { return absl::BytesToHexString(key); }

// The key is what the proto says: the first 16 bytes of the SHA-256 of the
// deterministic encoding (map entries by key), computed here by hand:
// python3 -c "import hashlib; print(hashlib.sha256(b'\x0a\x02n1').hexdigest())"
TEST(NodeKeyTest, IsTheSha256OfTheDeterministicEncoding) {
  pb::Node n;
  n.set_name("n1");
  EXPECT_EQ(Hex(NodeContentKey(n)), "23a4e97ee6abff49a25cf113c2b9e005");
  (*n.mutable_labels())["b"] = "2";
  (*n.mutable_labels())["a"] = "1";
  EXPECT_EQ(Hex(NodeContentKey(n)), "ae5e1dc52d019f185f7b9542094a2038");
  // The cycle's parts and the key itself are not part of it.
  n.add_query_counts(3);
  n.set_content_key("whatever");
  EXPECT_EQ(Hex(NodeContentKey(n)), "ae5e1dc52d019f185f7b9542094a2038");
}

// In parts (the Node object's, then the aggregates around
// declared_features), the same key as the whole node's.
TEST(NodeKeyTest, PartsMakeTheWholeNodesKey) {
  pb::Node object;
  object.set_name("n1");
  (*object.mutable_labels())["zone"] = "a";
  object.add_taints()->set_key("dedicated");
  object.set_unschedulable(true);
  object.mutable_allocatable()->set_milli_cpu(4000);
  object.add_declared_features("InPlacePodVerticalScaling");
  pb::Node aggregates;
  aggregates.mutable_requested()->set_milli_cpu(100);
  aggregates.mutable_non_zero_requested()->set_milli_cpu(100);
  aggregates.set_pod_count(1);
  aggregates.add_used_ports()->set_port(80);
  aggregates.add_csi_drivers()->set_name("ebs.csi.aws.com");
  aggregates.set_has_csi_node(true);
  aggregates.set_volume_error("converting volume(x) from inline to csi");
  pb::Node whole = object;
  whole.MergeFrom(aggregates);
  std::string low, high;
  AppendAggregates(aggregates, &low, &high);
  EXPECT_EQ(NodeContentKey(NodeKeyPartsOf(object), low, high),
            NodeContentKey(whole));
  // Aggregates in the object are not the object's.
  EXPECT_EQ(NodeKeyPartsOf(whole).head, NodeKeyPartsOf(object).head);
  pb::Node bare = whole;
  ClearAggregates(bare);
  EXPECT_EQ(bare.SerializeAsString(), object.SerializeAsString());
}

}  // namespace
}  // namespace kscore::model
