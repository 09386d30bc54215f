#include "shim/scorer_client/scorer.h"

#include <string>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace kscore::scorer_client {
namespace {

struct OutcomeCase {
  absl::StatusCode code;
  CallOutcome outcome;
  bool retryable;  // the client sends it again, to the next replica
  bool transport;  // the cycle says "scorer unavailable"
};

class ClassifyCallTest : public ::testing::TestWithParam<OutcomeCase> {};

TEST_P(ClassifyCallTest, OneClassForClientAndCycle) {
  const OutcomeCase& c = GetParam();
  const CallOutcome got = ClassifyCall(c.code);
  EXPECT_EQ(got, c.outcome);
  EXPECT_EQ(Retryable(got), c.retryable);
  EXPECT_EQ(TransportFailure(got), c.transport);
}

using C = absl::StatusCode;
using O = CallOutcome;
INSTANTIATE_TEST_SUITE_P(
    EveryCode, ClassifyCallTest,
    ::testing::Values(
        OutcomeCase{C::kOk, O::kAnswered, false, false},
        OutcomeCase{C::kCancelled, O::kNoAnswer, true, true},
        OutcomeCase{C::kUnknown, O::kTransport, false, true},
        OutcomeCase{C::kInvalidArgument, O::kRefused, false, false},
        OutcomeCase{C::kDeadlineExceeded, O::kNoAnswer, true, true},
        OutcomeCase{C::kNotFound, O::kRefused, false, false},
        OutcomeCase{C::kAlreadyExists, O::kRefused, false, false},
        OutcomeCase{C::kPermissionDenied, O::kTransport, false, true},
        OutcomeCase{C::kResourceExhausted, O::kOverloaded, true, true},
        OutcomeCase{C::kFailedPrecondition, O::kRefused, false, false},
        OutcomeCase{C::kAborted, O::kTransport, false, true},
        OutcomeCase{C::kOutOfRange, O::kRefused, false, false},
        OutcomeCase{C::kUnimplemented, O::kTransport, false, true},
        OutcomeCase{C::kInternal, O::kRefused, false, false},
        OutcomeCase{C::kUnavailable, O::kUnreachable, true, true},
        OutcomeCase{C::kDataLoss, O::kRefused, false, false},
        OutcomeCase{C::kUnauthenticated, O::kTransport, false, true}),
    [](const ::testing::TestParamInfo<OutcomeCase>& info) {
      std::string name = absl::StatusCodeToString(info.param.code);
      std::erase(name, '_');
      return name;
    });

}  // namespace
}  // namespace kscore::scorer_client
