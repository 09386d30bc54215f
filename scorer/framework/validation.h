#ifndef KSCORE_SCORER_FRAMEWORK_VALIDATION_H_
#define KSCORE_SCORER_FRAMEWORK_VALIDATION_H_

#include <string>

#include "absl/strings/string_view.h"

namespace kscore::framework {

// Kubernetes' validation.IsQualifiedName for label keys: an optional DNS-1123
// subdomain prefix and "/", then a name of at most 63 characters. Returns ""
// when valid, otherwise what is wrong.
std::string CheckLabelKey(absl::string_view key);

}  // namespace kscore::framework

#endif  // KSCORE_SCORER_FRAMEWORK_VALIDATION_H_
