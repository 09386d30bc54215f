#include "shim/objects/quantity.h"

#include <cstdint>
#include <limits>

#include "gtest/gtest.h"

namespace kscore::objects {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

struct Case {
  const char* in;
  int scale;
  int64_t want;
};

void ExpectValues(std::initializer_list<Case> cases) {
  for (const Case& c : cases) {
    absl::StatusOr<int64_t> v = ParseQuantity(c.in, c.scale);
    ASSERT_TRUE(v.ok()) << c.in << ": " << v.status();
    EXPECT_EQ(*v, c.want) << c.in << " at scale " << c.scale;
  }
}

TEST(ParseQuantityTest, Values) {
  ExpectValues({Case{"100m", -3, 100},
                Case{"1", -3, 1000},
                Case{"1.5", -3, 1500},
                Case{"0.1", -3, 100},
                Case{"2", 0, 2},
                Case{"128Mi", 0, 134217728},
                Case{"1Gi", 0, 1073741824},
                Case{"1G", 0, 1000000000},
                Case{"2e3", 0, 2000},
                Case{"1k", 0, 1000},
                Case{"0.5", 0, 1},
                Case{"1500m", 0, 2},
                Case{"250u", -3, 1},
                Case{"16Gi", 0, 17179869184},
                Case{"110", 0, 110},
                Case{"0", -3, 0},
                Case{"-0", 0, 0},
                Case{"+5", 0, 5},
                Case{"0.05", -3, 50},
                Case{"007", 0, 7},
                Case{"1.5Gi", 0, 1610612736},
                Case{"0.5Ki", 0, 512},
                Case{"1n", -3, 1},
                Case{"1E", 0, 1000000000000000000},
                Case{"8Ei", 0, kMax},
                Case{"1e-99", 0, 1},
                Case{"-100m", -3, -100},
                Case{"-1.5", 0, -2}});
}

// Many digits stay exact: the value is rounded up only at the end.
TEST(ParseQuantityTest, LongNumbersAreExact) {
  ExpectValues({Case{"0.00000000000000000000000000001", 0, 1},
                Case{"1.00000000000000000000000000001", 0, 2},
                Case{"1.00000000000000000000000000000", 0, 1},
                Case{"123456789012345.678", -3, 123456789012345678},
                Case{"0.000000000000000000000000000001Ei", 0, 1},
                Case{"0.1Ki", 0, 103}});
}

// Beyond int64 a value saturates at INT64_MAX, where parsing used to fail
// (or the scaling to wrap); just below it, it is exact.
TEST(ParseQuantityTest, ValuesBeyondInt64Saturate) {
  ExpectValues({Case{"9223372036854775807", 0, kMax},
                Case{"9223372036854775806", 0, kMax - 1},
                Case{"9223372036854775808", 0, kMax},
                Case{"99999999999999999999999", 0, kMax},
                Case{"9223372036854775807", -3, kMax},
                Case{"9223372036854775807m", -3, kMax},
                Case{"9223372036854775.807", -3, kMax}, Case{"10E", 0, kMax},
                Case{"1e99", 0, kMax}, Case{"16Ei", 0, kMax},
                Case{"1024Pi", -3, kMax},
                Case{"-99999999999999999999", 0, -kMax}});
}

TEST(ParseQuantityTest, Invalid) {
  for (const char* s : {"", "abc", "1Qi", "1..5", "-", "Mi", "1e",
                        "1e9999999999", "1 ", "--1"}) {
    EXPECT_FALSE(ParseQuantity(s, 0).ok()) << s;
  }
}

}  // namespace
}  // namespace kscore::objects
