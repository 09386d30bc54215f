#include "scorer/server/options.h"

#include <unistd.h>

#include <fstream>
#include <functional>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scorer/plugins/registry.h"

namespace kscore::server {
namespace {

using ::testing::HasSubstr;

// A valid configuration file: kube-scheduler's defaults. Each test writes its
// own, since ctest runs the tests of this file side by side.
std::string DefaultConfigFile() {
  const std::string path = absl::StrCat(
      ::testing::TempDir(), "/scorer_options_test_", ::getpid(), "_",
      ::testing::UnitTest::GetInstance()->current_test_info()->name(), ".yaml");
  std::ofstream(path) << "apiVersion: kubescheduler.config.k8s.io/v1\n"
                         "kind: KubeSchedulerConfiguration\n";
  return path;
}

Flags ValidFlags() {
  Flags f;
  f.config = DefaultConfigFile();
  return f;
}

TEST(LoadOptionsTest, RefusesFlagsAndConfigurationsNamingWhatIsWrong) {
  struct Case {
    std::string name;
    std::function<void(Flags&)> change;
    absl::StatusCode code;
    std::string message;
    int exit_code;
  };
  const Case cases[] = {
      {"no config", [](Flags& f) { f.config.clear(); },
       absl::StatusCode::kInvalidArgument,
       "--config is required (a KubeSchedulerConfiguration file)", 2},
      {"empty batches", [](Flags& f) { f.max_batch_nodes = 0; },
       absl::StatusCode::kInvalidArgument,
       "--max-batch-nodes must be greater than 0, got 0", 2},
      {"request over gRPC's int",
       [](Flags& f) { f.max_request_bytes = int64_t{1} << 32; },
       absl::StatusCode::kInvalidArgument,
       "--max-request-bytes must be between 1 and 2147483647, got 4294967296",
       2},
      {"memory under one request",
       [](Flags& f) { f.grpc_memory_limit_bytes = 1000; },
       absl::StatusCode::kInvalidArgument,
       "--grpc-memory-limit-bytes (1000) must be at least --max-request-bytes "
       "(67108864): a request of the largest size must fit",
       2},
      {"missing file",
       [](Flags& f) { f.config = ::testing::TempDir() + "/no-such.yaml"; },
       absl::StatusCode::kFailedPrecondition, "invalid configuration: ", 1},
  };
  for (const Case& c : cases) {
    Flags flags = ValidFlags();
    c.change(flags);
    absl::StatusOr<Options> o = LoadOptions(flags, plugins::DefaultRegistry());
    ASSERT_FALSE(o.ok()) << c.name;
    EXPECT_EQ(o.status().code(), c.code) << c.name;
    EXPECT_THAT(std::string(o.status().message()), HasSubstr(c.message))
        << c.name;
    EXPECT_EQ(ExitCode(o.status()), c.exit_code) << c.name;
  }
}

TEST(LoadOptionsTest, KeepsTheFlagsAndSaysHowThePortIsServed) {
  struct Case {
    std::string cert, ca, metrics;
    std::string transport, metrics_address;
  };
  const Case cases[] = {
      {"", "", "0.0.0.0:9090", "plaintext", "0.0.0.0:9090"},
      {"cert.pem", "", "0", "TLS", ""},
      {"cert.pem", "ca.pem", "", "mutual TLS", ""},
  };
  for (const Case& c : cases) {
    Flags flags = ValidFlags();
    flags.tls_cert_file = c.cert;
    flags.client_ca_file = c.ca;
    flags.metrics_bind_address = c.metrics;
    absl::StatusOr<Options> o = LoadOptions(flags, plugins::DefaultRegistry());
    ASSERT_TRUE(o.ok()) << o.status();
    EXPECT_EQ(o->transport, c.transport);
    EXPECT_EQ(o->metrics_address, c.metrics_address);
    EXPECT_EQ(o->max_request_bytes, 64 << 20);
    EXPECT_TRUE(o->profiles->Find("default-scheduler") != nullptr);
  }
}

TEST(ServerCredentialsTest, TlsFlagsGoTogether) {
  struct Case {
    std::string cert, key, ca;
    std::string error;  // "" when credentials are made
  };
  const Case cases[] = {
      {"", "", "", ""},
      {"", "", "ca.pem",
       "--client-ca-file needs --tls-cert-file and --tls-private-key-file"},
      {"cert.pem", "", "",
       "--tls-cert-file and --tls-private-key-file go together"},
      {"", "key.pem", "",
       "--tls-cert-file and --tls-private-key-file go together"},
      {::testing::TempDir() + "/no-cert.pem", "key.pem", "",
       "--tls-cert-file: cannot read"},
  };
  for (const Case& c : cases) {
    Flags flags;
    flags.tls_cert_file = c.cert;
    flags.tls_private_key_file = c.key;
    flags.client_ca_file = c.ca;
    absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> creds =
        ServerCredentials(flags);
    if (c.error.empty()) {
      EXPECT_TRUE(creds.ok()) << creds.status();
      continue;
    }
    ASSERT_FALSE(creds.ok()) << c.error;
    EXPECT_THAT(std::string(creds.status().message()), HasSubstr(c.error));
    EXPECT_EQ(ExitCode(creds.status()), 2) << c.error;
  }
}

}  // namespace
}  // namespace kscore::server
