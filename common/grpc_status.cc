#include "common/grpc_status.h"

#include "absl/strings/str_cat.h"

namespace kscore::common {
namespace {

// The highest canonical code both libraries define.
constexpr int kLastCode = static_cast<int>(absl::StatusCode::kUnauthenticated);
static_assert(kLastCode == grpc::StatusCode::UNAUTHENTICATED);
static_assert(static_cast<int>(absl::StatusCode::kFailedPrecondition) ==
              grpc::StatusCode::FAILED_PRECONDITION);
static_assert(static_cast<int>(absl::StatusCode::kUnavailable) ==
              grpc::StatusCode::UNAVAILABLE);

}  // namespace

grpc::Status ToGrpcStatus(const absl::Status& s) {
  if (s.ok()) return grpc::Status::OK;
  const int code = static_cast<int>(s.code());
  return grpc::Status(code > 0 && code <= kLastCode
                          ? static_cast<grpc::StatusCode>(code)
                          : grpc::StatusCode::UNKNOWN,
                      std::string(s.message()));
}

absl::Status ToAbslStatus(const grpc::Status& s, absl::string_view prefix) {
  if (s.ok()) return absl::OkStatus();
  const int code = static_cast<int>(s.error_code());
  return absl::Status(code > 0 && code <= kLastCode
                          ? static_cast<absl::StatusCode>(code)
                          : absl::StatusCode::kUnknown,
                      absl::StrCat(prefix, s.error_message()));
}

}  // namespace kscore::common
