#ifndef KSCORE_SCORER_PLUGINS_REGISTRY_H_
#define KSCORE_SCORER_PLUGINS_REGISTRY_H_

#include "absl/strings/string_view.h"
#include "scorer/framework/registry.h"

namespace kscore::plugins {

// Every plugin this scorer implements, by kube-scheduler's names, plus the
// names of kube-scheduler's in-tree plugins it does not run: either the shim
// does their job (queue sort, binding, scheduling gates) or they are not
// supported yet.
framework::Registry DefaultRegistry();

}  // namespace kscore::plugins

#endif  // KSCORE_SCORER_PLUGINS_REGISTRY_H_
