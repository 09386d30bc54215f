// scorer: the stateless gRPC service that answers Filter / PreScore / Score /
// NormalizeScore for every profile of a KubeSchedulerConfiguration file.
#include "scorer/plugins/registry.h"
#include "scorer/server/run.h"

int main(int argc, char** argv) {
  return kscore::server::RunScorer(argc, argv,
                                   kscore::plugins::DefaultRegistry());
}
