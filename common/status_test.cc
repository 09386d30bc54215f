#include "absl/status/status.h"

#include "absl/status/statusor.h"
#include "common/grpc_status.h"
#include "common/status_macros.h"
#include "gtest/gtest.h"

namespace kscore::common {
namespace {

absl::StatusOr<int> Half(int x) {
  if (x % 2 != 0) return absl::InvalidArgumentError("odd");
  return x / 2;
}

absl::StatusOr<int> Quarter(int x) {
  KSCORE_ASSIGN_OR_RETURN(int half, Half(x));
  KSCORE_ASSIGN_OR_RETURN(half, Half(half));  // an existing lvalue
  return half;
}

absl::Status Check(int x) {
  KSCORE_RETURN_IF_ERROR(Half(x).status());
  return absl::OkStatus();
}

grpc::Status QuarterGrpc(int x, int* out) {
  KSCORE_ASSIGN_OR_RETURN(*out, Quarter(x), ToGrpcStatus);
  return grpc::Status::OK;
}

TEST(StatusMacrosTest, AssignOrReturn) {
  EXPECT_EQ(*Quarter(8), 2);
  EXPECT_EQ(Quarter(6).status().message(), "odd");  // 3 is odd
  EXPECT_TRUE(Check(2).ok());
  EXPECT_EQ(Check(3).code(), absl::StatusCode::kInvalidArgument);
  int out = 0;
  EXPECT_TRUE(QuarterGrpc(4, &out).ok());
  EXPECT_EQ(out, 1);
  grpc::Status s = QuarterGrpc(5, &out);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "odd");
}

TEST(GrpcStatusTest, CodesAndMessagesBothWays) {
  for (auto code :
       {absl::StatusCode::kInvalidArgument, absl::StatusCode::kNotFound,
        absl::StatusCode::kFailedPrecondition, absl::StatusCode::kUnavailable,
        absl::StatusCode::kDeadlineExceeded, absl::StatusCode::kInternal,
        absl::StatusCode::kUnauthenticated}) {
    absl::Status a(code, "why");
    grpc::Status g = ToGrpcStatus(a);
    EXPECT_EQ(static_cast<int>(g.error_code()), static_cast<int>(code));
    EXPECT_EQ(g.error_message(), "why");
    EXPECT_EQ(ToAbslStatus(g), a);
  }
  EXPECT_TRUE(ToGrpcStatus(absl::OkStatus()).ok());
  EXPECT_TRUE(ToAbslStatus(grpc::Status::OK).ok());
  EXPECT_EQ(ToAbslStatus(grpc::Status(grpc::StatusCode::UNAVAILABLE, "down"),
                         "scorer: ")
                .message(),
            "scorer: down");
  EXPECT_EQ(ToGrpcStatus(absl::Status(static_cast<absl::StatusCode>(99), "x"))
                .error_code(),
            grpc::StatusCode::UNKNOWN);
}

}  // namespace
}  // namespace kscore::common
