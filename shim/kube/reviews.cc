#include "shim/kube/reviews.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "shim/kube/json_parse.h"

namespace kscore::kube {
namespace {

using Json = nlohmann::json;

// The answer's status object, or an error quoting the start of the body.
absl::StatusOr<Json> StatusOf(absl::string_view body, absl::string_view what) {
  absl::StatusOr<Json> parsed = ParseJson(body);
  if (parsed.ok() && parsed->is_object()) {
    auto it = parsed->find("status");
    if (it != parsed->end() && it->is_object()) return std::move(*it);
  }
  return absl::InternalError(
      absl::StrCat(what, ": no status in the answer: ", body.substr(0, 200)));
}

std::string StringField(const Json& j, const char* name) {
  auto it = j.find(name);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

// A boolean field: false when absent or null, nullopt when of another type
// (an answer no API server gives; the caller reads it as the safe side).
std::optional<bool> BoolField(const Json& j, const char* name) {
  auto it = j.find(name);
  if (it == j.end() || it->is_null()) return false;
  if (!it->is_boolean()) return std::nullopt;
  return it->get<bool>();
}

ReviewedUser UserOf(const Json& u) {
  ReviewedUser user;
  user.name = StringField(u, "username");
  user.uid = StringField(u, "uid");
  if (auto g = u.find("groups"); g != u.end() && g->is_array()) {
    for (const Json& x : *g) {
      if (x.is_string()) user.groups.push_back(x.get<std::string>());
    }
  }
  if (auto e = u.find("extra"); e != u.end() && e->is_object()) {
    user.extra_json = e->dump();
  }
  return user;
}

}  // namespace

absl::StatusOr<TokenReviewStatus> ParseTokenReviewAnswer(
    absl::string_view body, absl::string_view what) {
  KSCORE_ASSIGN_OR_RETURN(Json status, StatusOf(body, what));
  TokenReviewStatus out;
  out.authenticated = BoolField(status, "authenticated").value_or(false);
  out.error = StringField(status, "error");
  if (auto u = status.find("user");
      out.authenticated && u != status.end() && u->is_object()) {
    out.user = UserOf(*u);
  }
  return out;
}

absl::StatusOr<AccessReviewStatus> ParseAccessReviewAnswer(
    absl::string_view body, absl::string_view what) {
  KSCORE_ASSIGN_OR_RETURN(Json status, StatusOf(body, what));
  AccessReviewStatus out;
  out.allowed = BoolField(status, "allowed").value_or(false) &&
                BoolField(status, "denied") == false;
  out.reason = StringField(status, "reason");
  out.evaluation_error = StringField(status, "evaluationError");
  return out;
}

}  // namespace kscore::kube
