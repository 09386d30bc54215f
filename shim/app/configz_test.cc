#include "shim/app/configz.h"

#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "shim/app/options.h"

namespace kscore::app {
namespace {

using Json = nlohmann::json;

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Options Load(const std::string& config) {
  Flags f;
  f.config = config;
  f.scorer = "127.0.0.1:1";
  absl::StatusOr<Options> o = LoadOptions(f);
  EXPECT_TRUE(o.ok()) << o.status();
  return o.ok() ? *std::move(o) : Options();
}

// Ours against kube-scheduler's /configz for the same file (the golden JSON
// is reference/cmd/configz's output), field by field: the diff names the
// JSON pointer of each field that differs.
void ExpectSameAsUpstream(const Json& ours, const std::string& golden) {
  const Json upstream = Json::parse(Read(golden));
  EXPECT_EQ(ours, upstream)
      << "diff (upstream from ours): " << Json::diff(ours, upstream).dump(1);
}

TEST(ConfigzTest, StockConfigIsKubeSchedulersDefaultedV1) {
  const std::string dir = std::string(KSCORE_SOURCE_DIR);
  Json ours =
      Json::parse(ConfigzJson(Load(dir + "/examples/config/concentrate.yaml")));
  // The one deliberate difference: the shim's Lease is named after its
  // scheduler, never kube-scheduler's own lock, and /configz says so.
  ASSERT_EQ(ours["componentconfig"]["leaderElection"]["resourceName"],
            "concentrate-scheduler");
  ours["componentconfig"]["leaderElection"]["resourceName"] = "kube-scheduler";
  ExpectSameAsUpstream(ours, dir + "/tests/testdata/configz/concentrate.json");
}

TEST(ConfigzTest, CustomConfigIsKubeSchedulersDefaultedV1) {
  const std::string dir = std::string(KSCORE_SOURCE_DIR);
  ExpectSameAsUpstream(Json::parse(ConfigzJson(
                           Load(dir + "/tests/testdata/configz/custom.yaml"))),
                       dir + "/tests/testdata/configz/custom.json");
}

TEST(ConfigzTest, FlagsAreAppliedAndTheShapeIsConfigzs) {
  Flags f;
  f.config =
      std::string(KSCORE_SOURCE_DIR) + "/examples/config/concentrate.yaml";
  f.scorer = "127.0.0.1:1";
  f.leader_elect = false;
  f.lease_duration = "20s";
  f.resource_name = "from-flag";
  f.kubeconfig = "/etc/kubeconfig";
  absl::StatusOr<Options> o = LoadOptions(f);
  ASSERT_TRUE(o.ok()) << o.status();
  const std::string body = ConfigzJson(*o);
  // component-base/configz: {"componentconfig": <object>}, then the v1
  // type's field order.
  EXPECT_THAT(body,
              ::testing::StartsWith(
                  R"({"componentconfig":{"kind":"KubeSchedulerConfiguration",)"
                  R"("apiVersion":"kubescheduler.config.k8s.io/v1",)"
                  R"("parallelism":16,"leaderElection":)"));
  const Json c = Json::parse(body)["componentconfig"];
  EXPECT_EQ(c["leaderElection"]["leaderElect"], false);
  EXPECT_EQ(c["leaderElection"]["leaseDuration"], "20s");
  EXPECT_EQ(c["leaderElection"]["resourceName"], "from-flag");
  EXPECT_EQ(c["clientConnection"]["kubeconfig"], "/etc/kubeconfig");
}

}  // namespace
}  // namespace kscore::app
