#include "model/config.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kscore::model {
namespace {

using ::testing::HasSubstr;

constexpr char kStage1[] = R"(
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: concentrate-scheduler
  plugins:
    score:
      enabled:
      - name: Concentrate
        weight: 10
  pluginConfig:
  - name: Concentrate
    args:
      labelKey: app
)";

TEST(ConfigTest, Stage1ProfileDecodes) {
  absl::StatusOr<SchedulerConfig> cfg = ParseSchedulerConfig(kStage1);
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  ASSERT_EQ(cfg->profiles.size(), 1u);
  const ProfileConfig& p = cfg->profiles[0];
  EXPECT_EQ(p.scheduler_name, "concentrate-scheduler");
  ASSERT_EQ(p.at(ExtensionPoint::kScore).enabled.size(), 1u);
  EXPECT_EQ(p.at(ExtensionPoint::kScore).enabled[0].name, "Concentrate");
  EXPECT_EQ(p.at(ExtensionPoint::kScore).enabled[0].weight, 10);
  ASSERT_EQ(p.plugin_config.size(), 1u);
  EXPECT_EQ(p.plugin_config[0].path, "profiles[0].pluginConfig[0].args");
}

TEST(ConfigTest, DefaultsMatchKubeScheduler) {
  absl::StatusOr<SchedulerConfig> cfg = ParseSchedulerConfig(
      "apiVersion: kubescheduler.config.k8s.io/v1\n"
      "kind: KubeSchedulerConfiguration\n");
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  EXPECT_EQ(cfg->parallelism, 16);
  EXPECT_EQ(cfg->pod_initial_backoff_seconds, 1);
  EXPECT_EQ(cfg->pod_max_backoff_seconds, 10);
  EXPECT_EQ(cfg->percentage_of_nodes_to_score, 0);
  EXPECT_TRUE(cfg->leader_election.leader_elect);
  EXPECT_EQ(cfg->leader_election.lease_duration, absl::Seconds(15));
  EXPECT_EQ(cfg->leader_election.resource_namespace, "kube-system");
  EXPECT_EQ(cfg->client_connection.qps, 50);
  EXPECT_EQ(cfg->client_connection.burst, 100);
  ASSERT_EQ(cfg->profiles.size(), 1u);
  EXPECT_EQ(cfg->profiles[0].scheduler_name, "default-scheduler");
}

TEST(ConfigTest, ReadsEveryTopLevelField) {
  absl::StatusOr<SchedulerConfig> cfg = ParseSchedulerConfig(R"(
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
parallelism: 4
percentageOfNodesToScore: 30
podInitialBackoffSeconds: 2
podMaxBackoffSeconds: 20
enableProfiling: false
leaderElection:
  leaderElect: true
  leaseDuration: 30s
  renewDeadline: 20s
  retryPeriod: 5s
  resourceName: my-lock
  resourceNamespace: kscore-system
clientConnection:
  kubeconfig: /etc/k.conf
  qps: 200
  burst: 400
profiles:
- schedulerName: a
  percentageOfNodesToScore: 70
- schedulerName: b
)");
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  EXPECT_EQ(cfg->parallelism, 4);
  EXPECT_EQ(cfg->percentage_of_nodes_to_score, 30);
  EXPECT_EQ(cfg->pod_max_backoff_seconds, 20);
  EXPECT_FALSE(cfg->enable_profiling);
  EXPECT_EQ(cfg->leader_election.lease_duration, absl::Seconds(30));
  EXPECT_EQ(cfg->leader_election.resource_name, "my-lock");
  EXPECT_TRUE(cfg->leader_election.resource_name_set);
  EXPECT_EQ(cfg->client_connection.kubeconfig, "/etc/k.conf");
  EXPECT_EQ(cfg->client_connection.qps, 200);
  EXPECT_EQ(cfg->client_connection.burst, 400);
  ASSERT_EQ(cfg->profiles.size(), 2u);
  EXPECT_EQ(cfg->profiles[0].percentage_of_nodes_to_score, 70);
  EXPECT_FALSE(cfg->profiles[1].percentage_of_nodes_to_score.has_value());
}

// Strict decoding as kube-scheduler's: a key given twice is an error naming
// it, at the top level, in nested objects and inside a plugin's args alike.
TEST(ConfigTest, KeyGivenTwiceIsAnError) {
  const std::string header =
      "apiVersion: kubescheduler.config.k8s.io/v1\n"
      "kind: KubeSchedulerConfiguration\n";
  struct Case {
    std::string body;
    std::string expected;
  };
  for (const Case& c : std::vector<Case>{
           {"kind: KubeSchedulerConfiguration\n",
            "kind: key \"kind\" already set in map (line 3, first on line 2)"},
           {"leaderElection: {leaderElect: true, leaderElect: false}\n",
            "leaderElection.leaderElect: key \"leaderElect\" already set"},
           {"profiles:\n"
            "- schedulerName: a\n"
            "  pluginConfig:\n"
            "  - name: Concentrate\n"
            "    args: {labelKey: app, labelKey: tier}\n",
            "profiles[0].pluginConfig[0].args.labelKey: key \"labelKey\" "
            "already set in map (line 7, first on line 7)"},
       }) {
    absl::StatusOr<SchedulerConfig> cfg = ParseSchedulerConfig(header + c.body);
    ASSERT_FALSE(cfg.ok()) << c.body;
    EXPECT_EQ(cfg.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(cfg.status().message()), HasSubstr(c.expected));
  }
}

TEST(ConfigTest, MissingFileIsNotFound) {
  absl::StatusOr<SchedulerConfig> cfg =
      LoadSchedulerConfig("/nonexistent/x.yaml");
  ASSERT_FALSE(cfg.ok());
  EXPECT_EQ(cfg.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(cfg.status().message()),
              HasSubstr("/nonexistent/x.yaml"));
}

// Aliases nested within aliases ("billion laughs": 10^9 nodes once
// expanded, from a few hundred bytes) are refused once the decoder has
// walked the bound, quickly, naming the bound.
TEST(ConfigTest, NestedAliasesAreBounded) {
  std::string yaml =
      "apiVersion: kubescheduler.config.k8s.io/v1\n"
      "kind: KubeSchedulerConfiguration\n"
      "profiles:\n"
      "- schedulerName: a\n"
      "  pluginConfig:\n"
      "  - name: NodeAffinity\n"
      "    args:\n"
      "      l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (int i = 1; i < 9; ++i) {
    std::string alias = absl::StrCat("*l", i - 1);
    absl::StrAppend(&yaml, "      l", i, ": &l", i, " [");
    for (int j = 0; j < 10; ++j) absl::StrAppend(&yaml, j ? ", " : "", alias);
    absl::StrAppend(&yaml, "]\n");
  }
  const absl::Time start = absl::Now();
  absl::StatusOr<SchedulerConfig> cfg = ParseSchedulerConfig(yaml);
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  ASSERT_FALSE(cfg.ok());
  EXPECT_EQ(cfg.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(cfg.status().message()),
              HasSubstr(absl::StrCat("more than ", kMaxConfigNodes,
                                     " YAML nodes once aliases are expanded")));
}

// A file larger than the bound is refused before it is parsed, naming the
// file and the bound; a text of that size given directly is refused too.
TEST(ConfigTest, FileSizeIsBounded) {
  const std::string path =
      (std::filesystem::temp_directory_path() / "kscore_big_config.yaml")
          .string();
  {
    std::ofstream out(path);
    out << "apiVersion: kubescheduler.config.k8s.io/v1\n"
        << "kind: KubeSchedulerConfiguration\n"
        << "# " << std::string(kMaxConfigBytes, 'x') << "\n";
  }
  absl::StatusOr<SchedulerConfig> cfg = LoadSchedulerConfig(path);
  std::remove(path.c_str());
  ASSERT_FALSE(cfg.ok());
  EXPECT_EQ(cfg.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(cfg.status().message()), HasSubstr(path));
  EXPECT_THAT(std::string(cfg.status().message()),
              HasSubstr(absl::StrCat("larger than ", kMaxConfigBytes)));
  EXPECT_FALSE(
      ParseSchedulerConfig(std::string(kMaxConfigBytes + 1, '#')).ok());
}

}  // namespace
}  // namespace kscore::model
