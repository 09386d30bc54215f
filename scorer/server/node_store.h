#ifndef KSCORE_SCORER_SERVER_NODE_STORE_H_
#define KSCORE_SCORER_SERVER_NODE_STORE_H_

// Nodes by content key (pb::Node::content_key): a node the shim sent once in
// full is kept, and later requests name it by its key instead of carrying
// it again. Only a node whose key is its content's is kept, so no answer is
// computed from data the key does not stand for.

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/numeric/int128.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "kscore/scorer/v1/scorer.pb.h"

namespace kscore::server {

namespace pb = ::kscore::scorer::v1;

// Bounded: two generations of at most max_nodes / 2 each; a node found in
// the older one moves to the newer, and when the newer is full the older is
// dropped. Thread-safe. Keys are model::kNodeKeyBytes long (others are
// never found nor kept), held as integers: a 16-byte std::string lives
// outside its map slot, and each lookup's compare missed the cache.
class NodeStore {
 public:
  explicit NodeStore(size_t max_nodes)
      : half_(std::max<size_t>(1, max_nodes / 2)) {}
  std::shared_ptr<const pb::Node> Find(absl::string_view key);
  void Put(absl::string_view key, std::shared_ptr<const pb::Node> node);
  size_t size() const;

  // A copy of `kept` (the node kept under `key`) that a request adds its
  // cycle's parts to: one handed back before (GiveBack), else a new copy.
  // Copying a node (its labels above all) for every request that adds
  // parts to it was most of an Evaluate call.
  std::unique_ptr<pb::Node> Borrow(absl::string_view key, const pb::Node& kept);
  // Copies borrowed under their keys, for the next requests (at most
  // kSparesPerKey each; those of keys no longer kept are dropped).
  void GiveBack(
      std::vector<std::pair<std::string, std::unique_ptr<pb::Node>>> copies);
  size_t spares() const;

 private:
  using Key = absl::uint128;
  static constexpr size_t kSparesPerKey = 2;
  // False for a key of another length.
  static bool KeyOf(absl::string_view key, Key* out);
  void PutLocked(Key key, std::shared_ptr<const pb::Node> node)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const size_t half_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<Key, std::shared_ptr<const pb::Node>> current_
      ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<Key, std::shared_ptr<const pb::Node>> previous_
      ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<Key, std::vector<std::unique_ptr<pb::Node>>> spares_
      ABSL_GUARDED_BY(mu_);
};

// Copies borrowed from a NodeStore, handed back when this goes.
class BorrowedNodes {
 public:
  BorrowedNodes() = default;
  explicit BorrowedNodes(NodeStore* store) : store_(store) {}
  BorrowedNodes(BorrowedNodes&& other) noexcept;
  BorrowedNodes& operator=(BorrowedNodes&& other) noexcept;
  ~BorrowedNodes() { Release(); }
  // Borrows a copy of `kept` under `key`; valid while this lives.
  pb::Node* Borrow(const std::string& key, const pb::Node& kept);

 private:
  void Release();
  NodeStore* store_ = nullptr;
  std::vector<std::pair<std::string, std::unique_ptr<pb::Node>>> copies_;
};

// An Evaluate request's nodes with their content keys resolved. The
// pointers stay valid while this lives.
struct ResolvedNodes {
  std::vector<const pb::Node*> nodes;  // one per request node
  // Indices of the nodes whose key the store lacks (then `nodes` is not
  // complete and the request is not evaluated).
  std::vector<int32_t> missing;
  std::vector<std::shared_ptr<const pb::Node>> held;
  BorrowedNodes merged;  // kept nodes with the cycle's parts added
};

// Resolves `nodes` against `store`, keeping those sent in full with their
// key. INVALID_ARGUMENT names a key of the wrong length, or a node that
// stands for its key and carries more than the cycle's parts.
absl::StatusOr<ResolvedNodes> ResolveNodes(
    NodeStore& store,
    const google::protobuf::RepeatedPtrField<pb::Node>& nodes);

}  // namespace kscore::server

#endif  // KSCORE_SCORER_SERVER_NODE_STORE_H_
