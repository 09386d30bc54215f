#ifndef KSCORE_SCORER_SERVER_FLAGS_H_
#define KSCORE_SCORER_SERVER_FLAGS_H_

#include <string>
#include <vector>

namespace kscore::server {

// Lets kube-style flags (--leader-elect-lease-duration) reach Abseil's
// flags, whose names use underscores: dashes in a "--name[=value]" are
// turned into underscores, values are left alone. The returned strings back
// the char* vector, so keep both alive while parsing.
struct KubeStyleArgs {
  KubeStyleArgs(int argc, char** argv);
  std::vector<std::string> storage;
  std::vector<char*> argv;
  int argc() const { return static_cast<int>(argv.size()) - 1; }
};

}  // namespace kscore::server

#endif  // KSCORE_SCORER_SERVER_FLAGS_H_
