#include "shim/objects/json_read.h"

namespace kscore::objects::json_read {

const json& At(const json& j, const char* key) {
  static const json kNull;
  if (!j.is_object()) return kNull;
  auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

std::string Str(const json& j, const char* key) {
  const json& v = At(j, key);
  return v.is_string() ? v.get<std::string>() : std::string();
}

void StringMap(const json& j,
               google::protobuf::Map<std::string, std::string>* out) {
  if (!j.is_object()) return;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.value().is_string())
      (*out)[it.key()] = it.value().get<std::string>();
  }
}

void Strings(const json& list,
             google::protobuf::RepeatedPtrField<std::string>* out) {
  for (const json& v : list) {
    if (v.is_string()) out->Add(v.get<std::string>());
  }
}

void Requirements(
    const json& list,
    google::protobuf::RepeatedPtrField<pb::NodeSelectorRequirement>* out) {
  for (const json& j : list) {
    pb::NodeSelectorRequirement* r =
        fields::AddRequirement(Str(j, "key"), Str(j, "operator"), out);
    for (const json& v : At(j, "values")) {
      if (v.is_string()) r->add_values(v.get<std::string>());
    }
  }
}

void Term(const json& j, pb::NodeSelectorTerm* out) {
  Requirements(At(j, "matchExpressions"), out->mutable_match_expressions());
  Requirements(At(j, "matchFields"), out->mutable_match_fields());
}

}  // namespace kscore::objects::json_read
