#include "shim/kube/rate_limiter.h"

#include "gtest/gtest.h"

namespace kscore::kube {
namespace {

class FakeClock {
 public:
  absl::Time Now() const { return now_; }
  void Advance(absl::Duration d) { now_ += d; }
  TokenBucket::Clock AsClock() {
    return [this] { return Now(); };
  }

 private:
  absl::Time now_ = absl::FromUnixSeconds(1000);
};

TEST(TokenBucketTest, BurstThenQueuesAtQps) {
  FakeClock clock;
  TokenBucket bucket(/*qps=*/2, /*burst=*/3, clock.AsClock());
  EXPECT_EQ(bucket.Reserve(), absl::ZeroDuration());
  EXPECT_EQ(bucket.Reserve(), absl::ZeroDuration());
  EXPECT_EQ(bucket.Reserve(), absl::ZeroDuration());
  // Out of tokens: each caller waits one more refill interval (0.5s).
  EXPECT_EQ(bucket.Reserve(), absl::Milliseconds(500));
  EXPECT_EQ(bucket.Reserve(), absl::Seconds(1));
}

TEST(TokenBucketTest, RefillsAtQpsUpToBurst) {
  FakeClock clock;
  TokenBucket bucket(/*qps=*/10, /*burst=*/2, clock.AsClock());
  EXPECT_EQ(bucket.Reserve(), absl::ZeroDuration());
  EXPECT_EQ(bucket.Reserve(), absl::ZeroDuration());
  EXPECT_EQ(bucket.Reserve(), absl::Milliseconds(100));
  clock.Advance(absl::Milliseconds(100));  // pays the debt
  EXPECT_EQ(bucket.Reserve(), absl::Milliseconds(100));
  clock.Advance(absl::Hours(1));  // a long idle time refills only `burst`
  EXPECT_EQ(bucket.Reserve(), absl::ZeroDuration());
  EXPECT_EQ(bucket.Reserve(), absl::ZeroDuration());
  EXPECT_GT(bucket.Reserve(), absl::ZeroDuration());
}

TEST(TokenBucketTest, NonPositiveQpsIsUnlimited) {
  FakeClock clock;
  TokenBucket bucket(/*qps=*/0, /*burst=*/1, clock.AsClock());
  for (int i = 0; i < 1000; ++i)
    ASSERT_EQ(bucket.Reserve(), absl::ZeroDuration());
}

}  // namespace
}  // namespace kscore::kube
