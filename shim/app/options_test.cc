#include "shim/app/options.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kscore::app {
namespace {

model::SchedulerConfig Config(const std::string& extra = "") {
  auto c = model::ParseSchedulerConfig(
      "apiVersion: kubescheduler.config.k8s.io/v1\n"
      "kind: KubeSchedulerConfiguration\n" +
      extra +
      "profiles:\n"
      "- schedulerName: first\n"
      "- schedulerName: second\n");
  EXPECT_TRUE(c.ok()) << c.status();
  return *c;
}

Flags Given() {
  Flags f;
  f.config = "unused.yaml";
  f.scorer = "127.0.0.1:50051";
  return f;
}

TEST(OptionsTest, DefaultsFromConfigAndFlags) {
  auto o = MakeOptions(Given(), Config());
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->served, (std::vector<std::string>{"first", "second"}));
  EXPECT_EQ(o->scorer_target, "127.0.0.1:50051");
  EXPECT_EQ(o->scorer_timeout, absl::Seconds(5));
  EXPECT_EQ(o->scorer_batch_size, 500);
  EXPECT_EQ(o->bind_workers, 64);
  EXPECT_EQ(o->preemption_max_victim_pods, 20000);
  EXPECT_EQ(o->explain_decisions, 1000);
  EXPECT_FALSE(o->record_scores);
  EXPECT_TRUE(o->protobuf);
  EXPECT_TRUE(o->leader_election.leader_elect);
  // Named after the first profile, never kube-scheduler's own Lease.
  EXPECT_EQ(o->lease_name, "first");
  EXPECT_EQ(o->lease_namespace, "kube-system");
  // kube-scheduler's serving: HTTPS on 0.0.0.0:10259, self-signed, probes
  // open; no plain HTTP.
  EXPECT_EQ(o->serving.bind_address, "0.0.0.0");
  EXPECT_EQ(o->serving.secure_port, 10259);
  EXPECT_EQ(o->serving.cert_pem, "");
  EXPECT_EQ(o->serving.insecure_address, "");
  EXPECT_TRUE(o->always_allow_paths.Allows("/readyz"));
  EXPECT_FALSE(o->always_allow_paths.Allows("/metrics"));
}

TEST(OptionsTest, FlagsOverrideTheConfig) {
  Flags f = Given();
  f.leader_elect = false;
  f.lease_duration = "30s";
  f.resource_name = "lock";
  f.resource_namespace = "kscore-system";
  f.scorer_timeout = "250ms";
  auto o = MakeOptions(f, Config("leaderElection:\n  leaderElect: true\n"
                                 "  resourceName: from-config\n"
                                 "clientConnection:\n"
                                 "  contentType: application/json\n"));
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_FALSE(o->leader_election.leader_elect);
  EXPECT_EQ(o->leader_election.lease_duration, absl::Seconds(30));
  EXPECT_EQ(o->lease_name, "lock");
  EXPECT_EQ(o->lease_namespace, "kscore-system");
  EXPECT_EQ(o->scorer_timeout, absl::Milliseconds(250));
  EXPECT_FALSE(o->protobuf);
}

TEST(OptionsTest, ResourceNameFromTheConfig) {
  auto o = MakeOptions(
      Given(), Config("leaderElection:\n  resourceName: from-config\n"));
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->lease_name, "from-config");
}

TEST(OptionsTest, ErrorsNameTheFlagOrField) {
  struct {
    std::string name;
    Flags flags;
    std::string config_extra;
    std::string want;
    int exit_code;
  } cases[] = {
      {"no scorer",
       [] {
         Flags f = Given();
         f.scorer = "";
         return f;
       }(),
       "", "--scorer is required", 2},
      {"bad duration",
       [] {
         Flags f = Given();
         f.renew_deadline = "soon";
         return f;
       }(),
       "", "--leader-elect-renew-deadline: invalid duration \"soon\"", 2},
      {"client certificate without key",
       [] {
         Flags f = Given();
         f.scorer_ca_file = "/dev/null";
         f.scorer_cert_file = "/etc/hostname";
         return f;
       }(),
       "", "--scorer-cert-file and --scorer-key-file go together", 2},
      {"client certificate without CA",
       [] {
         Flags f = Given();
         f.scorer_cert_file = "/etc/hostname";
         f.scorer_key_file = "/etc/hostname";
         return f;
       }(),
       "", "--scorer-ca-file is required for TLS to the scorer", 2},
      {"unreadable CA",
       [] {
         Flags f = Given();
         f.scorer_ca_file = "/nonexistent/ca.pem";
         return f;
       }(),
       "", "--scorer-ca-file: cannot read /nonexistent/ca.pem", 2},
      {"CA file without PEM",
       [] {
         Flags f = Given();
         f.scorer_ca_file = "/etc/hostname";
         return f;
       }(),
       "", "--scorer-ca-file: /etc/hostname holds no PEM block", 2},
      {"negative timeout",
       [] {
         Flags f = Given();
         f.scorer_timeout = "-1s";
         return f;
       }(),
       "", "--scorer-timeout: invalid duration \"-1s\"", 2},
      {"lease shorter than renew deadline",
       [] {
         Flags f = Given();
         f.lease_duration = "5s";
         return f;
       }(),
       "",
       "--leader-elect-lease-duration (5s) must be greater than "
       "--leader-elect-renew-deadline (10s)",
       2},
      {"renew deadline under retry period",
       [] {
         Flags f = Given();
         f.retry_period = "12s";
         return f;
       }(),
       "",
       "--leader-elect-renew-deadline (10s) must be greater than "
       "--leader-elect-retry-period (12s)",
       2},
      {"batch size",
       [] {
         Flags f = Given();
         f.scorer_batch_size = 0;
         return f;
       }(),
       "", "--scorer-batch-size: must be at least 1, not 0", 2},
      {"bind workers",
       [] {
         Flags f = Given();
         f.bind_workers = -3;
         return f;
       }(),
       "", "--bind-workers: must be at least 1, not -3", 2},
      {"preemption bound",
       [] {
         Flags f = Given();
         f.preemption_max_victim_pods = 0;
         return f;
       }(),
       "", "--preemption-max-victim-pods: must be at least 1, not 0", 2},
      {"explain decisions",
       [] {
         Flags f = Given();
         f.explain_decisions = -1;
         return f;
       }(),
       "", "--explain-decisions: must be at least 0, not -1", 2},
      {"bind address with a port",
       [] {
         Flags f = Given();
         f.bind_address = "0.0.0.0:10259";
         return f;
       }(),
       "",
       "--bind-address: \"0.0.0.0:10259\" is not an IP address (it is the "
       "IP only, as kube-scheduler's; the port is --secure-port",
       2},
      {"bind address a name",
       [] {
         Flags f = Given();
         f.bind_address = "localhost";
         return f;
       }(),
       "", "--bind-address: \"localhost\" is not an IP address", 2},
      {"secure port",
       [] {
         Flags f = Given();
         f.secure_port = 70000;
         return f;
       }(),
       "", "--secure-port: must be 0 (no HTTPS) or 1-65535, not 70000", 2},
      {"certificate without key",
       [] {
         Flags f = Given();
         f.tls_cert_file = "/etc/hostname";
         return f;
       }(),
       "", "--tls-cert-file and --tls-private-key-file go together", 2},
      {"certificate file without PEM",
       [] {
         Flags f = Given();
         f.tls_cert_file = "/etc/hostname";
         f.tls_private_key_file = "/etc/hostname";
         return f;
       }(),
       "", "--tls-cert-file: /etc/hostname holds no PEM block", 2},
      {"always-allow path",
       [] {
         Flags f = Given();
         f.authorization_always_allow_paths = {"/healthz", "/*z"};
         return f;
       }(),
       "",
       "--authorization-always-allow-paths: only trailing * allowed in "
       "\"/*z\"",
       2},
      {"plain address",
       [] {
         Flags f = Given();
         f.insecure_serving_address = "127.0.0.1";
         return f;
       }(),
       "", "--insecure-serving-address: \"127.0.0.1\" is not host:port", 2},
      {"content type", Given(),
       "clientConnection:\n  contentType: application/yaml\n",
       "clientConnection.contentType: \"application/yaml\" is not supported",
       1},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto o = MakeOptions(c.flags, Config(c.config_extra));
    ASSERT_FALSE(o.ok());
    EXPECT_THAT(o.status().message(), ::testing::HasSubstr(c.want));
    EXPECT_EQ(ExitCode(o.status()), c.exit_code);
  }
}

TEST(OptionsTest, LoadOptionsReadsTheFileOrSaysWhy) {
  Flags f = Given();
  f.config = "";
  EXPECT_THAT(LoadOptions(f).status().message(),
              ::testing::HasSubstr("--config is required"));
  f.config = "/nonexistent/kscore.yaml";
  auto o = LoadOptions(f);
  ASSERT_FALSE(o.ok());
  EXPECT_THAT(o.status().message(),
              ::testing::HasSubstr("invalid configuration"));
  EXPECT_THAT(o.status().message(),
              ::testing::HasSubstr("/nonexistent/kscore.yaml"));
  EXPECT_EQ(ExitCode(o.status()), 1);
  f.config =
      std::string(KSCORE_SOURCE_DIR) + "/examples/config/concentrate.yaml";
  auto ok = LoadOptions(f);
  EXPECT_TRUE(ok.ok()) << ok.status();
}

// Every bad configuration under tests/testdata/config/bad states the
// scorer's error in its first line ("# expect: ..."). The shim refuses each
// at start with that same message, except a plugin name that is not in-tree:
// it may be a custom scorer's plugin, known to that scorer's build only.
TEST(OptionsTest, RefusesTheScorersBadConfigsWithItsMessage) {
  const std::set<std::string> scorer_only = {"unknown_plugin.yaml"};
  const std::filesystem::path dir =
      std::filesystem::path(KSCORE_SOURCE_DIR) / "tests/testdata/config/bad";
  int refused = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    std::ifstream in(entry.path());
    std::string first;
    std::getline(in, first);
    const std::string expected = first.substr(first.find(": ") + 2);
    Flags f = Given();
    f.config = entry.path().string();
    absl::StatusOr<Options> o = LoadOptions(f);
    if (scorer_only.contains(name)) {
      EXPECT_TRUE(o.ok()) << name << ": " << o.status();
      continue;
    }
    ASSERT_FALSE(o.ok()) << name << " starts but the scorer says: " << expected;
    EXPECT_THAT(o.status().message(), ::testing::HasSubstr(expected)) << name;
    EXPECT_THAT(o.status().message(), ::testing::HasSubstr(name));
    EXPECT_NE(ExitCode(o.status()), 0);
    ++refused;
  }
  EXPECT_EQ(refused, 33);
}

// Plugin args the shim cannot check for want of the plugin: a name that is
// not in-tree is left to the scorer that has it; in-tree args are checked.
TEST(OptionsTest, InvalidPluginArgsFailStartNamingTheField) {
  struct Case {
    std::string plugin_config;
    std::string want;  // "" when the shim starts
  };
  const std::string path =
      (std::filesystem::temp_directory_path() / "kscore_options_test.yaml")
          .string();
  for (const Case& c : std::vector<Case>{
           {"  - name: NodeResourcesFit\n"
            "    args: {scoringStrategy: {type: bogus}}\n",
            "profiles[0].pluginConfig[0].args.scoringStrategy.type: unknown "
            "type \"bogus\""},
           {"  - name: Concentrate\n    args: {labelKey: \"-x\"}\n",
            "profiles[0].pluginConfig[0].args.labelKey: invalid label key "
            "\"-x\""},
           {"  - name: NodeAffinity\n    args: {kind: NodeResourcesFitArgs}\n",
            "profiles[0].pluginConfig[0].args.kind: expected NodeAffinityArgs, "
            "got \"NodeResourcesFitArgs\""},
           {"  - name: TaintToleration\n    args: {weight: 3}\n",
            "profiles[0].pluginConfig[0].args.weight: unknown field"},
           {"  - name: NodeResourcesFit\n"
            "    args: {scoringStrategy: {type: MostAllocated}}\n",
            ""},
           {"  - name: OutOfTreePlugin\n    args: {anything: [1, 2]}\n", ""},
       }) {
    {
      std::ofstream out(path);
      out << "apiVersion: kubescheduler.config.k8s.io/v1\n"
             "kind: KubeSchedulerConfiguration\n"
             "profiles:\n"
             "- schedulerName: a\n"
             "  pluginConfig:\n"
          << c.plugin_config;
    }
    Flags f = Given();
    f.config = path;
    absl::StatusOr<Options> o = LoadOptions(f);
    if (c.want.empty()) {
      EXPECT_TRUE(o.ok()) << c.plugin_config << o.status();
      continue;
    }
    ASSERT_FALSE(o.ok()) << c.plugin_config;
    EXPECT_THAT(o.status().message(), ::testing::HasSubstr(c.want));
    EXPECT_THAT(o.status().message(), ::testing::HasSubstr(path));
    EXPECT_NE(ExitCode(o.status()), 0);
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace kscore::app
