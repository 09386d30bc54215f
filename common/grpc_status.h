#ifndef KSCORE_COMMON_GRPC_STATUS_H_
#define KSCORE_COMMON_GRPC_STATUS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "grpcpp/support/status.h"

namespace kscore::common {

// absl::Status and grpc::Status share their canonical codes (0-16); a code
// outside them becomes UNKNOWN. The message is kept as is.
grpc::Status ToGrpcStatus(const absl::Status& s);
// `prefix` (e.g. "scorer: ") goes before the message, naming the peer.
absl::Status ToAbslStatus(const grpc::Status& s, absl::string_view prefix = "");

}  // namespace kscore::common

#endif  // KSCORE_COMMON_GRPC_STATUS_H_
