#include "scorer/framework/go_math.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "gtest/gtest.h"

namespace kscore::framework {
namespace {

// math.Float64bits(math.Log(float64(n))) printed by Go 1.26 on amd64.
TEST(GoLogTest, MatchesGoBitForBit) {
  struct Case {
    int n;
    uint64_t bits;
  } cases[] = {
      {2, 0x3fe62e42fefa39ef},      {3, 0x3ff193ea7aad030a},
      {4, 0x3ff62e42fefa39ef},      {5, 0x3ff9c041f7ed8d33},
      {7, 0x3fff2272ae325a57},      {14, 0x40051cca16d7bba8},
      {48, 0x400ef8383c50bb74},     {74, 0x4011375cd6fcab1c},
      {102, 0x40127ff8df87c7bd},    {176, 0x4014ae935b3cb89e},
      {1002, 0x401ba3965d405f5f},   {5002, 0x40210901f6dc84b9},
      {199999, 0x40286981b2cc8636},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.n);
    EXPECT_EQ(std::bit_cast<uint64_t>(GoLog(c.n)), c.bits);
  }
}

// The reason for GoLog: the C library's log(3), the weight of a topology
// with one domain, is one bit off Go's.
TEST(GoLogTest, DiffersFromTheCLibraryWhereGoDoes) {
  EXPECT_NE(std::bit_cast<uint64_t>(std::log(3.0)),
            std::bit_cast<uint64_t>(GoLog(3)));
}

TEST(GoLogTest, SpecialCases) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(GoLog(0), -kInf);
  EXPECT_EQ(GoLog(kInf), kInf);
  EXPECT_TRUE(std::isnan(GoLog(-1)));
  EXPECT_TRUE(std::isnan(GoLog(std::nan(""))));
  EXPECT_EQ(GoLog(1), 0);
}

}  // namespace
}  // namespace kscore::framework
