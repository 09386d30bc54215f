#include "shim/scorer_client/scorer.h"

#include <atomic>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "shim/scorer_client/scorer_client.h"
#include "tests/support/in_process_scorer.h"

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

constexpr char kConfig[] = R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
)";

// The watch that tells the shim the scorer is back: a call fails to reach
// it, the scorer starts on that address, and `reachable` is called with no
// other call made.
TEST(ScorerClientTest, ReachableOnceTheScorerServesAfterAFailedCall) {
  std::string target;
  {
    auto first = testing::InProcessScorer::Start(kConfig);
    ASSERT_TRUE(first.ok()) << first.status();
    target = (*first)->target();
  }  // stopped: the port is free again
  auto client = ScorerClient::Create({.target = target});
  ASSERT_TRUE(client.ok()) << client.status();
  std::atomic<int> reachable{0};
  (*client)->WhenReachable([&reachable] { ++reachable; });
  const absl::Time stop = absl::Now() + absl::Seconds(10);
  absl::StatusOr<pb::ListProfilesResponse> listed;
  do {  // until a call fails to reach it (not merely times out)
    listed = (*client)->ListProfiles();
  } while (!absl::IsUnavailable(listed.status()) && absl::Now() < stop);
  ASSERT_TRUE(absl::IsUnavailable(listed.status())) << listed.status();
  auto again = testing::InProcessScorer::Start(kConfig, target);
  ASSERT_TRUE(again.ok()) << again.status();
  while (reachable.load() == 0 && absl::Now() < stop) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  EXPECT_EQ(reachable.load(), 1);
  (*client)->StopWatching();
}

}  // namespace
}  // namespace kscore::scorer_client
