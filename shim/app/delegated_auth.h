#ifndef KSCORE_SHIM_APP_DELEGATED_AUTH_H_
#define KSCORE_SHIM_APP_DELEGATED_AUTH_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "shim/app/http.h"
#include "shim/kube/client.h"
#include "shim/kube/reviews.h"

namespace kscore::app {

// --authorization-always-allow-paths: each path matches exactly, or as a
// prefix when it ends in "*"; a leading "/" is optional (as apiserver's
// path authorizer).
class PathAllowList {
 public:
  // Errors name the flag and the path ("only trailing * allowed").
  static absl::StatusOr<PathAllowList> Parse(
      const std::vector<std::string>& paths);
  bool Allows(absl::string_view path) const;

 private:
  std::vector<std::string> exact_;
  std::vector<std::string> prefixes_;
};

// Who may read the status server's paths, decided as kube-scheduler's
// delegated authentication and authorization decide it: paths on the allow
// list are served to anyone; any other needs a bearer token that the API
// server's TokenReview (authentication.k8s.io/v1) authenticates and a
// SubjectAccessReview (authorization.k8s.io/v1, nonResourceAttributes path
// and verb) allows for that user, so an RBAC rule with nonResourceURLs
// grants it. Members of an always-allowed group (system:masters) skip the
// SubjectAccessReview. Answers are cached briefly (10 s each, as
// kube-scheduler), so a scrape every few seconds costs no API call each.
//
// A request without a bearer token is system:anonymous (group
// system:unauthenticated), as kube-scheduler's: RBAC decides, so it usually
// gets 403; a token the API server does not authenticate gets 401.
class DelegatedAuth {
 public:
  struct Options {
    PathAllowList always_allow_paths;
    std::vector<std::string> always_allow_groups = {"system:masters"};
    absl::Duration authn_ttl = absl::Seconds(10);  // either answer
    absl::Duration allow_ttl = absl::Seconds(10);
    absl::Duration deny_ttl = absl::Seconds(10);
    absl::Duration timeout = absl::Seconds(10);  // of one review
    size_t max_cache_entries = 4096;             // each cache
    std::function<absl::Time()> now = absl::Now;
    // Called after each review posted: `authn` (a TokenReview, else a
    // SubjectAccessReview) and the HTTP status of the answer, "<error>"
    // when there was none (kube-scheduler's
    // apiserver_delegated_auth{n,z}_request_total{code}).
    std::function<void(bool authn, const std::string& code)> on_review = {};
  };

  // `authn` posts TokenReviews, `authz` SubjectAccessReviews (they may be
  // the same client); both outlive this object.
  DelegatedAuth(kube::Client* authn, kube::Client* authz, Options options);

  // nullopt: serve the request. Else the refusal to send: 401 without a
  // token or with one the API server does not authenticate, 403 when the
  // SubjectAccessReview does not allow it, 500 when it fails; the bodies
  // are the API server's Status objects. `verb` is the lower-case HTTP
  // method; `authorization` the Authorization header ("" when none).
  std::optional<HttpReply> Check(absl::string_view path, absl::string_view verb,
                                 absl::string_view authorization);

  // Reviews posted so far.
  int64_t token_reviews() const { return token_reviews_.load(); }
  int64_t access_reviews() const { return access_reviews_.load(); }

 private:
  using User = kube::ReviewedUser;
  struct Authn {
    bool authenticated = false;
    User user = {};
    absl::Time expires = absl::InfinitePast();
  };
  struct Authz {
    bool allowed = false;
    std::string reason = {};
    absl::Time expires = absl::InfinitePast();
  };

  absl::StatusOr<Authn> Authenticate(absl::string_view token);
  absl::StatusOr<Authz> Authorize(const User& user, absl::string_view path,
                                  absl::string_view verb);
  template <typename V>
  void Remember(absl::flat_hash_map<std::string, V>& cache,
                const std::string& key, V value)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  kube::Client* authn_;
  kube::Client* authz_;
  Options o_;
  absl::Mutex mu_;
  // Keyed by the token's SHA-256, never the token itself.
  absl::flat_hash_map<std::string, Authn> authn_cache_ ABSL_GUARDED_BY(mu_);
  // Keyed by the SubjectAccessReview's spec.
  absl::flat_hash_map<std::string, Authz> authz_cache_ ABSL_GUARDED_BY(mu_);
  std::atomic<int64_t> token_reviews_{0};
  std::atomic<int64_t> access_reviews_{0};
};

}  // namespace kscore::app

#endif  // KSCORE_SHIM_APP_DELEGATED_AUTH_H_
