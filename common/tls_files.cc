#include "common/tls_files.h"

#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace kscore::common {

absl::StatusOr<std::string> ReadPemFlag(absl::string_view flag,
                                        const std::string& path) {
  if (path.empty()) return std::string();
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, ": cannot read ", path));
  }
  std::ostringstream out;
  out << in.rdbuf();
  std::string pem = out.str();
  if (!absl::StrContains(pem, "-----BEGIN ")) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, ": ", path, " holds no PEM block"));
  }
  return pem;
}

}  // namespace kscore::common
