#ifndef KSCORE_SHIM_APP_DEBUG_HANDLERS_H_
#define KSCORE_SHIM_APP_DEBUG_HANDLERS_H_

#include <string>
#include <utility>
#include <vector>

#include "shim/app/status_server.h"
#include "shim/scheduler/scheduler.h"

namespace kscore::app {

// What kubectl kscore reads (docs/explain.md):
// - GET  /debug/kscore/explain?namespace=NS&name=NAME: the pod's latest
//   decision as JSON (404 when none is kept);
// - POST /debug/kscore/what-if with a Pod as JSON: a dry cycle for it
//   against the current snapshot, nothing bound.
std::vector<std::pair<std::string, StatusServer::Endpoint>> DebugEndpoints(
    scheduler::Scheduler* scheduler);

// The value of `key` in a query string ("a=1&b=x%2Fy"), percent-decoded;
// "" when absent.
std::string QueryValue(const std::string& query, const std::string& key);

}  // namespace kscore::app

#endif  // KSCORE_SHIM_APP_DEBUG_HANDLERS_H_
