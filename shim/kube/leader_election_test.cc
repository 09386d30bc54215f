#include "shim/kube/leader_election.h"

#include "gtest/gtest.h"

namespace kscore::kube {
namespace {

const absl::Time kNow =
    absl::FromUnixMicros(1700000000123456);  // 2023-11-14T22:13:20.123456Z

TEST(MicroTimeTest, FormatAndParse) {
  EXPECT_EQ(FormatMicroTime(kNow), "2023-11-14T22:13:20.123456Z");
  EXPECT_EQ(FormatMicroTime(absl::FromUnixSeconds(0)),
            "1970-01-01T00:00:00.000000Z");
  EXPECT_EQ(*ParseMicroTime("2023-11-14T22:13:20.123456Z"), kNow);
  EXPECT_EQ(*ParseMicroTime("2023-11-14T22:13:20Z"),
            absl::FromUnixSeconds(1700000000));
  EXPECT_FALSE(ParseMicroTime("yesterday").ok());
}

nlohmann::json Spec(const std::string& holder, absl::Time renewed, int seconds,
                    int transitions) {
  return {{"holderIdentity", holder},
          {"leaseDurationSeconds", seconds},
          {"acquireTime", FormatMicroTime(renewed - absl::Minutes(1))},
          {"renewTime", FormatMicroTime(renewed)},
          {"leaseTransitions", transitions}};
}

TEST(NextLeaseSpecTest, OtherHoldersValidLeaseIsRespected) {
  EXPECT_FALSE(NextLeaseSpec(Spec("other", kNow - absl::Seconds(14), 15, 3),
                             "me", absl::Seconds(15), kNow)
                   .has_value());
}

TEST(NextLeaseSpecTest, ExpiredLeaseIsTakenOver) {
  std::optional<nlohmann::json> next =
      NextLeaseSpec(Spec("other", kNow - absl::Seconds(16), 15, 3), "me",
                    absl::Seconds(20), kNow);
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ((*next)["holderIdentity"], "me");
  EXPECT_EQ((*next)["leaseDurationSeconds"], 20);
  EXPECT_EQ((*next)["acquireTime"], FormatMicroTime(kNow));
  EXPECT_EQ((*next)["renewTime"], FormatMicroTime(kNow));
  EXPECT_EQ((*next)["leaseTransitions"], 4);
}

TEST(NextLeaseSpecTest, RenewKeepsAcquireTimeAndTransitions) {
  const nlohmann::json old = Spec("me", kNow - absl::Seconds(2), 15, 3);
  std::optional<nlohmann::json> next =
      NextLeaseSpec(old, "me", absl::Seconds(15), kNow);
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ((*next)["acquireTime"], old["acquireTime"]);
  EXPECT_EQ((*next)["renewTime"], FormatMicroTime(kNow));
  EXPECT_EQ((*next)["leaseTransitions"], 3);
}

TEST(NextLeaseSpecTest, ReleasedLeaseIsFreeAtOnce) {
  const nlohmann::json released =
      ReleasedLeaseSpec(Spec("old", kNow, 15, 2), kNow);
  EXPECT_EQ(released["holderIdentity"], "");
  EXPECT_EQ(released["leaseDurationSeconds"], 1);
  std::optional<nlohmann::json> next =
      NextLeaseSpec(released, "me", absl::Seconds(15), kNow);
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ((*next)["holderIdentity"], "me");
  EXPECT_EQ((*next)["leaseTransitions"], 3);
}

// A Lease whose fields have other types than the API's (no API server
// stores one) is left alone, not read as empty (which would take it over)
// nor thrown out of the elector's thread.
TEST(NextLeaseSpecTest, WrongTypesLeaveTheLeaseAlone) {
  const char* specs[] = {
      R"({"holderIdentity": 7})",
      R"({"holderIdentity": "other", "renewTime": 1})",
      R"({"holderIdentity": "other", "leaseDurationSeconds": "15"})",
      R"({"holderIdentity": "", "leaseTransitions": [1]})",
      R"({"holderIdentity": "", "leaseDurationSeconds": 18446744073709551615})",
  };
  for (const char* spec : specs) {
    EXPECT_FALSE(NextLeaseSpec(nlohmann::json::parse(spec), "me",
                               absl::Seconds(15), kNow)
                     .has_value())
        << spec;
  }
}

TEST(LeaderElectorTest, RejectsInconsistentDurations) {
  LeaderElectionConfig c;
  c.lease_namespace = "ns";
  c.lease_name = "l";
  c.lease_duration = absl::Seconds(10);
  c.renew_deadline = absl::Seconds(10);  // must be < lease_duration
  LeaderElector elector(/*client=*/nullptr, c);
  EXPECT_FALSE(elector.Start().ok());
  EXPECT_NE(elector.identity().find('_'), std::string::npos);
}

}  // namespace
}  // namespace kscore::kube
