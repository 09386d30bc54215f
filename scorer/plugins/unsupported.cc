#include "scorer/plugins/unsupported.h"

#include "absl/strings/str_cat.h"

namespace kscore::plugins {

std::string NeedsDynamicResources(const scorer::v1::Pod& pod) {
  if (pod.resource_claims().empty()) return "";
  return "pod uses resourceClaims (DRA), which kscore does not support yet";
}

}  // namespace kscore::plugins
