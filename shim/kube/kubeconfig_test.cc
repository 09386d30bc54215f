#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/escaping.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "shim/kube/client.h"

namespace kscore::kube {
namespace {

using ::testing::HasSubstr;

class KubeconfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("kube_kubeconfig_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_ / "certs");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& content) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << content;
    return path;
  }

  std::filesystem::path dir_;
};

std::string B64(const std::string& s) { return absl::Base64Escape(s); }

TEST_F(KubeconfigTest, DataFieldsOfCurrentContext) {
  const std::string path = Write("config", R"(apiVersion: v1
kind: Config
current-context: admin
clusters:
- name: other
  cluster: {server: https://wrong:1}
- name: local
  cluster:
    server: https://127.0.0.1:6443
    certificate-authority-data: )" + B64("CA PEM") +
                                               R"(
contexts:
- name: admin
  context: {cluster: local, user: admin}
users:
- name: admin
  user:
    client-certificate-data: )" + B64("CERT PEM") +
                                               R"(
    client-key-data: )" + B64("KEY PEM") + "\n");
  absl::StatusOr<RestConfig> c = LoadKubeconfig(path);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->server, "https://127.0.0.1:6443");
  EXPECT_EQ(c->ca_pem, "CA PEM");
  EXPECT_EQ(c->client_cert_pem, "CERT PEM");
  EXPECT_EQ(c->client_key_pem, "KEY PEM");
  EXPECT_FALSE(c->insecure_skip_tls_verify);
  EXPECT_TRUE(c->bearer_token.empty());
}

TEST_F(KubeconfigTest, FileFieldsRelativeToTheKubeconfig) {
  Write("certs/ca.crt", "CA FILE");
  Write("certs/client.crt", "CERT FILE");
  Write("certs/client.key", "KEY FILE");
  const std::string path = Write("config", R"(
current-context: a
clusters:
- name: c
  cluster:
    server: https://h:1
    certificate-authority: certs/ca.crt
contexts:
- {name: a, context: {cluster: c, user: u}}
users:
- name: u
  user:
    client-certificate: certs/client.crt
    client-key: )" + (dir_ / "certs/client.key").string() +
                                               "\n");
  absl::StatusOr<RestConfig> c = LoadKubeconfig(path);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->ca_pem, "CA FILE");
  EXPECT_EQ(c->client_cert_pem, "CERT FILE");
  EXPECT_EQ(c->client_key_pem, "KEY FILE");
}

TEST_F(KubeconfigTest, TokenTokenFileAndExplicitContext) {
  Write("token", "  file-token\n");
  const std::string path = Write("config", R"(
current-context: a
clusters:
- {name: c, cluster: {server: https://h:1, insecure-skip-tls-verify: true}}
contexts:
- {name: a, context: {cluster: c, user: inline}}
- {name: b, context: {cluster: c, user: file}}
users:
- {name: inline, user: {token: inline-token}}
- {name: file, user: {tokenFile: token}}
)");
  absl::StatusOr<RestConfig> a = LoadKubeconfig(path);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->bearer_token, "inline-token");
  EXPECT_TRUE(a->insecure_skip_tls_verify);
  absl::StatusOr<RestConfig> b = LoadKubeconfig(path, "b");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->bearer_token, "file-token");
  EXPECT_EQ(b->token_file, (dir_ / "token").string());
}

TEST_F(KubeconfigTest, ErrorsNameTheField) {
  const std::string path = Write("config", R"(
current-context: a
clusters:
- {name: c, cluster: {server: https://h:1}}
contexts:
- {name: a, context: {cluster: c, user: u}}
- {name: nocluster, context: {cluster: gone, user: u}}
- {name: nouser, context: {cluster: c, user: gone}}
- {name: exec, context: {cluster: c, user: e}}
users:
- {name: u, user: {client-certificate-data: Q0VSVA==, client-key-data: "not base64!"}}
- {name: e, user: {exec: {command: foo}}}
)");
  EXPECT_EQ(LoadKubeconfig(path).status().ToString(),
            "INVALID_ARGUMENT: kubeconfig " + path +
                ": users[0].user.client-key-data: invalid base64");
  EXPECT_EQ(
      LoadKubeconfig(path, "foo").status().ToString(),
      "INVALID_ARGUMENT: kubeconfig " + path + ": context \"foo\" not found");
  EXPECT_THAT(
      LoadKubeconfig(path, "nocluster").status().ToString(),
      HasSubstr("contexts[1].context.cluster: cluster \"gone\" not found"));
  EXPECT_THAT(LoadKubeconfig(path, "nouser").status().ToString(),
              HasSubstr("contexts[2].context.user: user \"gone\" not found"));
  EXPECT_THAT(LoadKubeconfig(path, "exec").status().ToString(),
              HasSubstr("users[1].user.exec: not supported"));
  EXPECT_THAT(LoadKubeconfig((dir_ / "missing").string()).status().ToString(),
              HasSubstr("cannot read"));
  EXPECT_THAT(LoadKubeconfig(Write("bad", "a: [")).status().ToString(),
              HasSubstr("kubeconfig "));
}

TEST_F(KubeconfigTest, MissingRelativeFileNamesFieldAndPath) {
  const std::string path = Write("config", R"(
current-context: a
clusters:
- {name: c, cluster: {server: https://h:1, certificate-authority: nope.crt}}
contexts:
- {name: a, context: {cluster: c}}
)");
  const std::string msg(LoadKubeconfig(path).status().ToString());
  EXPECT_THAT(msg, HasSubstr("clusters[0].cluster.certificate-authority"));
  EXPECT_THAT(msg, HasSubstr((dir_ / "nope.crt").string()));
}

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST_F(KubeconfigTest, InClusterConfig) {
  Write("token", "sa-token\n");
  Write("ca.crt", "SA CA");
  {
    ScopedEnv host("KUBERNETES_SERVICE_HOST", "10.0.0.1");
    ScopedEnv port("KUBERNETES_SERVICE_PORT", "443");
    absl::StatusOr<RestConfig> c = InClusterConfig(dir_.string());
    ASSERT_TRUE(c.ok()) << c.status();
    EXPECT_EQ(c->server, "https://10.0.0.1:443");
    EXPECT_EQ(c->bearer_token, "sa-token");
    EXPECT_EQ(c->token_file, (dir_ / "token").string());
    EXPECT_EQ(c->ca_pem, "SA CA");
    EXPECT_THAT(InClusterConfig((dir_ / "certs").string()).status().ToString(),
                HasSubstr("service account token"));
  }
  {
    ScopedEnv host("KUBERNETES_SERVICE_HOST", "fd00::1");
    ScopedEnv port("KUBERNETES_SERVICE_PORT", "6443");
    EXPECT_EQ(InClusterConfig(dir_.string())->server, "https://[fd00::1]:6443");
  }
  {
    ScopedEnv host("KUBERNETES_SERVICE_HOST", nullptr);
    ScopedEnv port("KUBERNETES_SERVICE_PORT", "6443");
    EXPECT_THAT(InClusterConfig(dir_.string()).status().ToString(),
                HasSubstr("KUBERNETES_SERVICE_HOST"));
    // Precedence: the flag wins over clientConnection.kubeconfig; with
    // neither, in-cluster, whose error says so.
    const std::string flag = Write("flag", R"(
current-context: a
clusters: [{name: c, cluster: {server: https://flag:1}}]
contexts: [{name: a, context: {cluster: c}}]
)");
    const std::string file = Write("file", R"(
current-context: a
clusters: [{name: c, cluster: {server: https://file:1}}]
contexts: [{name: a, context: {cluster: c}}]
)");
    EXPECT_EQ(ResolveConfig(flag, file)->server, "https://flag:1");
    EXPECT_EQ(ResolveConfig("", file)->server, "https://file:1");
    EXPECT_THAT(ResolveConfig("", "").status().ToString(),
                HasSubstr("no --kubeconfig"));
  }
}

TEST(HttpErrorTest, CarriesTheStatus) {
  absl::Status st = HttpError(410, "gone\n");
  EXPECT_EQ(st.code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(std::string(st.message()), "HTTP 410: gone");
  EXPECT_EQ(HttpStatusOf(st), 410);
  EXPECT_EQ(HttpStatusOf(absl::UnavailableError("x")), 0);
  EXPECT_EQ(QueryEscape("a=b,c d/é"), "a%3Db%2Cc%20d%2F%C3%A9");
}

}  // namespace
}  // namespace kscore::kube
