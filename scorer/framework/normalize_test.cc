#include "scorer/framework/normalize.h"

#include <limits>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kscore::framework {
namespace {

using ::testing::ElementsAre;

TEST(DefaultNormalizeScoreTest, ScalesToMax) {
  std::vector<int64_t> s = {1, 2, 4, 0};
  DefaultNormalizeScore(100, false, absl::MakeSpan(s));
  EXPECT_THAT(s, ElementsAre(25, 50, 100, 0));
}

TEST(DefaultNormalizeScoreTest, IntegerDivisionTruncates) {
  std::vector<int64_t> s = {1, 3};
  DefaultNormalizeScore(100, false, absl::MakeSpan(s));
  EXPECT_THAT(s, ElementsAre(33, 100));
}

TEST(DefaultNormalizeScoreTest, Reverse) {
  std::vector<int64_t> s = {1, 2, 4, 0};
  DefaultNormalizeScore(100, true, absl::MakeSpan(s));
  EXPECT_THAT(s, ElementsAre(75, 50, 0, 100));
}

TEST(DefaultNormalizeScoreTest, AllZeroStaysZeroOrMaxWhenReversed) {
  std::vector<int64_t> s = {0, 0};
  DefaultNormalizeScore(100, false, absl::MakeSpan(s));
  EXPECT_THAT(s, ElementsAre(0, 0));
  DefaultNormalizeScore(100, true, absl::MakeSpan(s));
  EXPECT_THAT(s, ElementsAre(100, 100));
}

// Counts past 2^63 / 100 would overflow score * 100 in int64 (and come out
// negative, which the framework's range check turns into INTERNAL).
TEST(DefaultNormalizeScoreTest, VeryLargeCountsStayInRange) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  std::vector<int64_t> s = {kMax, kMax / 2, 1, 0};
  DefaultNormalizeScore(100, false, absl::MakeSpan(s));
  EXPECT_THAT(s, ElementsAre(100, 49, 0, 0));
  s = {kMax, kMax / 4};
  DefaultNormalizeScore(100, true, absl::MakeSpan(s));
  EXPECT_THAT(s, ElementsAre(0, 76));
}

TEST(DefaultNormalizeScoreTest, EmptyIsFine) {
  std::vector<int64_t> s;
  DefaultNormalizeScore(100, false, absl::MakeSpan(s));
  EXPECT_TRUE(s.empty());
}

}  // namespace
}  // namespace kscore::framework
