#include "scorer/framework/normalize.h"

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

TEST(DefaultNormalizeScoreTest, EmptyIsFine) {
  std::vector<int64_t> s;
  DefaultNormalizeScore(100, false, absl::MakeSpan(s));
  EXPECT_TRUE(s.empty());
}

}  // namespace
}  // namespace kscore::framework
