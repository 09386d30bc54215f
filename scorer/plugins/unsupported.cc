#include "scorer/plugins/unsupported.h"

#include "absl/strings/str_cat.h"

namespace kscore::plugins {

std::string NeedsInterPodAffinity(const scorer::v1::Pod& pod) {
  for (const auto& [kind, terms] :
       {std::pair{"podAffinity", &pod.pod_affinity()},
        std::pair{"podAntiAffinity", &pod.pod_anti_affinity()}}) {
    if (!terms->required().empty()) {
      return absl::StrCat("pod uses required ", kind,
                          ", which kscore does not support yet");
    }
  }
  return "";
}

std::string NeedsVolumeBinding(const scorer::v1::Pod& pod) {
  if (pod.volume_claims().empty()) return "";
  return "pod uses PersistentVolumeClaims, which kscore does not support yet";
}

std::string NeedsDynamicResources(const scorer::v1::Pod& pod) {
  if (pod.resource_claims().empty()) return "";
  return "pod uses resourceClaims (DRA), which kscore does not support yet";
}

}  // namespace kscore::plugins
