#include "scorer/server/node_store.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "model/node_key.h"
#include "spdlog/spdlog.h"

namespace kscore::server {

bool NodeStore::KeyOf(absl::string_view key, Key* out) {
  if (key.size() != model::kNodeKeyBytes) return false;
  uint64_t hi = 0, lo = 0;
  std::memcpy(&hi, key.data(), sizeof(hi));
  std::memcpy(&lo, key.data() + sizeof(hi), sizeof(lo));
  *out = absl::MakeUint128(hi, lo);
  return true;
}

std::shared_ptr<const pb::Node> NodeStore::Find(absl::string_view k) {
  Key key;
  if (!KeyOf(k, &key)) return nullptr;
  absl::MutexLock lock(&mu_);
  if (auto it = current_.find(key); it != current_.end()) return it->second;
  auto it = previous_.find(key);
  if (it == previous_.end()) return nullptr;
  std::shared_ptr<const pb::Node> node = std::move(it->second);
  previous_.erase(it);
  PutLocked(key, node);
  return node;
}

void NodeStore::Put(absl::string_view k, std::shared_ptr<const pb::Node> node) {
  Key key;
  if (!KeyOf(k, &key)) return;
  absl::MutexLock lock(&mu_);
  previous_.erase(key);
  PutLocked(key, std::move(node));
}

void NodeStore::PutLocked(Key key, std::shared_ptr<const pb::Node> node) {
  if (current_.size() >= half_ && !current_.contains(key)) {
    for (const auto& [dropped, unused] : previous_) spares_.erase(dropped);
    previous_ = std::move(current_);
    current_.clear();
  }
  current_[key] = std::move(node);
}

std::unique_ptr<pb::Node> NodeStore::Borrow(absl::string_view k,
                                            const pb::Node& kept) {
  if (Key key; KeyOf(k, &key)) {
    absl::MutexLock lock(&mu_);
    auto it = spares_.find(key);
    if (it != spares_.end() && !it->second.empty()) {
      std::unique_ptr<pb::Node> spare = std::move(it->second.back());
      it->second.pop_back();
      return spare;
    }
  }
  return std::make_unique<pb::Node>(kept);
}

void NodeStore::GiveBack(
    std::vector<std::pair<std::string, std::unique_ptr<pb::Node>>> copies) {
  absl::MutexLock lock(&mu_);
  for (auto& [k, copy] : copies) {
    Key key;
    if (!KeyOf(k, &key)) continue;
    if (!current_.contains(key) && !previous_.contains(key)) continue;
    std::vector<std::unique_ptr<pb::Node>>& kept = spares_[key];
    if (kept.size() < kSparesPerKey) kept.push_back(std::move(copy));
  }
}

size_t NodeStore::spares() const {
  absl::MutexLock lock(&mu_);
  size_t n = 0;
  for (const auto& [key, list] : spares_) n += list.size();
  return n;
}

BorrowedNodes::BorrowedNodes(BorrowedNodes&& other) noexcept
    : store_(std::exchange(other.store_, nullptr)),
      copies_(std::exchange(other.copies_, {})) {}

BorrowedNodes& BorrowedNodes::operator=(BorrowedNodes&& other) noexcept {
  if (this != &other) {
    Release();
    store_ = std::exchange(other.store_, nullptr);
    copies_ = std::exchange(other.copies_, {});
  }
  return *this;
}

pb::Node* BorrowedNodes::Borrow(const std::string& key, const pb::Node& kept) {
  copies_.emplace_back(key, store_->Borrow(key, kept));
  return copies_.back().second.get();
}

void BorrowedNodes::Release() {
  if (store_ != nullptr && !copies_.empty()) {
    store_->GiveBack(std::exchange(copies_, {}));
  }
}

size_t NodeStore::size() const {
  absl::MutexLock lock(&mu_);
  return current_.size() + previous_.size();
}

namespace {

// A node that stands for its key: nothing but the key and the cycle's
// parts.
bool OnlyCycleParts(const pb::Node& n) {
  return n.name().empty() && n.labels().empty() && n.taints().empty() &&
         !n.unschedulable() && !n.has_allocatable() && !n.has_requested() &&
         !n.has_non_zero_requested() && n.pod_count() == 0 &&
         n.used_ports().empty() && n.declared_features().empty() &&
         n.csi_drivers().empty();
}

// Keeps a node sent in full under its key, when the key is its content's.
void Keep(NodeStore& store, const pb::Node& n, int i) {
  if (model::NodeContentKey(n) != n.content_key()) {
    spdlog::debug("nodes[{}] ({}): content_key is not its content's; not kept",
                  i, n.name());
    return;
  }
  auto bare = std::make_shared<pb::Node>(n);
  model::ClearCycleParts(*bare);
  bare->clear_content_key();
  store.Put(n.content_key(), std::move(bare));
}

}  // namespace

absl::StatusOr<ResolvedNodes> ResolveNodes(
    NodeStore& store,
    const google::protobuf::RepeatedPtrField<pb::Node>& nodes) {
  ResolvedNodes r;
  r.merged = BorrowedNodes(&store);
  r.nodes.reserve(static_cast<size_t>(nodes.size()));
  for (int i = 0; i < nodes.size(); ++i) {
    const pb::Node& n = nodes[i];
    if (n.content_key().empty()) {
      r.nodes.push_back(&n);
      continue;
    }
    if (n.content_key().size() != model::kNodeKeyBytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "nodes[", i, "].content_key: must be ", model::kNodeKeyBytes,
          " bytes, got ", n.content_key().size()));
    }
    if (!n.name().empty()) {  // sent in full
      Keep(store, n, i);
      r.nodes.push_back(&n);
      continue;
    }
    if (!OnlyCycleParts(n)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "nodes[", i,
          "]: a node without a name stands for its content_key "
          "and carries only label_counts, query_counts, term_counts, "
          "images, disks and volumes_in_use"));
    }
    std::shared_ptr<const pb::Node> kept = store.Find(n.content_key());
    if (kept == nullptr) {
      r.missing.push_back(i);
      continue;
    }
    if (!model::HasCycleParts(n)) {
      r.nodes.push_back(kept.get());
    } else {
      // Every cycle part is replaced: the copy may carry another
      // request's.
      pb::Node& m = *r.merged.Borrow(n.content_key(), *kept);
      model::ClearCycleParts(m);
      *m.mutable_label_counts() = n.label_counts();
      *m.mutable_query_counts() = n.query_counts();
      *m.mutable_term_counts() = n.term_counts();
      *m.mutable_images() = n.images();
      *m.mutable_disks() = n.disks();
      *m.mutable_volumes_in_use() = n.volumes_in_use();
      r.nodes.push_back(&m);
    }
    r.held.push_back(std::move(kept));
  }
  return r;
}

}  // namespace kscore::server
