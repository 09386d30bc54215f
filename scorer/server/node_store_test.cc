#include "scorer/server/node_store.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/node_key.h"

namespace kscore::server {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

pb::Node Whole(const std::string& name, int64_t milli_cpu) {
  pb::Node n;
  n.set_name(name);
  (*n.mutable_labels())["zone"] = "a";
  n.mutable_allocatable()->set_milli_cpu(milli_cpu);
  n.set_pod_count(3);
  n.set_content_key(model::NodeContentKey(n));
  return n;
}

pb::Node Ref(const pb::Node& whole) {
  pb::Node r;
  r.set_content_key(whole.content_key());
  return r;
}

// A node sent whole with its key is kept; later requests name it by key,
// with the cycle's parts added to the kept node, never to the store.
// A key of kNodeKeyBytes, `c` repeated.
std::string K(char c) { return std::string(model::kNodeKeyBytes, c); }

TEST(NodeStoreTest, NodesSentWholeAreFoundByTheirKey) {
  NodeStore store(16);
  google::protobuf::RepeatedPtrField<pb::Node> first;
  *first.Add() = Whole("n1", 4000);
  absl::StatusOr<ResolvedNodes> r = ResolveNodes(store, first);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->missing.empty());
  EXPECT_EQ(r->nodes[0], &first[0]);  // used as sent

  google::protobuf::RepeatedPtrField<pb::Node> later;
  *later.Add() = Ref(first[0]);
  pb::Node* counted = later.Add();
  *counted = Ref(first[0]);
  pb::LabelCount* lc = counted->add_label_counts();
  lc->set_key("app");
  lc->set_value("web");
  lc->set_count(2);
  *later.Add() = Ref(Whole("n2", 8000));  // never sent whole
  r = ResolveNodes(store, later);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->missing, ElementsAre(2));
  ASSERT_GE(r->nodes.size(), 2u);
  EXPECT_EQ(r->nodes[0]->name(), "n1");
  EXPECT_EQ(r->nodes[0]->allocatable().milli_cpu(), 4000);
  EXPECT_TRUE(r->nodes[0]->content_key().empty());
  EXPECT_EQ(r->nodes[1]->label_counts_size(), 1);
  EXPECT_EQ(r->nodes[0]->label_counts_size(), 0);  // the kept one untouched
}

// A key that is not its node's content is not kept: a request cannot make
// the replica answer for one node with another's data.
TEST(NodeStoreTest, AKeyThatIsNotTheContentsIsNotKept) {
  NodeStore store(16);
  google::protobuf::RepeatedPtrField<pb::Node> poison;
  pb::Node* n = poison.Add();
  *n = Whole("n1", 4000);
  n->mutable_allocatable()->set_milli_cpu(1);  // the key says 4000
  ASSERT_TRUE(ResolveNodes(store, poison).ok());
  google::protobuf::RepeatedPtrField<pb::Node> ref;
  *ref.Add() = Ref(Whole("n1", 4000));
  absl::StatusOr<ResolvedNodes> r = ResolveNodes(store, ref);
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(r->missing, ElementsAre(0));
}

TEST(NodeStoreTest, MalformedReferencesAreInvalidArgument) {
  NodeStore store(16);
  google::protobuf::RepeatedPtrField<pb::Node> nodes;
  nodes.Add()->set_content_key("short");
  absl::StatusOr<ResolvedNodes> r = ResolveNodes(store, nodes);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(),
              HasSubstr("nodes[0].content_key: must be 16 bytes, got 5"));
  nodes.Clear();
  pb::Node* ref = nodes.Add();
  *ref = Ref(Whole("n1", 4000));
  ref->set_pod_count(7);  // only the cycle's parts may come with a key
  r = ResolveNodes(store, nodes);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(),
              HasSubstr("nodes[0]: a node without a name"));
}

// Two generations of max/2: what is used stays, the rest goes.
TEST(NodeStoreTest, BoundedByGenerations) {
  NodeStore store(4);
  auto node = std::make_shared<const pb::Node>();
  store.Put(K('a'), node);
  store.Put(K('b'), node);                 // the newer is full: a, b
  store.Put(K('c'), node);                 // older: a, b; newer: c
  EXPECT_NE(store.Find(K('a')), nullptr);  // found: newer c, a; older b
  store.Put(K('d'), node);  // older: c, a; newer: d; b is dropped
  EXPECT_EQ(store.Find(K('b')), nullptr);
  EXPECT_NE(store.Find(K('c')), nullptr);
  EXPECT_LE(store.size(), 4u);
  // Keys differing in either half, or of another length, are other keys.
  std::string low = K('a'), high = K('a');
  low.back() = 'z';
  high.front() = 'z';
  EXPECT_EQ(store.Find(low), nullptr);
  EXPECT_EQ(store.Find(high), nullptr);
  store.Put("a", node);
  EXPECT_EQ(store.Find("a"), nullptr);
}

// A node a request adds its cycle's parts to is a copy made once and
// reused by later requests, each with its own parts only; copies go with
// their key.
TEST(NodeStoreTest, CopiesWithCyclePartsAreReused) {
  NodeStore store(4);
  google::protobuf::RepeatedPtrField<pb::Node> first;
  *first.Add() = Whole("n1", 4000);
  ASSERT_TRUE(ResolveNodes(store, first).ok());
  auto with_count = [&](const std::string& value, bool image) {
    google::protobuf::RepeatedPtrField<pb::Node> req;
    pb::Node* n = req.Add();
    *n = Ref(first[0]);
    pb::LabelCount* lc = n->add_label_counts();
    lc->set_key("app");
    lc->set_value(value);
    lc->set_count(1);
    if (image) n->add_images()->set_name("pause");
    return req;
  };
  const pb::Node* used = nullptr;
  {
    google::protobuf::RepeatedPtrField<pb::Node> req = with_count("a", true);
    absl::StatusOr<ResolvedNodes> r = ResolveNodes(store, req);
    ASSERT_TRUE(r.ok()) << r.status();
    used = r->nodes[0];
    EXPECT_EQ(used->images_size(), 1);
    EXPECT_EQ(store.spares(), 0u);
  }
  EXPECT_EQ(store.spares(), 1u);
  {
    google::protobuf::RepeatedPtrField<pb::Node> req = with_count("b", false);
    absl::StatusOr<ResolvedNodes> r = ResolveNodes(store, req);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->nodes[0], used);  // the same copy again
    EXPECT_EQ(store.spares(), 0u);
    ASSERT_EQ(r->nodes[0]->label_counts_size(), 1);
    EXPECT_EQ(r->nodes[0]->label_counts(0).value(), "b");
    EXPECT_EQ(r->nodes[0]->images_size(), 0);  // not the last request's
    EXPECT_EQ(r->nodes[0]->name(), "n1");
    EXPECT_EQ(r->nodes[0]->labels().at("zone"), "a");
    // Two at once: the second gets a copy of its own.
    google::protobuf::RepeatedPtrField<pb::Node> req2 = with_count("c", false);
    absl::StatusOr<ResolvedNodes> r2 = ResolveNodes(store, req2);
    ASSERT_TRUE(r2.ok()) << r2.status();
    EXPECT_NE(r2->nodes[0], r->nodes[0]);
    EXPECT_EQ(r2->nodes[0]->label_counts(0).value(), "c");
    EXPECT_EQ(r->nodes[0]->label_counts(0).value(), "b");
  }
  EXPECT_EQ(store.spares(), 2u);
  // The key's generation goes: its copies go with it.
  auto other = std::make_shared<const pb::Node>();
  for (char k : {'x', 'y', 'z', 'w'}) store.Put(K(k), other);
  EXPECT_EQ(store.Find(first[0].content_key()), nullptr);
  EXPECT_EQ(store.spares(), 0u);
}

}  // namespace
}  // namespace kscore::server
