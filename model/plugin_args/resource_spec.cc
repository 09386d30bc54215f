#include "model/plugin_args/resource_spec.h"

#include <limits>

#include "common/status_macros.h"

namespace kscore::model {

std::vector<ResourceSpec> DefaultResourceSpecs() {
  return {{"cpu", 1}, {"memory", 1}};
}

absl::StatusOr<std::vector<ResourceSpec>> ParseResourceSpecs(
    const YamlField& field) {
  KSCORE_RETURN_IF_ERROR(field.ExpectSequence());
  if (!field.present() || field.size() == 0) return DefaultResourceSpecs();
  std::vector<ResourceSpec> out;
  for (size_t i = 0; i < field.size(); ++i) {
    YamlField item = field.Index(i);
    if (!item.node().IsMap()) return item.Error("expected a mapping");
    KSCORE_RETURN_IF_ERROR(item.ExpectMap({"name", "weight"}));
    ResourceSpec spec;
    if (YamlField name = item.Child("name"); name.present()) {
      KSCORE_ASSIGN_OR_RETURN(spec.name, name.String());
    }
    if (YamlField weight = item.Child("weight"); weight.present()) {
      int64_t w = 0;
      KSCORE_ASSIGN_OR_RETURN(w,
                              weight.Int(std::numeric_limits<int64_t>::min(),
                                         std::numeric_limits<int64_t>::max()));
      spec.weight = w == 0 ? 1 : w;
    }
    out.push_back(std::move(spec));
  }
  return out;
}

}  // namespace kscore::model
