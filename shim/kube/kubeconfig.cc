// Where a RestConfig comes from: a kubeconfig file or the pod's service
// account (LoadKubeconfig, InClusterConfig, ResolveConfig of client.h).

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "shim/kube/client.h"
#include "yaml-cpp/yaml.h"

namespace kscore::kube {
namespace {

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(
        absl::StrCat("cannot read ", path, ": ", std::strerror(errno)));
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The index of the entry of a kubeconfig list (contexts, clusters, users)
// with this name, or -1.
int FindNamed(const YAML::Node& list, const std::string& name) {
  if (!list.IsSequence()) return -1;
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (list[i]["name"] && list[i]["name"].as<std::string>() == name) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

// Parses one kubeconfig; errors are prefixed by the caller with the path.
class KubeconfigParser {
 public:
  explicit KubeconfigParser(std::string path)
      : path_(std::move(path)),
        dir_(std::filesystem::path(path_).parent_path()) {}

  absl::StatusOr<RestConfig> Parse(const std::string& context_name) {
    KSCORE_ASSIGN_OR_RETURN(std::string text, ReadFile(path_));
    const YAML::Node root = YAML::Load(text);
    if (!root.IsMap()) return Error("", "not a YAML mapping");

    std::string ctx_name = context_name;
    if (ctx_name.empty() && root["current-context"]) {
      ctx_name = root["current-context"].as<std::string>();
    }
    if (ctx_name.empty()) {
      return Error("current-context", "not set and no context given");
    }
    const int ci = FindNamed(root["contexts"], ctx_name);
    if (ci < 0) {
      return Error("", absl::StrCat("context \"", ctx_name, "\" not found"));
    }
    const YAML::Node ctx = root["contexts"][ci];
    const std::string cpath = absl::StrCat("contexts[", ci, "].context");
    const std::string cluster_name = Str(ctx["context"], "cluster");
    const std::string user_name = Str(ctx["context"], "user");

    RestConfig config;
    const int ki = FindNamed(root["clusters"], cluster_name);
    if (ki < 0) {
      return Error(cpath + ".cluster",
                   absl::StrCat("cluster \"", cluster_name, "\" not found"));
    }
    KSCORE_RETURN_IF_ERROR(
        ParseCluster(root["clusters"][ki]["cluster"],
                     absl::StrCat("clusters[", ki, "].cluster"), &config));

    if (!user_name.empty()) {
      const int ui = FindNamed(root["users"], user_name);
      if (ui < 0) {
        return Error(cpath + ".user",
                     absl::StrCat("user \"", user_name, "\" not found"));
      }
      KSCORE_RETURN_IF_ERROR(ParseUser(root["users"][ui]["user"],
                                       absl::StrCat("users[", ui, "].user"),
                                       &config));
    }
    return config;
  }

 private:
  absl::Status ParseCluster(const YAML::Node& c, const std::string& at,
                            RestConfig* config) {
    if (!c || !c.IsMap()) return Error(at, "missing");
    config->server = Str(c, "server");
    if (config->server.empty()) return Error(at + ".server", "missing");
    for (const char* unsupported : {"proxy-url", "tls-server-name"}) {
      if (c[unsupported]) return Error(at + "." + unsupported, "not supported");
    }
    config->insecure_skip_tls_verify = c["insecure-skip-tls-verify"] &&
                                       c["insecure-skip-tls-verify"].as<bool>();
    return DataOrFile(c, at, "certificate-authority", &config->ca_pem);
  }

  absl::Status ParseUser(const YAML::Node& u, const std::string& at,
                         RestConfig* config) {
    if (!u) return absl::OkStatus();  // anonymous
    for (const char* unsupported :
         {"exec", "auth-provider", "username", "password", "as"}) {
      if (u[unsupported]) return Error(at + "." + unsupported, "not supported");
    }
    KSCORE_RETURN_IF_ERROR(
        DataOrFile(u, at, "client-certificate", &config->client_cert_pem));
    KSCORE_RETURN_IF_ERROR(
        DataOrFile(u, at, "client-key", &config->client_key_pem));
    if (config->client_cert_pem.empty() != config->client_key_pem.empty()) {
      return Error(at,
                   "client-certificate and client-key must be set together");
    }
    config->bearer_token = Str(u, "token");
    if (u["tokenFile"]) {
      config->token_file = Resolve(Str(u, "tokenFile"));
      if (config->bearer_token.empty()) {
        absl::StatusOr<std::string> token = ReadFile(config->token_file);
        if (!token.ok())
          return Error(at + ".tokenFile", token.status().message());
        config->bearer_token = std::string(absl::StripAsciiWhitespace(*token));
      }
    }
    return absl::OkStatus();
  }

  // `<field>-data` (base64) or `<field>` (a file, relative to the kubeconfig).
  absl::Status DataOrFile(const YAML::Node& n, const std::string& at,
                          const std::string& field, std::string* out) {
    const std::string data_field = field + "-data";
    if (n[data_field]) {
      if (!absl::Base64Unescape(Str(n, data_field), out) || out->empty()) {
        return Error(at + "." + data_field, "invalid base64");
      }
      return absl::OkStatus();
    }
    if (n[field]) {
      absl::StatusOr<std::string> content = ReadFile(Resolve(Str(n, field)));
      if (!content.ok())
        return Error(at + "." + field, content.status().message());
      *out = *std::move(content);
    }
    return absl::OkStatus();
  }

  std::string Resolve(const std::string& file) const {
    std::filesystem::path p(file);
    return p.is_absolute() ? file : (dir_ / p).string();
  }

  static std::string Str(const YAML::Node& n, const char* key) {
    return n && n[key] ? n[key].as<std::string>() : "";
  }
  static std::string Str(const YAML::Node& n, const std::string& key) {
    return Str(n, key.c_str());
  }

  absl::Status Error(const std::string& field, absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat(
        "kubeconfig ", path_, ": ", field, field.empty() ? "" : ": ", what));
  }

  const std::string path_;
  const std::filesystem::path dir_;
};

}  // namespace

absl::StatusOr<RestConfig> LoadKubeconfig(const std::string& path,
                                          const std::string& context) {
  try {
    return KubeconfigParser(path).Parse(context);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("kubeconfig ", path, ": ", e.what()));
  }
}

absl::StatusOr<RestConfig> InClusterConfig(const std::string& sa_dir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (host == nullptr || port == nullptr || *host == '\0' || *port == '\0') {
    return absl::FailedPreconditionError(
        "in-cluster config: KUBERNETES_SERVICE_HOST and "
        "KUBERNETES_SERVICE_PORT must be set (not running in a pod?)");
  }
  const std::string h = host;
  RestConfig config;
  config.server = h.find(':') == std::string::npos
                      ? absl::StrCat("https://", h, ":", port)
                      : absl::StrCat("https://[", h, "]:", port);
  config.token_file = sa_dir + "/token";
  absl::StatusOr<std::string> token = ReadFile(config.token_file);
  if (!token.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("in-cluster config: service account token: ",
                     token.status().message()));
  }
  config.bearer_token = std::string(absl::StripAsciiWhitespace(*token));
  absl::StatusOr<std::string> ca = ReadFile(sa_dir + "/ca.crt");
  if (!ca.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "in-cluster config: service account CA: ", ca.status().message()));
  }
  config.ca_pem = *std::move(ca);
  return config;
}

absl::StatusOr<RestConfig> ResolveConfig(const std::string& flag_kubeconfig,
                                         const std::string& config_kubeconfig,
                                         const std::string& sa_dir) {
  if (!flag_kubeconfig.empty()) return LoadKubeconfig(flag_kubeconfig);
  if (!config_kubeconfig.empty()) return LoadKubeconfig(config_kubeconfig);
  absl::StatusOr<RestConfig> config = InClusterConfig(sa_dir);
  if (!config.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("no --kubeconfig, no clientConnection.kubeconfig, and ",
                     config.status().message()));
  }
  return config;
}

}  // namespace kscore::kube
