#include "shim/kube/reviews.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kscore::kube {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ReviewsTest, TokenReviewAnswer) {
  absl::StatusOr<TokenReviewStatus> s = ParseTokenReviewAnswer(
      R"({"kind":"TokenReview","status":{"authenticated":true,"user":{
          "username":"alice","uid":"u1","groups":["g1",7,"g2"],
          "extra":{"k":["v"]}}}})",
      "POST tokenreviews");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE(s->authenticated);
  EXPECT_EQ(s->user.name, "alice");
  EXPECT_EQ(s->user.uid, "u1");
  EXPECT_THAT(s->user.groups, ElementsAre("g1", "g2"));
  EXPECT_EQ(s->user.extra_json, R"({"k":["v"]})");
}

// Anything but a JSON true is not authenticated, and a user that is not
// authenticated carries no name.
TEST(ReviewsTest, TokenReviewReadsTheSafeSide) {
  for (const std::string body : {
           R"({"status":{"authenticated":"true","user":{"username":"a"}}})",
           R"({"status":{"authenticated":1,"user":{"username":"a"}}})",
           R"({"status":{"authenticated":null,"user":{"username":"a"}}})",
           R"({"status":{"user":{"username":"a"},"error":"expired"}})",
       }) {
    absl::StatusOr<TokenReviewStatus> s = ParseTokenReviewAnswer(body, "x");
    ASSERT_TRUE(s.ok()) << body;
    EXPECT_FALSE(s->authenticated) << body;
    EXPECT_EQ(s->user.name, "") << body;
  }
}

TEST(ReviewsTest, AccessReviewAnswer) {
  struct Case {
    std::string status;
    bool allowed;
  };
  for (const Case& c : std::vector<Case>{
           {R"({"allowed":true})", true},
           {R"({"allowed":true,"denied":false})", true},
           {R"({"allowed":true,"denied":null})", true},
           {R"({"allowed":true,"denied":true})", false},
           {R"({"allowed":true,"denied":"no"})", false},
           {R"({"allowed":"yes"})", false},
           {R"({})", false},
       }) {
    absl::StatusOr<AccessReviewStatus> s = ParseAccessReviewAnswer(
        absl::StrCat(R"({"status":)", c.status, "}"), "x");
    ASSERT_TRUE(s.ok()) << c.status;
    EXPECT_EQ(s->allowed, c.allowed) << c.status;
  }
  absl::StatusOr<AccessReviewStatus> s = ParseAccessReviewAnswer(
      R"({"status":{"allowed":false,"reason":"no","evaluationError":"e"}})",
      "x");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->reason, "no");
  EXPECT_EQ(s->evaluation_error, "e");
}

// A body that is not a review with a status object is an error naming the
// call and quoting the body's start, whatever its depth.
TEST(ReviewsTest, AnswersWithoutStatusAreErrors) {
  for (const std::string& body :
       {std::string("not json"), std::string(R"({"status":"ok"})"),
        std::string("[]"), std::string(20000, '[')}) {
    absl::StatusOr<TokenReviewStatus> t =
        ParseTokenReviewAnswer(body, "POST /apis/x");
    ASSERT_FALSE(t.ok());
    EXPECT_THAT(t.status().message(),
                HasSubstr("POST /apis/x: no status in the answer: "));
    EXPECT_FALSE(ParseAccessReviewAnswer(body, "y").ok());
  }
}

}  // namespace
}  // namespace kscore::kube
