#include "common/flags.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace kscore::common {
namespace {

KubeStyleArgs Args(std::vector<std::string> in) {
  std::vector<char*> argv;
  argv.reserve(in.size());
  for (std::string& s : in) argv.push_back(s.data());
  return KubeStyleArgs(static_cast<int>(argv.size()), argv.data());
}

TEST(KubeStyleArgsTest, DashesInNamesBecomeUnderscoresValuesStay) {
  KubeStyleArgs a = Args({"shim", "--leader-elect-lease-duration=15s",
                          "--kubeconfig", "/a-b/c-d", "--", "--x-y"});
  ASSERT_EQ(a.argc(), 6);
  EXPECT_STREQ(a.argv[1], "--leader_elect_lease_duration=15s");
  EXPECT_STREQ(a.argv[3], "/a-b/c-d");
  EXPECT_STREQ(a.argv[5], "--x-y");  // after "--": left alone
  EXPECT_EQ(a.argv[6], nullptr);
}

TEST(FlagGivenTest, FormsOfAFlag) {
  EXPECT_TRUE(FlagGiven(Args({"shim", "--leader-elect"}), "leader_elect"));
  EXPECT_TRUE(
      FlagGiven(Args({"shim", "--leader-elect=false"}), "leader_elect"));
  EXPECT_TRUE(FlagGiven(Args({"shim", "-noleader_elect"}), "leader_elect"));
  EXPECT_FALSE(FlagGiven(Args({"shim", "--leader-elect-lease-duration=1s"}),
                         "leader_elect"));
  EXPECT_FALSE(
      FlagGiven(Args({"shim", "--", "--leader_elect"}), "leader_elect"));
  EXPECT_FALSE(FlagGiven(Args({"shim"}), "leader_elect"));
}

}  // namespace
}  // namespace kscore::common
