// The bad configurations under tests/testdata/config/bad and the examples,
// loaded through the whole profile set (config decoding and plugin args).
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/config.h"
#include "scorer/framework/profile_set.h"
#include "scorer/plugins/registry.h"

namespace kscore::framework {
namespace {

using ::testing::HasSubstr;

std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every file in tests/testdata/config/bad states the error it must produce in
// its first line ("# expect: ..."); loading must fail with that message.
TEST(ExampleConfigsTest, BadFilesFailNamingTheField) {
  std::filesystem::path dir =
      std::filesystem::path(KSCORE_SOURCE_DIR) / "tests/testdata/config/bad";
  Registry registry = plugins::DefaultRegistry();
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::string text = ReadFile(entry.path());
    std::string first = text.substr(0, text.find('\n'));
    const std::string prefix = "# expect: ";
    ASSERT_EQ(first.rfind(prefix, 0), 0u) << entry.path();
    std::string expected = first.substr(prefix.size());
    absl::StatusOr<std::unique_ptr<ProfileSet>> set =
        LoadProfileSet(entry.path().string(), registry);
    ASSERT_FALSE(set.ok()) << entry.path()
                           << " loaded but should fail with: " << expected;
    EXPECT_EQ(set.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(set.status().message()), HasSubstr(expected))
        << entry.path();
    // The message names the file too, so a person knows where to look.
    EXPECT_THAT(std::string(set.status().message()),
                HasSubstr(entry.path().filename().string()));
    ++checked;
  }
  EXPECT_GE(checked, 10);
}

TEST(ExampleConfigsTest, ExampleConfigsLoad) {
  std::filesystem::path dir =
      std::filesystem::path(KSCORE_SOURCE_DIR) / "examples/config";
  Registry registry = plugins::DefaultRegistry();
  int loaded = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    absl::StatusOr<std::unique_ptr<ProfileSet>> set =
        LoadProfileSet(entry.path().string(), registry);
    EXPECT_TRUE(set.ok()) << set.status();
    ++loaded;
  }
  EXPECT_GE(loaded, 1);
}

}  // namespace
}  // namespace kscore::framework
