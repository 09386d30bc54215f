#ifndef KSCORE_SHIM_APP_DEBUG_HANDLERS_H_
#define KSCORE_SHIM_APP_DEBUG_HANDLERS_H_

#include <map>
#include <string>

#include "shim/app/http.h"
#include "shim/scheduler/scheduler.h"

namespace kscore::app {

// What kubectl kscore reads (docs/explain.md):
// - GET  /debug/kscore/explain?namespace=NS&name=NAME: the pod's latest
//   decision as JSON (404 when none is kept);
// - POST /debug/kscore/what-if with a Pod as JSON: a dry cycle for it
//   against the current snapshot, nothing bound.
std::map<std::string, Route> DebugRoutes(scheduler::Scheduler* scheduler);

}  // namespace kscore::app

#endif  // KSCORE_SHIM_APP_DEBUG_HANDLERS_H_
