#ifndef KSCORE_SHIM_KUBE_STORE_H_
#define KSCORE_SHIM_KUBE_STORE_H_

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"
#include "shim/kube/object_codec.h"

namespace kscore::kube {

// One event of a watch stream, its object still encoded.
struct WatchEvent {
  enum class Type { kAdded, kModified, kDeleted, kBookmark, kError };
  Type type;
  // The object of a JSON watch event, and the Status of an ERROR event in
  // either encoding.
  nlohmann::json object;
  // The object's bytes (without envelope) of a protobuf watch event.
  std::string protobuf;
};

// "ADDED", "MODIFIED", "DELETED", "BOOKMARK" or "ERROR" (either encoding);
// anything else is an error naming it.
absl::StatusOr<WatchEvent::Type> WatchEventTypeOf(absl::string_view type);

// Parses {"type": ..., "object": {...}}; unknown types are errors.
absl::StatusOr<WatchEvent> ParseWatchEvent(absl::string_view line);

// The metadata of a JSON object of any kind.
Identity JsonIdentity(const nlohmann::json& obj);

// Whole JSON objects, read as JSON only: for tests and for kinds the shim
// has no typed form of.
ObjectCodec<nlohmann::json> JsonCodec();

// An object decoded once, with its identity.
template <typename T>
struct Decoded {
  Identity id;
  Ptr<T> obj;
};

// What a handler is told. kUpdated has old_obj; kDeleted's obj is the last
// known state.
enum class DeltaType { kAdded, kUpdated, kDeleted };
template <typename T>
struct Delta {
  DeltaType type;
  Ptr<T> obj;
  Ptr<T> old_obj;
};

// The informer's cache, keyed by Identity::key, and the diff logic that
// turns lists and watch events into Deltas. Not thread-safe; no I/O, so it
// is tested on its own.
template <typename T>
class Store {
 public:
  // What is kept of each object (ObjectCodec::keep); unset: all of it. The
  // identity is kept beside it whatever the projection.
  using Projection = std::function<T(const T& obj)>;
  explicit Store(Projection keep = nullptr) : keep_(std::move(keep)) {}

  // A full list: adds, updates (resourceVersion changed) and deletes (gone
  // from the list) relative to the current contents. A changed uid is a
  // delete and an add.
  std::vector<Delta<T>> Replace(std::vector<Decoded<T>> items) {
    std::vector<Delta<T>> out;
    absl::flat_hash_set<std::string> seen;
    for (Decoded<T>& item : items) {
      std::string key = item.id.key;
      Upsert(std::move(item), /*only_if_changed=*/true, &out);
      seen.insert(std::move(key));
    }
    for (auto it = items_.begin(); it != items_.end();) {
      if (seen.contains(it->first)) {
        ++it;
        continue;
      }
      out.push_back({DeltaType::kDeleted, it->second.kept, nullptr});
      items_.erase(it++);
    }
    return out;
  }

  // A watch event (ADDED/MODIFIED/DELETED; others are ignored). ADDED for a
  // known key is an update and MODIFIED for an unknown one an add, so a
  // watch that overlaps a list stays consistent.
  std::vector<Delta<T>> Apply(WatchEvent::Type type, Decoded<T> item) {
    std::vector<Delta<T>> out;
    switch (type) {
      case WatchEvent::Type::kAdded:
      case WatchEvent::Type::kModified:
        Upsert(std::move(item), /*only_if_changed=*/false, &out);
        break;
      case WatchEvent::Type::kDeleted: {
        // A delete of an object never seen is not news to anyone.
        auto it = items_.find(item.id.key);
        if (it == items_.end()) break;
        items_.erase(it);
        out.push_back({DeltaType::kDeleted, std::move(item.obj), nullptr});
        break;
      }
      case WatchEvent::Type::kBookmark:
      case WatchEvent::Type::kError:
        break;
    }
    return out;
  }

  Ptr<T> Get(absl::string_view key) const {
    auto it = items_.find(key);
    return it == items_.end() ? nullptr : it->second.kept;
  }
  std::vector<Ptr<T>> List() const {
    std::vector<Ptr<T>> out;
    out.reserve(items_.size());
    for (const auto& [key, entry] : items_) out.push_back(entry.kept);
    return out;
  }
  std::size_t size() const { return items_.size(); }

 private:
  struct Entry {
    std::string uid;
    std::string resource_version;
    Ptr<T> kept;
  };

  Entry Keep(Decoded<T>& item) const {
    return {std::move(item.id.uid), std::move(item.id.resource_version),
            keep_ ? std::make_shared<const T>(keep_(*item.obj)) : item.obj};
  }

  void Upsert(Decoded<T> item, bool only_if_changed,
              std::vector<Delta<T>>* out) {
    auto it = items_.find(item.id.key);
    if (it == items_.end()) {
      Ptr<T> obj = item.obj;
      std::string key = std::move(item.id.key);
      items_.emplace(std::move(key), Keep(item));
      out->push_back({DeltaType::kAdded, std::move(obj), nullptr});
      return;
    }
    Entry& old = it->second;
    if (old.uid != item.id.uid) {
      Ptr<T> gone = std::move(old.kept);
      Ptr<T> obj = item.obj;
      old = Keep(item);
      out->push_back({DeltaType::kDeleted, std::move(gone), nullptr});
      out->push_back({DeltaType::kAdded, std::move(obj), nullptr});
      return;
    }
    if (only_if_changed && old.resource_version == item.id.resource_version) {
      return;
    }
    Ptr<T> before = std::move(old.kept);
    Ptr<T> obj = item.obj;
    old = Keep(item);
    out->push_back({DeltaType::kUpdated, std::move(obj), std::move(before)});
  }

  Projection keep_;
  absl::flat_hash_map<std::string, Entry> items_;
};

}  // namespace kscore::kube

#endif  // KSCORE_SHIM_KUBE_STORE_H_
