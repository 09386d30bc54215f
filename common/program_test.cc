#include "common/program.h"

#include <sys/resource.h>

#include "gtest/gtest.h"

namespace kscore::common {
namespace {

// A soft open-file limit below the hard one is raised to the hard one.
TEST(ProgramTest, RaisesTheOpenFileLimitToTheHardLimit) {
  rlimit before{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &before), 0);
  ASSERT_GE(before.rlim_max, rlim_t{128});
  rlimit lowered = before;
  lowered.rlim_cur = 64;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &lowered), 0);

  EXPECT_EQ(RaiseOpenFileLimit(), before.rlim_max);
  rlimit after{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &after), 0);
  EXPECT_EQ(after.rlim_cur, before.rlim_max);
  EXPECT_EQ(after.rlim_max, before.rlim_max);
}

}  // namespace
}  // namespace kscore::common
