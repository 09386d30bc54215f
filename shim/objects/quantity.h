#ifndef KSCORE_SHIM_OBJECTS_QUANTITY_H_
#define KSCORE_SHIM_OBJECTS_QUANTITY_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kscore::objects {

// Parses a Kubernetes resource.Quantity ("100m", "1.5", "128Mi", "1G",
// "2e3") and returns its value scaled by 10^scale_exp, rounded up as
// Quantity.ScaledValue does: scale_exp -3 gives milli-units (CPU), 0 gives
// whole units (memory, storage, counts). Exact for any number of digits; a
// value beyond int64 saturates at INT64_MAX (-INT64_MAX when negative), as
// the API server caps quantities, rather than wrapping or failing. Negative
// quantities parse: whether they are allowed is the caller's to say.
absl::StatusOr<int64_t> ParseQuantity(absl::string_view s, int scale_exp);

}  // namespace kscore::objects

#endif  // KSCORE_SHIM_OBJECTS_QUANTITY_H_
