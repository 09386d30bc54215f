#ifndef KSCORE_SCORER_SERVER_ARENA_ALLOCATOR_H_
#define KSCORE_SCORER_SERVER_ARENA_ALLOCATOR_H_

#include "google/protobuf/arena.h"
#include "grpcpp/support/message_allocator.h"

namespace kscore::server {

// Puts a call's request and response on one protobuf Arena, freed in one go
// when the call ends: a batch of hundreds of nodes is otherwise thousands of
// mallocs and frees per call.
template <typename Request, typename Response>
class ArenaAllocator final : public grpc::MessageAllocator<Request, Response> {
 public:
  grpc::MessageHolder<Request, Response>* AllocateMessages() override {
    return new Holder();
  }

 private:
  class Holder final : public grpc::MessageHolder<Request, Response> {
   public:
    Holder() : arena_(Options()) {
      this->set_request(
          google::protobuf::Arena::CreateMessage<Request>(&arena_));
      this->set_response(
          google::protobuf::Arena::CreateMessage<Response>(&arena_));
    }
    void Release() override { delete this; }

   private:
    static google::protobuf::ArenaOptions Options() {
      google::protobuf::ArenaOptions o;
      o.start_block_size = 8 << 10;
      o.max_block_size = 64 << 10;  // under malloc's mmap threshold
      return o;
    }
    google::protobuf::Arena arena_;
  };
};

}  // namespace kscore::server

#endif  // KSCORE_SCORER_SERVER_ARENA_ALLOCATOR_H_
