#ifndef KSCORE_SHIM_KUBE_STORE_H_
#define KSCORE_SHIM_KUBE_STORE_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace kscore::kube {

using ObjectPtr = std::shared_ptr<const nlohmann::json>;

// One line of a watch stream.
struct WatchEvent {
  enum class Type { kAdded, kModified, kDeleted, kBookmark, kError };
  Type type;
  nlohmann::json object;
};

// "ADDED", "MODIFIED", "DELETED", "BOOKMARK" or "ERROR" (either encoding);
// anything else is an error naming it.
absl::StatusOr<WatchEvent::Type> WatchEventTypeOf(absl::string_view type);

// Parses {"type": ..., "object": {...}}; unknown types are errors.
absl::StatusOr<WatchEvent> ParseWatchEvent(absl::string_view line);

// What a handler is told. kUpdated has old_obj; kDeleted's obj is the last
// known state.
struct Delta {
  enum class Type { kAdded, kUpdated, kDeleted };
  Type type;
  ObjectPtr obj;
  ObjectPtr old_obj;
};

// What a store keeps of an object (client-go's transform, applied to the
// stored copy only): handlers still get every new object whole, while
// old_obj and the last known state of a delete found by a relist are the
// kept projection. The identity (metadata name, namespace, uid,
// resourceVersion) is always kept.
using Projection = std::function<nlohmann::json(const nlohmann::json& obj)>;

// The informer's cache, keyed "namespace/name" (or "name"), and the diff
// logic that turns lists and watch events into Deltas. Not thread-safe; no
// I/O, so it is tested on its own.
class Store {
 public:
  // Without a projection, objects are kept whole.
  explicit Store(Projection keep = nullptr) : keep_(std::move(keep)) {}

  static std::string KeyOf(const nlohmann::json& obj);

  // A full list: adds, updates (resourceVersion changed) and deletes (gone
  // from the list) relative to the current contents. A changed uid is a
  // delete and an add.
  std::vector<Delta> Replace(std::vector<nlohmann::json> items);

  // A watch event (ADDED/MODIFIED/DELETED; others are ignored). ADDED for a
  // known key is an update and MODIFIED for an unknown one an add, so a
  // watch that overlaps a list stays consistent.
  std::vector<Delta> Apply(WatchEvent event);

  ObjectPtr Get(absl::string_view key) const;
  std::vector<ObjectPtr> List() const;
  std::size_t size() const { return items_.size(); }

 private:
  void Upsert(const std::string& key, ObjectPtr obj, bool only_if_changed,
              std::vector<Delta>* out);

  ObjectPtr Kept(const ObjectPtr& obj) const;

  Projection keep_;
  absl::flat_hash_map<std::string, ObjectPtr> items_;
};

}  // namespace kscore::kube

#endif  // KSCORE_SHIM_KUBE_STORE_H_
