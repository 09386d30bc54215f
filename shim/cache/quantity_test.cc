#include "shim/cache/quantity.h"

#include "gtest/gtest.h"

namespace kscore::cache {
namespace {

struct Case {
  const char* in;
  int scale;
  int64_t want;
};

TEST(ParseQuantityTest, Values) {
  for (const Case& c :
       {Case{"100m", -3, 100}, Case{"1", -3, 1000}, Case{"1.5", -3, 1500},
        Case{"0.1", -3, 100}, Case{"2", 0, 2}, Case{"128Mi", 0, 134217728},
        Case{"1Gi", 0, 1073741824}, Case{"1G", 0, 1000000000},
        Case{"2e3", 0, 2000}, Case{"1k", 0, 1000}, Case{"0.5", 0, 1},
        Case{"1500m", 0, 2}, Case{"250u", -3, 1}, Case{"16Gi", 0, 17179869184},
        Case{"110", 0, 110}}) {
    absl::StatusOr<int64_t> v = ParseQuantity(c.in, c.scale);
    ASSERT_TRUE(v.ok()) << c.in << ": " << v.status();
    EXPECT_EQ(*v, c.want) << c.in;
  }
}

TEST(ParseQuantityTest, Invalid) {
  for (const char* s : {"", "abc", "1Qi", "1..5", "-", "Mi", "1e99"}) {
    EXPECT_FALSE(ParseQuantity(s, 0).ok()) << s;
  }
}

}  // namespace
}  // namespace kscore::cache
