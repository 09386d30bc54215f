#ifndef KSCORE_MODEL_SCALAR_RESOURCES_H_
#define KSCORE_MODEL_SCALAR_RESOURCES_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "kscore/scorer/v1/scorer.pb.h"

namespace kscore::model {

// Resources.scalar, a short list of (name, value) with at most one entry per
// name, read and written by name.

// The value for name; 0 when absent.
int64_t ScalarValue(const scorer::v1::Resources& r, absl::string_view name);

// The entry for name, added with value 0 when absent.
scorer::v1::ScalarResource* MutableScalar(scorer::v1::Resources* r,
                                          absl::string_view name);

// Adds delta to name's value (the entry added when absent); returns the sum.
int64_t AddToScalar(scorer::v1::Resources* r, absl::string_view name,
                    int64_t delta);

// Removes name's entry, if any.
void RemoveScalar(scorer::v1::Resources* r, absl::string_view name);

// "" when every name is set and appears once; otherwise what is wrong, for
// an error that names the field (e.g. `duplicate "example.com/gpu"`).
std::string CheckScalars(const scorer::v1::Resources& r);

}  // namespace kscore::model

#endif  // KSCORE_MODEL_SCALAR_RESOURCES_H_
