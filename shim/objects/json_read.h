#ifndef KSCORE_SHIM_OBJECTS_JSON_READ_H_
#define KSCORE_SHIM_OBJECTS_JSON_READ_H_

// Lenient readers of JSON objects whose field types json_shape.h checked:
// they meet only absent, null or well-typed values. Internal to objects/.

#include <string>

#include "google/protobuf/map.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "kscore/scorer/v1/scorer.pb.h"
#include "nlohmann/json.hpp"
#include "shim/objects/object_fields.h"

namespace kscore::objects::json_read {

namespace pb = ::kscore::scorer::v1;
using nlohmann::json;

// The field `key` of `j`, or null.
const json& At(const json& j, const char* key);
// A string field, or "".
std::string Str(const json& j, const char* key);
void StringMap(const json& j,
               google::protobuf::Map<std::string, std::string>* out);
void Strings(const json& list,
             google::protobuf::RepeatedPtrField<std::string>* out);
void Requirements(
    const json& list,
    google::protobuf::RepeatedPtrField<pb::NodeSelectorRequirement>* out);
// A NodeSelectorTerm.
void Term(const json& j, pb::NodeSelectorTerm* out);

// A LabelSelector, if `j` is one: `set` makes the (possibly empty) selector
// to fill. null leaves it unset.
template <typename MakeSelector>
void Selector(const json& j, MakeSelector set) {
  if (!j.is_object()) return;
  pb::LabelSelector* out = set();
  StringMap(At(j, "matchLabels"), out->mutable_match_labels());
  for (const json& r : At(j, "matchExpressions")) {
    Strings(At(r, "values"), fields::AddSelectorRequirement(
                                 Str(r, "key"), Str(r, "operator"), out)
                                 ->mutable_values());
  }
}

}  // namespace kscore::objects::json_read

#endif  // KSCORE_SHIM_OBJECTS_JSON_READ_H_
