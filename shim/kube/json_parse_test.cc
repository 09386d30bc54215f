#include "shim/kube/json_parse.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kscore::kube {
namespace {

using ::testing::HasSubstr;

std::string Nested(int depth, const std::string& inner = "") {
  std::string s;
  for (int i = 0; i < depth; ++i) s += i % 2 == 0 ? "[" : "{\"k\":";
  s += inner.empty() ? "1" : inner;
  for (int i = depth; i-- > 0;) s += i % 2 == 0 ? "]" : "}";
  return s;
}

TEST(ParseJsonTest, DepthUpToTheBoundParsesAndDumps) {
  absl::StatusOr<nlohmann::json> j = ParseJson(Nested(kMaxJsonDepth));
  ASSERT_TRUE(j.ok()) << j.status();
  // What the shim does with a parsed value, recursively: copy and dump.
  const nlohmann::json copy = *j;
  EXPECT_EQ(copy.dump(), Nested(kMaxJsonDepth));
}

TEST(ParseJsonTest, DeeperIsAnError) {
  for (int depth : {kMaxJsonDepth + 1, 1000000}) {
    absl::StatusOr<nlohmann::json> j = ParseJson(Nested(depth));
    ASSERT_FALSE(j.ok()) << depth;
    EXPECT_TRUE(absl::IsInvalidArgument(j.status()));
    EXPECT_THAT(std::string(j.status().message()), HasSubstr("deeper than"));
  }
}

TEST(ParseJsonTest, BracketsInStringsDoNotNest) {
  const std::string brackets(kMaxJsonDepth + 5, '[');
  absl::StatusOr<nlohmann::json> j =
      ParseJson("{\"a\": \"" + brackets + "\\\"" + brackets + "\"}");
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_EQ((*j)["a"].get<std::string>().size(), 2 * brackets.size() + 1);
}

TEST(ParseJsonTest, NotJsonIsAnError) {
  for (const char* text : {"", "{", "{\"a\": }", "[1,]", "nope", "{} {}"}) {
    absl::StatusOr<nlohmann::json> j = ParseJson(text);
    ASSERT_FALSE(j.ok()) << text;
    EXPECT_THAT(std::string(j.status().message()), HasSubstr("not JSON"))
        << text;
  }
}

}  // namespace
}  // namespace kscore::kube
