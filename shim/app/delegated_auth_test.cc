#include "shim/app/delegated_auth.h"

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace kscore::app {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;

// Answers TokenReviews and SubjectAccessReviews from the test's tables, as
// the API server's JSON; records every review it gets.
class ReviewClient : public kube::Client {
 public:
  // token -> user (username, groups); absent: not authenticated.
  std::map<std::string, Json> users;
  // "user path" pairs allowed; every other review answers not allowed.
  std::set<std::string> allowed;
  long fail_status = 0;  // non-zero: every review answers this status
  std::vector<Json> reviews;

  absl::StatusOr<kube::Response> Do(absl::string_view method,
                                    absl::string_view path,
                                    absl::string_view body,
                                    absl::string_view) override {
    EXPECT_EQ(method, "POST");
    Json review = Json::parse(body);
    reviews.push_back(review);
    if (fail_status != 0) return kube::Response{fail_status, "{}"};
    Json answer = review;
    if (path == "/apis/authentication.k8s.io/v1/tokenreviews") {
      EXPECT_EQ(review["kind"], "TokenReview");
      auto it = users.find(review["spec"]["token"].get<std::string>());
      if (it == users.end()) {
        answer["status"] = {{"authenticated", false},
                            {"error", "invalid bearer token"}};
      } else {
        answer["status"] = {{"authenticated", true}, {"user", it->second}};
      }
    } else if (path == "/apis/authorization.k8s.io/v1/subjectaccessreviews") {
      EXPECT_EQ(review["kind"], "SubjectAccessReview");
      const Json& spec = review["spec"];
      const std::string who =
          spec["user"].get<std::string>() + " " +
          spec["nonResourceAttributes"]["path"].get<std::string>();
      answer["status"] = {{"allowed", allowed.count(who) > 0}};
    } else {
      ADD_FAILURE() << "unexpected path " << path;
      return kube::Response{404, "{}"};
    }
    return kube::Response{201, answer.dump()};
  }
  absl::Status Stream(absl::string_view,
                      const std::function<bool(absl::string_view)>&,
                      const std::atomic<bool>*) override {
    return absl::UnimplementedError("no watches here");
  }
  int Count(const char* kind) const {
    int n = 0;
    for (const Json& r : reviews) n += r["kind"] == kind;
    return n;
  }
};

constexpr char kSa[] = "system:serviceaccount:monitoring:prometheus";

class DelegatedAuthTest : public ::testing::Test {
 protected:
  DelegatedAuthTest() {
    client_.users["good"] = {
        {"username", kSa},
        {"uid", "u-1"},
        {"groups", {"system:serviceaccounts", "system:authenticated"}},
        {"extra", {{"authentication.kubernetes.io/pod-name", {"p-1"}}}}};
    client_.users["admin"] = {
        {"username", "kscore-admin"},
        {"groups", {"system:masters", "system:authenticated"}}};
  }
  DelegatedAuth Make(DelegatedAuth::Options o = {}) {
    auto paths = PathAllowList::Parse({"/healthz", "/readyz", "/livez"});
    EXPECT_TRUE(paths.ok());
    o.always_allow_paths = *paths;
    o.now = [this] { return now_; };
    o.on_review = [this](bool authn, const std::string& code) {
      codes_.push_back((authn ? "authn " : "authz ") + code);
    };
    return DelegatedAuth(&client_, &client_, std::move(o));
  }
  ReviewClient client_;
  std::vector<std::string> codes_;
  absl::Time now_ = absl::FromUnixSeconds(1700000000);
};

TEST_F(DelegatedAuthTest, ProbePathsNeedNoTokenAndNoApiCall) {
  DelegatedAuth auth = Make();
  for (const char* p : {"/healthz", "/readyz", "/livez"}) {
    EXPECT_EQ(auth.Check(p, "get", ""), std::nullopt) << p;
    EXPECT_EQ(auth.Check(p, "get", "Bearer nonsense"), std::nullopt) << p;
  }
  EXPECT_TRUE(client_.reviews.empty());
}

// No bearer token: system:anonymous, no TokenReview, RBAC's answer.
TEST_F(DelegatedAuthTest, NoBearerTokenIsAnonymousAndRbacDecides) {
  DelegatedAuth auth = Make();
  for (const char* header : {"", "Basic dXNlcjpwYXNz", "Bearer", "good"}) {
    std::optional<HttpReply> r = auth.Check("/metrics", "get", header);
    ASSERT_TRUE(r.has_value()) << header;
    EXPECT_EQ(r->code, 403);
    EXPECT_THAT(r->body,
                ::testing::HasSubstr(R"(forbidden: User \"system:anonymous\" )"
                                     R"(cannot get path \"/metrics\")"));
  }
  EXPECT_EQ(client_.Count("TokenReview"), 0);
  ASSERT_EQ(client_.Count("SubjectAccessReview"), 1);  // then cached
  EXPECT_EQ(client_.reviews[0]["spec"]["groups"],
            Json::array({"system:unauthenticated"}));
  client_.allowed.insert("system:anonymous /debug/kscore/explain");
  EXPECT_EQ(auth.Check("/debug/kscore/explain", "get", ""), std::nullopt);
}

TEST_F(DelegatedAuthTest, UnknownTokenIs401AndTheAnswerIsCached10s) {
  DelegatedAuth auth = Make();
  std::optional<HttpReply> r = auth.Check("/metrics", "get", "Bearer bad");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->code, 401);
  ASSERT_EQ(client_.reviews.size(), 1u);
  EXPECT_EQ(client_.reviews[0]["spec"]["token"], "bad");
  now_ += absl::Seconds(9);
  EXPECT_EQ(auth.Check("/metrics", "get", "bearer bad")->code, 401);
  EXPECT_EQ(client_.Count("TokenReview"), 1);
  now_ += absl::Seconds(2);
  EXPECT_EQ(auth.Check("/metrics", "get", "Bearer bad")->code, 401);
  EXPECT_EQ(client_.Count("TokenReview"), 2);
  EXPECT_EQ(client_.Count("SubjectAccessReview"), 0);
}

TEST_F(DelegatedAuthTest, DeniedIs403InTheApiServersWordsAndCached10s) {
  DelegatedAuth auth = Make();
  std::optional<HttpReply> r = auth.Check("/metrics", "get", "Bearer good");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->code, 403);
  EXPECT_EQ(
      r->body,
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
      R"("message":"forbidden: User \"system:serviceaccount:monitoring:)"
      R"(prometheus\" cannot get path \"/metrics\"","reason":"Forbidden",)"
      R"("details":{},"code":403})"
      "\n");
  // The review asks about the authenticated user, path and verb.
  ASSERT_EQ(client_.Count("SubjectAccessReview"), 1);
  const Json& spec = client_.reviews.back()["spec"];
  EXPECT_EQ(spec["user"], kSa);
  EXPECT_EQ(spec["uid"], "u-1");
  EXPECT_EQ(spec["groups"],
            Json({"system:serviceaccounts", "system:authenticated"}));
  EXPECT_EQ(spec["extra"]["authentication.kubernetes.io/pod-name"],
            Json({"p-1"}));
  EXPECT_EQ(spec["nonResourceAttributes"],
            Json({{"path", "/metrics"}, {"verb", "get"}}));

  // RBAC grants it now; the denial stands until its 10 s are over.
  client_.allowed.insert(std::string(kSa) + " /metrics");
  now_ += absl::Seconds(5);
  EXPECT_EQ(auth.Check("/metrics", "get", "Bearer good")->code, 403);
  EXPECT_EQ(client_.Count("SubjectAccessReview"), 1);
  now_ += absl::Seconds(6);
  EXPECT_EQ(auth.Check("/metrics", "get", "Bearer good"), std::nullopt);
  EXPECT_EQ(client_.Count("SubjectAccessReview"), 2);
}

TEST_F(DelegatedAuthTest, AllowedScrapesCostOneReviewEach10s) {
  client_.allowed.insert(std::string(kSa) + " /metrics");
  DelegatedAuth auth = Make();
  // A scrape every 2 s for 30 s.
  for (int i = 0; i < 15; ++i) {
    EXPECT_EQ(auth.Check("/metrics", "get", "Bearer good"), std::nullopt);
    now_ += absl::Seconds(2);
  }
  EXPECT_EQ(client_.Count("TokenReview"), 3);
  EXPECT_EQ(client_.Count("SubjectAccessReview"), 3);
  EXPECT_EQ(auth.token_reviews(), 3);
  EXPECT_EQ(auth.access_reviews(), 3);
  EXPECT_EQ(codes_,
            (std::vector<std::string>{"authn 201", "authz 201", "authn 201",
                                      "authz 201", "authn 201", "authz 201"}));
  // Another path is another question.
  EXPECT_EQ(auth.Check("/configz", "get", "Bearer good")->code, 403);
  EXPECT_EQ(client_.Count("SubjectAccessReview"), 4);
}

TEST_F(DelegatedAuthTest, SystemMastersSkipTheAccessReview) {
  DelegatedAuth auth = Make();
  EXPECT_EQ(auth.Check("/configz", "get", "Bearer admin"), std::nullopt);
  EXPECT_EQ(client_.Count("TokenReview"), 1);
  EXPECT_EQ(client_.Count("SubjectAccessReview"), 0);
}

TEST_F(DelegatedAuthTest, ReviewErrorsRefuseAndAreNotCached) {
  DelegatedAuth auth = Make();
  client_.fail_status = 503;
  EXPECT_EQ(auth.Check("/metrics", "get", "Bearer good")->code, 401);
  EXPECT_EQ(codes_, std::vector<std::string>{"authn 503"});
  client_.fail_status = 0;
  // Retried at once: the outage is not remembered as a refusal.
  client_.allowed.insert(std::string(kSa) + " /metrics");
  EXPECT_EQ(auth.Check("/metrics", "get", "Bearer good"), std::nullopt);
  EXPECT_EQ(client_.Count("TokenReview"), 2);
}

TEST_F(DelegatedAuthTest, FailingAccessReviewIs500) {
  DelegatedAuth auth = Make();
  // Authenticated and cached; then the authorizer fails: a 500, as
  // apiserver's.
  ASSERT_EQ(auth.Check("/metrics", "get", "Bearer good")->code, 403);
  client_.fail_status = 500;
  std::optional<HttpReply> r = auth.Check("/configz", "get", "Bearer good");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->code, 500);
  EXPECT_THAT(r->body, HasSubstr("Internal Server Error: \"/configz\""));
}

TEST_F(DelegatedAuthTest, TheCachesStayBounded) {
  DelegatedAuth::Options o;
  o.max_cache_entries = 2;
  DelegatedAuth auth = Make(o);
  for (const char* t : {"Bearer a", "Bearer b", "Bearer a", "Bearer b"}) {
    auth.Check("/metrics", "get", t);
  }
  EXPECT_EQ(client_.Count("TokenReview"), 2);  // both cached
  auth.Check("/metrics", "get", "Bearer c");   // full: starts over
  auth.Check("/metrics", "get", "Bearer a");
  EXPECT_EQ(client_.Count("TokenReview"), 4);
}

TEST(PathAllowListTest, ExactOrTrailingStarLeadingSlashOptional) {
  auto list = PathAllowList::Parse({"/healthz", "readyz", "/debug/*", "/"});
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_TRUE(list->Allows("/healthz"));
  EXPECT_TRUE(list->Allows("/readyz"));
  EXPECT_TRUE(list->Allows("/debug/pprof"));
  EXPECT_TRUE(list->Allows("/"));
  EXPECT_FALSE(list->Allows("/healthz/etcd"));
  EXPECT_FALSE(list->Allows("/metrics"));
  EXPECT_FALSE(list->Allows("/debug"));

  auto empty = PathAllowList::Parse({});
  ASSERT_TRUE(empty.ok());
  EXPECT_FALSE(empty->Allows("/healthz"));

  auto bad = PathAllowList::Parse({"/a*b"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "--authorization-always-allow-paths: only trailing * allowed in "
            "\"/a*b\"");
}

}  // namespace
}  // namespace kscore::app
