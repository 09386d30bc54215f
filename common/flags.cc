#include "common/flags.h"

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
    for (const std::string& prefix : {std::string("--"), std::string("-")}) {
      const std::string flag = prefix + name;
      if (a == flag || a.rfind(flag + "=", 0) == 0 || a == prefix + "no" + name)
        return true;
    }
  }
  return false;
}

}  // namespace kscore::common
