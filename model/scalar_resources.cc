#include "model/scalar_resources.h"

#include "absl/strings/str_cat.h"

namespace kscore::model {

namespace pb = ::kscore::scorer::v1;

int64_t ScalarValue(const pb::Resources& r, absl::string_view name) {
  for (const pb::ScalarResource& s : r.scalar()) {
    if (s.name() == name) return s.value();
  }
  return 0;
}

pb::ScalarResource* MutableScalar(pb::Resources* r, absl::string_view name) {
  for (pb::ScalarResource& s : *r->mutable_scalar()) {
    if (s.name() == name) return &s;
  }
  pb::ScalarResource* s = r->add_scalar();
  s->set_name(std::string(name));
  return s;
}

int64_t AddToScalar(pb::Resources* r, absl::string_view name, int64_t delta) {
  pb::ScalarResource* s = MutableScalar(r, name);
  s->set_value(s->value() + delta);
  return s->value();
}

void RemoveScalar(pb::Resources* r, absl::string_view name) {
  auto* list = r->mutable_scalar();
  for (int i = 0; i < list->size(); ++i) {
    if (list->Get(i).name() == name) {
      list->DeleteSubrange(i, 1);
      return;
    }
  }
}

std::string CheckScalars(const pb::Resources& r) {
  for (int i = 0; i < r.scalar_size(); ++i) {
    const std::string& name = r.scalar(i).name();
    if (name.empty()) return absl::StrCat("scalar[", i, "].name is required");
    for (int j = 0; j < i; ++j) {
      if (r.scalar(j).name() == name) {
        return absl::StrCat("scalar[", i, "]: duplicate \"", name,
                            "\" (also scalar[", j, "])");
      }
    }
  }
  return "";
}

}  // namespace kscore::model
