#include "scorer/server/flags.h"

namespace kscore::server {

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

}  // namespace kscore::server
