#include "model/saturating.h"

#include <cmath>
#include <limits>

#include "gtest/gtest.h"

namespace kscore::model {
namespace {

constexpr int64_t kMax = kInt64Max;
constexpr int64_t kMin = kInt64Min;

TEST(SaturatingTest, AddIsPlainUntilItWouldWrap) {
  EXPECT_EQ(SatAdd(2, 3), 5);
  EXPECT_EQ(SatAdd(-2, 3), 1);
  EXPECT_EQ(SatAdd(kMax - 1, 1), kMax);
  // Two containers near the limit: the sum stays "too much".
  EXPECT_EQ(SatAdd(kMax - 5, kMax - 5), kMax);
  EXPECT_EQ(SatAdd(kMax, 1), kMax);
  EXPECT_EQ(SatAdd(kMin, -1), kMin);
  EXPECT_EQ(SatAdd(kMin, kMax), -1);
}

TEST(SaturatingTest, SubClampsBothWays) {
  EXPECT_EQ(SatSub(5, 3), 2);
  EXPECT_EQ(SatSub(kMax, -1), kMax);
  EXPECT_EQ(SatSub(kMin, 1), kMin);
  EXPECT_EQ(SatSub(0, kMin), kMax);
  EXPECT_EQ(SatSub(-1, kMin), kMax);
}

TEST(SaturatingTest, MulClampsBySign) {
  EXPECT_EQ(SatMul(6, 7), 42);
  EXPECT_EQ(SatMul(-6, 7), -42);
  EXPECT_EQ(SatMul(kMax, 100), kMax);
  EXPECT_EQ(SatMul(kMax / 2 + 1, 2), kMax);
  EXPECT_EQ(SatMul(-kMax, 100), kMin);
  EXPECT_EQ(SatMul(kMax, -100), kMin);
  EXPECT_EQ(SatMul(kMin, -1), kMax);
  EXPECT_EQ(SatMul(kMin, 0), 0);
}

TEST(SaturatingTest, MulDivKeepsTheProductExact) {
  EXPECT_EQ(MulDiv(100, 1, 3), 33);
  EXPECT_EQ(MulDiv(100, 2, 3), 66);
  // score * 100 / max with score = max near the limit: 100, where int64
  // multiplication would have wrapped.
  EXPECT_EQ(MulDiv(100, kMax, kMax), 100);
  EXPECT_EQ(MulDiv(100, kMax / 2, kMax), 49);
  EXPECT_EQ(MulDiv(kMax - 10, 100, kMax), 99);
  // Truncated toward zero, as C++ and Go divide.
  EXPECT_EQ(MulDiv(-100, 1, 3), -33);
  // A quotient beyond int64 clamps.
  EXPECT_EQ(MulDiv(kMax, kMax, 1), kMax);
  EXPECT_EQ(MulDiv(kMax, kMax, -1), kMin);
  EXPECT_EQ(MulDiv(5, 7, 0), 0);
}

TEST(SaturatingTest, FromDoubleTruncatesAndClamps) {
  EXPECT_EQ(SatFromDouble(2.9), 2);
  EXPECT_EQ(SatFromDouble(-2.9), -2);
  EXPECT_EQ(SatFromDouble(9.3e18), kMax);
  EXPECT_EQ(SatFromDouble(9223372036854775808.0), kMax);
  EXPECT_EQ(SatFromDouble(9223372036854774784.0), 9223372036854774784);
  EXPECT_EQ(SatFromDouble(-1e30), kMin);
  EXPECT_EQ(SatFromDouble(std::numeric_limits<double>::infinity()), kMax);
  EXPECT_EQ(SatFromDouble(std::nan("")), 0);
}

static_assert(SatAdd(kMax, kMax) == kMax);
static_assert(MulDiv(100, kMax, kMax) == 100);

}  // namespace
}  // namespace kscore::model
