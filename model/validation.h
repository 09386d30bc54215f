#ifndef KSCORE_MODEL_VALIDATION_H_
#define KSCORE_MODEL_VALIDATION_H_

#include <string>

#include "absl/strings/string_view.h"

namespace kscore::model {

// Kubernetes' validation.IsQualifiedName for label keys: an optional DNS-1123
// subdomain prefix and "/", then a name of at most 63 characters. Returns ""
// when valid, otherwise what is wrong.
std::string CheckLabelKey(absl::string_view key);

}  // namespace kscore::model

#endif  // KSCORE_MODEL_VALIDATION_H_
