#include "model/validation.h"

#include "gtest/gtest.h"

namespace kscore::model {
namespace {

TEST(CheckLabelKeyTest, Valid) {
  for (const char* k :
       {"app", "a", "app.kubernetes.io/name", "example.com/x_y-z.1", "A9",
        "topology.kubernetes.io/zone"}) {
    EXPECT_EQ(CheckLabelKey(k), "") << k;
  }
}

TEST(CheckLabelKeyTest, Invalid) {
  for (const char* k : {"", "a b", "-a", "a-", "/a", "a/", "a/b/c", "Ex.com/a",
                        "ex..com/a", "a@b"}) {
    EXPECT_NE(CheckLabelKey(k), "") << k;
  }
  EXPECT_NE(CheckLabelKey(std::string(64, 'a')), "");
  EXPECT_EQ(CheckLabelKey(std::string(63, 'a')), "");
}

}  // namespace
}  // namespace kscore::model
