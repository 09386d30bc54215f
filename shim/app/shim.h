#ifndef KSCORE_SHIM_APP_SHIM_H_
#define KSCORE_SHIM_APP_SHIM_H_

#include "shim/app/options.h"

namespace kscore::app {

// Runs the shim until SIGTERM or SIGINT. Returns the exit code: 0 after a
// signal, 1 when it cannot start or loses its Lease (as kube-scheduler, a
// fresh process then rebuilds its state), 2 for a bad scorer target.
// Blocks SIGTERM and SIGINT in the calling thread first: call it before
// any other thread starts.
int RunShim(const Options& options);

}  // namespace kscore::app

#endif  // KSCORE_SHIM_APP_SHIM_H_
