#include "common/flags.h"

#include "absl/strings/match.h"
#include "absl/strings/strip.h"

namespace kscore::common {

KubeStyleArgs::KubeStyleArgs(int argc, char** in) {
  bool after_double_dash = false;
  for (int i = 0; i < argc; ++i) {
    std::string a = in[i];
    if (a == "--") after_double_dash = true;
    if (i > 0 && !after_double_dash && a.size() > 2 && a[0] == '-') {
      size_t start = a[1] == '-' ? 2 : 1;
      size_t end = a.find('=');
      if (end == std::string::npos) end = a.size();
      for (size_t k = start; k < end; ++k) {
        if (a[k] == '-') a[k] = '_';
      }
    }
    storage.push_back(std::move(a));
  }
  for (std::string& s : storage) argv.push_back(s.data());
  argv.push_back(nullptr);
}

bool FlagGiven(const KubeStyleArgs& args, const std::string& name) {
  for (size_t i = 1; i < args.storage.size(); ++i) {
    const std::string& a = args.storage[i];
    if (a == "--") break;
    // "--name", "-name", "--name=...", "--noname", "-noname".
    absl::string_view rest = a;
    if (!absl::ConsumePrefix(&rest, "--")) absl::ConsumePrefix(&rest, "-");
    if (rest == name || absl::StartsWith(rest, name + "=") ||
        (absl::ConsumePrefix(&rest, "no") && rest == name)) {
      return true;
    }
  }
  return false;
}

}  // namespace kscore::common
