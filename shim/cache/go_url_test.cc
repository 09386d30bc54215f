// Go's url.Parse(raw).Path and strconv.Quote, as go1.26 answers (each
// expectation is Go's output for the input).
#include "shim/cache/go_url.h"

#include <string>

#include "gtest/gtest.h"

namespace kscore::cache::go_url {
namespace {

// The path, or the error's message.
std::string Parsed(const std::string& raw) {
  absl::StatusOr<std::string> p = ParsePath(raw);
  return p.ok() ? *p : "error: " + std::string(p.status().message());
}

TEST(GoUrlTest, Paths) {
  EXPECT_EQ(Parsed("aws://zone/vol-1"), "/vol-1");
  EXPECT_EQ(Parsed("aws://zone"), "");
  EXPECT_EQ(Parsed("aws:///a%2Fb"), "/a/b");
  EXPECT_EQ(Parsed("aws://zone/a b+c"), "/a b+c");
  EXPECT_EQ(Parsed("aws://zone/x?y=/z"), "/x");
  EXPECT_EQ(Parsed("aws://zone/x?"), "/x");
  EXPECT_EQ(Parsed("aws://zone/x#y/z"), "/x");
  EXPECT_EQ(Parsed("aws://u:p@zone:80/x"), "/x");
  EXPECT_EQ(Parsed("aws://a:1:2/x"), "/x");
  EXPECT_EQ(Parsed("aws://[::1]:80/x"), "/x");
  EXPECT_EQ(Parsed("aws://[fe80::1%25en0]/x"), "/x");
  EXPECT_EQ(Parsed("aws://zone%C3%A9/x"), "/x");
  EXPECT_EQ(Parsed("aws://zone/\xc3\xa9"), "/\xc3\xa9");
}

TEST(GoUrlTest, Errors) {
  EXPECT_EQ(Parsed("aws://zo ne/x"),
            "error: parse \"aws://zo ne/x\": invalid character \" \" in host "
            "name");
  EXPECT_EQ(Parsed("aws://zone/x\x01"),
            "error: parse \"aws://zone/x\\x01\": net/url: invalid control "
            "character in URL");
  EXPECT_EQ(Parsed("aws://zone/x#%zz"),
            "error: parse \"aws://zone/x#%zz\": invalid URL escape \"%zz\"");
  EXPECT_EQ(Parsed("aws://a b@zone/x"),
            "error: parse \"aws://a b@zone/x\": net/url: invalid userinfo");
  EXPECT_EQ(Parsed("aws://u%zz@zone/x"),
            "error: parse \"aws://u%zz@zone/x\": invalid URL escape \"%zz\"");
  EXPECT_EQ(Parsed("aws://zone:x/vol"),
            "error: parse \"aws://zone:x/vol\": invalid port \":x\" after "
            "host");
  EXPECT_EQ(Parsed("aws://[1.2.3.4]/x"),
            "error: parse \"aws://[1.2.3.4]/x\": invalid IP-literal");
  EXPECT_EQ(Parsed("aws://a[::1]/x"),
            "error: parse \"aws://a[::1]/x\": invalid IP-literal");
  EXPECT_EQ(Parsed("aws://[::1/x"),
            "error: parse \"aws://[::1/x\": missing ']' in host");
  EXPECT_EQ(Parsed("aws://zone%41/x"),
            "error: parse \"aws://zone%41/x\": invalid URL escape \"%41\"");
  EXPECT_EQ(Parsed("aws://zone/x%"),
            "error: parse \"aws://zone/x%\": invalid URL escape \"%\"");
  EXPECT_EQ(Parsed("aws://zone/x%4"),
            "error: parse \"aws://zone/x%4\": invalid URL escape \"%4\"");
  EXPECT_EQ(Parsed("aws://zone/x%4g#y"),
            "error: parse \"aws://zone/x%4g\": invalid URL escape \"%4g\"");
}

TEST(GoUrlTest, Quote) {
  EXPECT_EQ(Quote(""), "\"\"");
  EXPECT_EQ(Quote("a\"b\\c\n\t\x7f"), "\"a\\\"b\\\\c\\n\\t\\x7f\"");
  EXPECT_EQ(Quote("\xff\xc3"), "\"\\xff\\xc3\"");
  EXPECT_EQ(Quote("\xc3\xa9\xc2\xa0\xe2\x80\x8b"),
            "\"\xc3\xa9\\u00a0\\u200b\"");
  EXPECT_EQ(Quote("\xf0\x9f\x98\x80\xf3\xa0\x80\x81"),
            "\"\xf0\x9f\x98\x80\\U000e0001\"");
  EXPECT_EQ(Quote("\xed\xa0\x80"), "\"\\xed\\xa0\\x80\"");  // a surrogate
}

}  // namespace
}  // namespace kscore::cache::go_url
