#ifndef KSCORE_COMMON_TLS_FILES_H_
#define KSCORE_COMMON_TLS_FILES_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kscore::common {

// PEM material for one side of a TLS connection, read from the files that
// flags name. Empty fields mean the file was not given.
struct TlsFiles {
  std::string ca;    // certificates to verify the peer with
  std::string cert;  // own certificate chain
  std::string key;   // own private key
};

// Reads the PEM file `path` that flag `--flag` names. The error names the
// flag and the path; an empty path reads as "".
absl::StatusOr<std::string> ReadPemFlag(absl::string_view flag,
                                        const std::string& path);

}  // namespace kscore::common

#endif  // KSCORE_COMMON_TLS_FILES_H_
