#ifndef KSCORE_SCORER_SERVER_RUN_H_
#define KSCORE_SCORER_SERVER_RUN_H_

#include "scorer/framework/registry.h"

namespace kscore::server {

// The scorer program: flags, configuration, gRPC server, metrics, signals.
// `registry` holds the plugins it can run, so a scorer with plugins of one's
// own is a main() that adds them to plugins::DefaultRegistry() and calls
// this (as kube-scheduler's app.WithPlugin). Returns the exit code.
int RunScorer(int argc, char** argv, framework::Registry registry);

}  // namespace kscore::server

#endif  // KSCORE_SCORER_SERVER_RUN_H_
