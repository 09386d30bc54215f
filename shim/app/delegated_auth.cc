#include "shim/app/delegated_auth.h"

#include <openssl/evp.h>

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "shim/kube/reviews.h"
#include "spdlog/spdlog.h"

namespace kscore::app {
namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

constexpr char kTokenReviews[] = "/apis/authentication.k8s.io/v1/tokenreviews";
constexpr char kAccessReviews[] =
    "/apis/authorization.k8s.io/v1/subjectaccessreviews";

// An API server Status object, in the API server's field order.
HttpReply StatusReply(int code, absl::string_view reason,
                      const std::string& message, bool details) {
  OrderedJson j;
  j["kind"] = "Status";
  j["apiVersion"] = "v1";
  j["metadata"] = Json::object();
  j["status"] = "Failure";
  j["message"] = message;
  j["reason"] = reason;
  if (details) j["details"] = Json::object();
  j["code"] = code;
  return JsonReply(code, j.dump() + "\n");
}

// apiserver's filters.Unauthorized.
HttpReply Unauthorized() {
  return StatusReply(401, "Unauthorized", "Unauthorized", false);
}

// The bearer token of an Authorization header, "" when there is none (as
// apiserver's bearertoken authenticator reads it).
std::string BearerToken(absl::string_view authorization) {
  authorization = absl::StripAsciiWhitespace(authorization);
  std::vector<absl::string_view> parts =
      absl::StrSplit(authorization, absl::MaxSplits(' ', 2));
  if (parts.size() < 2 || !absl::EqualsIgnoreCase(parts[0], "bearer")) {
    return "";
  }
  return std::string(parts[1]);
}

std::string Sha256(absl::string_view s) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(s.data(), s.size(), md, &n, EVP_sha256(), nullptr);
  return std::string(reinterpret_cast<const char*>(md), n);
}

// POSTs a review and returns the answer's body; `code` gets the answer's
// HTTP status, or "<error>".
absl::StatusOr<std::string> PostReview(kube::Client* client, const char* path,
                                       const Json& review,
                                       absl::Duration timeout,
                                       std::string* code) {
  absl::StatusOr<kube::Response> r = client->DoWithTimeout(
      "POST", path, review.dump(), "application/json", timeout);
  *code = r.ok() ? absl::StrCat(r->status) : "<error>";
  if (!r.ok()) return r.status();
  if (r->status != 200 && r->status != 201) {
    return kube::HttpError(r->status, r->body);
  }
  return std::move(r->body);
}

}  // namespace

absl::StatusOr<PathAllowList> PathAllowList::Parse(
    const std::vector<std::string>& paths) {
  PathAllowList list;
  for (const std::string& given : paths) {
    absl::string_view p = given;
    absl::ConsumePrefix(&p, "/");
    if (!p.empty() && absl::StrContains(p.substr(0, p.size() - 1), '*')) {
      return absl::InvalidArgumentError(
          absl::StrCat("--authorization-always-allow-paths: only trailing * "
                       "allowed in \"",
                       given, "\""));
    }
    if (absl::ConsumeSuffix(&p, "*")) {
      list.prefixes_.emplace_back(p);
    } else {
      list.exact_.emplace_back(p);
    }
  }
  return list;
}

bool PathAllowList::Allows(absl::string_view path) const {
  absl::ConsumePrefix(&path, "/");
  return std::find(exact_.begin(), exact_.end(), path) != exact_.end() ||
         std::any_of(
             prefixes_.begin(), prefixes_.end(),
             [&](const std::string& p) { return absl::StartsWith(path, p); });
}

DelegatedAuth::DelegatedAuth(kube::Client* authn, kube::Client* authz,
                             Options options)
    : authn_(authn), authz_(authz), o_(std::move(options)) {}

template <typename V>
void DelegatedAuth::Remember(absl::flat_hash_map<std::string, V>& cache,
                             const std::string& key, V value) {
  if (cache.size() >= o_.max_cache_entries) {
    const absl::Time now = o_.now();
    absl::erase_if(cache,
                   [&](const auto& kv) { return kv.second.expires <= now; });
    // Still full: a burst of distinct tokens; start over rather than grow.
    if (cache.size() >= o_.max_cache_entries) cache.clear();
  }
  cache[key] = std::move(value);
}

absl::StatusOr<DelegatedAuth::Authn> DelegatedAuth::Authenticate(
    absl::string_view token) {
  const std::string key = Sha256(token);
  {
    absl::MutexLock lock(&mu_);
    auto it = authn_cache_.find(key);
    if (it != authn_cache_.end() && it->second.expires > o_.now()) {
      return it->second;
    }
  }
  Json review = {{"apiVersion", "authentication.k8s.io/v1"},
                 {"kind", "TokenReview"},
                 {"spec", {{"token", std::string(token)}}}};
  ++token_reviews_;
  std::string code;
  absl::StatusOr<std::string> body =
      PostReview(authn_, kTokenReviews, review, o_.timeout, &code);
  if (o_.on_review) o_.on_review(true, code);
  if (!body.ok()) return body.status();
  KSCORE_ASSIGN_OR_RETURN(kube::TokenReviewStatus status,
                          kube::ParseTokenReviewAnswer(
                              *body, absl::StrCat("POST ", kTokenReviews)));
  Authn a;
  a.authenticated = status.authenticated;
  a.user = std::move(status.user);
  if (!a.authenticated) {
    spdlog::debug("status server: token not authenticated: {}", status.error);
  }
  a.expires = o_.now() + o_.authn_ttl;
  absl::MutexLock lock(&mu_);
  Remember(authn_cache_, key, a);
  return a;
}

absl::StatusOr<DelegatedAuth::Authz> DelegatedAuth::Authorize(
    const User& user, absl::string_view path, absl::string_view verb) {
  Json spec = {{"user", user.name},
               {"groups", user.groups},
               {"nonResourceAttributes",
                {{"path", std::string(path)}, {"verb", std::string(verb)}}}};
  if (!user.uid.empty()) spec["uid"] = user.uid;
  if (!user.extra_json.empty()) spec["extra"] = Json::parse(user.extra_json);
  const std::string key = spec.dump();  // keys sorted: one text per spec
  {
    absl::MutexLock lock(&mu_);
    auto it = authz_cache_.find(key);
    if (it != authz_cache_.end() && it->second.expires > o_.now()) {
      return it->second;
    }
  }
  Json review = {{"apiVersion", "authorization.k8s.io/v1"},
                 {"kind", "SubjectAccessReview"},
                 {"spec", spec}};
  ++access_reviews_;
  std::string code;
  absl::StatusOr<std::string> body =
      PostReview(authz_, kAccessReviews, review, o_.timeout, &code);
  if (o_.on_review) o_.on_review(false, code);
  if (!body.ok()) return body.status();
  KSCORE_ASSIGN_OR_RETURN(kube::AccessReviewStatus status,
                          kube::ParseAccessReviewAnswer(
                              *body, absl::StrCat("POST ", kAccessReviews)));
  Authz z;
  z.allowed = status.allowed;
  z.reason = std::move(status.reason);
  if (!status.evaluation_error.empty()) {
    spdlog::debug("status server: SubjectAccessReview evaluation error: {}",
                  status.evaluation_error);
  }
  z.expires = o_.now() + (z.allowed ? o_.allow_ttl : o_.deny_ttl);
  absl::MutexLock lock(&mu_);
  Remember(authz_cache_, key, z);
  return z;
}

std::optional<HttpReply> DelegatedAuth::Check(absl::string_view path,
                                              absl::string_view verb,
                                              absl::string_view authorization) {
  if (o_.always_allow_paths.Allows(path)) return std::nullopt;
  const std::string token = BearerToken(authorization);
  User user;
  if (token.empty()) {
    // No bearer token: apiserver's anonymous authenticator, as
    // kube-scheduler's delegated authentication has it on; RBAC decides.
    user.name = "system:anonymous";
    user.groups = {"system:unauthenticated"};
  } else {
    absl::StatusOr<Authn> authn = Authenticate(token);
    if (!authn.ok()) {
      // As apiserver: an authenticator's error refuses the request.
      spdlog::warn("status server: TokenReview failed: {}",
                   std::string(authn.status().message()));
      return Unauthorized();
    }
    if (!authn->authenticated) return Unauthorized();
    user = authn->user;
  }
  for (const std::string& g : user.groups) {
    if (std::find(o_.always_allow_groups.begin(), o_.always_allow_groups.end(),
                  g) != o_.always_allow_groups.end()) {
      return std::nullopt;
    }
  }
  absl::StatusOr<Authz> authz = Authorize(user, path, verb);
  if (!authz.ok()) {
    spdlog::warn("status server: SubjectAccessReview failed: {}",
                 std::string(authz.status().message()));
    // apiserver's responsewriters.InternalError.
    HttpReply r;
    r.code = 500;
    r.content_type = "text/plain; charset=utf-8";
    r.headers = {{"X-Content-Type-Options", "nosniff"}};
    r.body = absl::StrCat("Internal Server Error: \"", path,
                          "\": ", authz.status().message(), "\n");
    return r;
  }
  if (authz->allowed) return std::nullopt;
  spdlog::debug("status server: {} {} denied to user {}", std::string(verb),
                std::string(path), user.name);
  // apiserver's responsewriters.Forbidden for a non-resource request.
  std::string message =
      absl::StrCat("forbidden: User \"", user.name, "\" cannot ", verb,
                   " path \"", path, "\"");
  if (!authz->reason.empty()) absl::StrAppend(&message, ": ", authz->reason);
  return StatusReply(403, "Forbidden", message, true);
}

}  // namespace kscore::app
