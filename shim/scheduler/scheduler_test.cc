#include "shim/scheduler/scheduler.h"

#include "gtest/gtest.h"

namespace kscore::scheduler {
namespace {

TEST(NumFeasibleNodesToFindTest, MatchesKubeScheduler) {
  EXPECT_EQ(Scheduler::NumFeasibleNodesToFind(0, 3), 3u);
  EXPECT_EQ(Scheduler::NumFeasibleNodesToFind(0, 99), 99u);
  EXPECT_EQ(Scheduler::NumFeasibleNodesToFind(0, 100),
            100u);  // 50% < 100 -> 100
  EXPECT_EQ(Scheduler::NumFeasibleNodesToFind(0, 1000),
            420u);  // 50 - 1000/125 = 42%
  EXPECT_EQ(Scheduler::NumFeasibleNodesToFind(0, 5000), 500u);   // 10%
  EXPECT_EQ(Scheduler::NumFeasibleNodesToFind(0, 10000), 500u);  // floor of 5%
  EXPECT_EQ(Scheduler::NumFeasibleNodesToFind(30, 1000), 300u);
  EXPECT_EQ(Scheduler::NumFeasibleNodesToFind(100, 5000), 5000u);
}

}  // namespace
}  // namespace kscore::scheduler
