#include "shim/app/debug_handlers.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace kscore::app {
namespace {

std::string Deep(int depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

// A body the what-if route refuses before it asks the scheduler (none here).
struct RefusedCase {
  const char* name;
  std::string body;
  std::string error;
};

TEST(WhatIfTest, MalformedBodyIs400NamingTheFault) {
  const RefusedCase cases[] = {
      {"not JSON", "{", "body: not JSON"},
      {"not an object", "[]", "body: not a JSON object (want a Pod as JSON)"},
      {"too deep", Deep(200000), "body: JSON nests arrays and objects deeper"},
      {"deep kind", R"({"kind": )" + Deep(200000) + "}",
       "body: JSON nests arrays and objects deeper"},
      {"kind not a string", R"({"kind": 1})", "kind: expected a string"},
      {"kind not Pod", R"({"kind": "Node"})", R"(kind: "Node" is not a Pod)"},
      {"containers a string", R"({"spec": {"containers": "nope"}})",
       "pod: spec.containers: expected an array"},
      {"metadata a string", R"({"metadata": "m"})",
       "metadata: expected an object"},
      {"generateName a number", R"({"metadata": {"generateName": 1}})",
       "pod: metadata.generateName: expected a string"},
      {"nodeName a number", R"({"spec": {"nodeName": 1}})",
       "pod: spec.nodeName: expected a string"},
      {"bound", R"({"spec": {"nodeName": "n1"}})",
       "spec.nodeName: set, so no scheduler places this pod"},
  };
  const Route route = DebugRoutes(nullptr).at("/debug/kscore/what-if");
  for (const RefusedCase& c : cases) {
    HttpRequest req;
    req.method = "POST";
    req.body = c.body;
    const HttpReply reply = route(req);
    EXPECT_EQ(reply.code, 400) << c.name << ": " << reply.body;
    const nlohmann::json j = nlohmann::json::parse(reply.body, nullptr, false);
    ASSERT_TRUE(j.is_object()) << c.name << ": " << reply.body;
    EXPECT_THAT(j.value("error", ""), ::testing::StartsWith(c.error)) << c.name;
  }
}

}  // namespace
}  // namespace kscore::app
