#ifndef KSCORE_SCORER_PLUGINS_UNSUPPORTED_H_
#define KSCORE_SCORER_PLUGINS_UNSUPPORTED_H_

#include <string>

#include "kscore/scorer/v1/scorer.pb.h"

namespace kscore::plugins {

// Gates (framework::PodGate) of kube-scheduler plugins this scorer does not
// run yet: what of a pod each would have to honour. A profile that enables
// one refuses such pods in PreFilter with these words instead of placing
// them against a requirement it ignores.

// DynamicResources: resourceClaims.
std::string NeedsDynamicResources(const scorer::v1::Pod& pod);

}  // namespace kscore::plugins

#endif  // KSCORE_SCORER_PLUGINS_UNSUPPORTED_H_
