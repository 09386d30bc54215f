#ifndef KSCORE_COMMON_FLAGS_H_
#define KSCORE_COMMON_FLAGS_H_

#include <string>
#include <vector>

namespace kscore::common {

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

// Whether --name (or --name=..., --noname) is on the command line, before
// "--"; `name` is written with underscores. Abseil keeps this private;
// the shim needs it where a flag overrides a configuration field.
bool FlagGiven(const KubeStyleArgs& args, const std::string& name);

}  // namespace kscore::common

#endif  // KSCORE_COMMON_FLAGS_H_
