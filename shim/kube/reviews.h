#ifndef KSCORE_SHIM_KUBE_REVIEWS_H_
#define KSCORE_SHIM_KUBE_REVIEWS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kscore::kube {

// The API server's answers to a TokenReview and a SubjectAccessReview, read
// from their bodies: what the status server's delegated authentication
// decides on. Any field of an unexpected type reads as the safe side
// (unauthenticated, not allowed); a body that is not a review with a status
// object is an error.

struct ReviewedUser {
  std::string name;
  std::string uid;
  std::vector<std::string> groups;
  std::string extra_json;  // status.user.extra as JSON ("" when none)
};

struct TokenReviewStatus {
  bool authenticated = false;
  ReviewedUser user;  // empty unless authenticated
  std::string error;  // status.error
};

struct AccessReviewStatus {
  bool allowed = false;  // allowed and not denied
  std::string reason;
  std::string evaluation_error;
};

// `what` names the review in errors ("POST /apis/...").
absl::StatusOr<TokenReviewStatus> ParseTokenReviewAnswer(
    absl::string_view body, absl::string_view what);
absl::StatusOr<AccessReviewStatus> ParseAccessReviewAnswer(
    absl::string_view body, absl::string_view what);

}  // namespace kscore::kube

#endif  // KSCORE_SHIM_KUBE_REVIEWS_H_
