#include "scorer/server/arena_allocator.h"

#include "gtest/gtest.h"
#include "kscore/scorer/v1/scorer.pb.h"

namespace kscore::server {
namespace {

namespace pb = ::kscore::scorer::v1;

TEST(ArenaAllocatorTest, RequestAndResponseLiveOnOneArenaPerCall) {
  ArenaAllocator<pb::EvaluateRequest, pb::EvaluateResponse> alloc;
  grpc::MessageHolder<pb::EvaluateRequest, pb::EvaluateResponse>* a =
      alloc.AllocateMessages();
  grpc::MessageHolder<pb::EvaluateRequest, pb::EvaluateResponse>* b =
      alloc.AllocateMessages();
  ASSERT_NE(a->request()->GetArena(), nullptr);
  EXPECT_EQ(a->request()->GetArena(), a->response()->GetArena());
  EXPECT_NE(a->request()->GetArena(), b->request()->GetArena());
  // What a call decodes (nodes and their strings) goes on that arena too.
  pb::Node* node = a->request()->add_nodes();
  node->set_name("node-a");
  EXPECT_EQ(node->GetArena(), a->request()->GetArena());
  a->Release();  // frees everything in one go
  b->Release();
}

}  // namespace
}  // namespace kscore::server
