#ifndef KSCORE_SHIM_OBJECTS_JSON_SHAPE_H_
#define KSCORE_SHIM_OBJECTS_JSON_SHAPE_H_

#include <span>
#include <string_view>

#include "absl/status/status.h"
#include "nlohmann/json.hpp"

// The JSON types of the fields the JSON decoders (objects.cc) read, checked
// before they read them: a field of the wrong type is an error naming it
// ("spec.containers: expected an array"), as the API server refuses such an
// object, rather than read as absent or as something else. Internal to
// objects/.
namespace kscore::objects::shape {

enum class Type {
  kString,
  kInt32,
  kInt64,
  kBool,
  kObject,     // with `fields` (none: any object)
  kArray,      // of objects with `fields` (none: of anything)
  kStrings,    // an array of strings
  kStringMap,  // an object of strings (labels, a Service's selector)
};

struct Field {
  std::string_view name;
  Type type;
  std::span<const Field> fields = {};
};

// Each field of `fields` that `j` (an object) has and that is not null has
// its type, and so on down; other fields are not looked at. `path` names
// `j` in errors ("" for the object itself).
absl::Status Check(const nlohmann::json& j, std::span<const Field> fields,
                   std::string_view path = "");

// What each decoder reads.
std::span<const Field> Pod();
std::span<const Field> Node();
std::span<const Field> Namespace();
std::span<const Field> Pdb();
// A Service's or a ReplicationController's spec.selector is a map; a
// ReplicaSet's or a StatefulSet's a LabelSelector.
std::span<const Field> Workload(bool map_selector);

}  // namespace kscore::objects::shape

#endif  // KSCORE_SHIM_OBJECTS_JSON_SHAPE_H_
