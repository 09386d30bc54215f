// scorer_testplugin: the scorer with one more plugin (PreferNodeLabel), as an
// operator would build a scorer carrying their own rule. Only for tests.
#include "scorer/plugins/registry.h"
#include "scorer/server/run.h"
#include "tests/testplugin/prefer_node_label.h"

int main(int argc, char** argv) {
  kscore::framework::Registry registry = kscore::plugins::DefaultRegistry();
  registry.Register(std::string(kscore::testplugin::PreferNodeLabel::kName),
                    &kscore::testplugin::PreferNodeLabel::New);
  return kscore::server::RunScorer(argc, argv, std::move(registry));
}
