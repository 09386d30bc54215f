#ifndef KSCORE_SHIM_KUBE_OBJECT_CODEC_H_
#define KSCORE_SHIM_KUBE_OBJECT_CODEC_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace kscore::kube {

// Objects are shared between the store and the handlers, never changed.
template <typename T>
using Ptr = std::shared_ptr<const T>;

// What a store knows every object by.
struct Identity {
  std::string key;  // "namespace/name", or "name" for cluster-scoped kinds
  std::string uid;
  std::string resource_version;
};

inline std::string KeyOf(absl::string_view ns, absl::string_view name) {
  return ns.empty() ? std::string(name) : absl::StrCat(ns, "/", name);
}

// How an informer turns wire objects into T, decoded once per event: the
// typed projection its handlers and store hold instead of the wire form.
template <typename T>
struct ObjectCodec {
  // One object from its protobuf bytes (inside the List or WatchEvent
  // envelope). Needed only when the informer reads protobuf.
  std::function<absl::StatusOr<T>(absl::string_view raw)> from_protobuf;
  std::function<absl::StatusOr<T>(const nlohmann::json& obj)> from_json;
  std::function<Identity(const T& obj)> identity;
  // What the store keeps of each object (client-go's transform): handlers
  // get every new object whole, while old_obj and the last known state of a
  // delete found by a relist are what is kept. Unset: all of it.
  std::function<T(const T& obj)> keep;
};

}  // namespace kscore::kube

#endif  // KSCORE_SHIM_KUBE_OBJECT_CODEC_H_
