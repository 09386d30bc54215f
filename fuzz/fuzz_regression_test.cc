// Every input under fuzz/corpus/<target>/ (the seeds) and
// fuzz/regressions/<target>/ (each input a fuzzer once crashed on) fed to
// its target, as the fuzzer binaries do, in the ordinary build: a crash or
// a broken invariant fails the target's test here (under ASan+UBSan too
// with hack/test.sh --sanitize).
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz/targets.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "shim/cache/objects.h"
#include "shim/kube/protobuf_codec.h"

namespace kscore::fuzz {
namespace {

namespace fs = std::filesystem;

}  // namespace

// Names the target in gtest's messages.
void PrintTo(const Target& t, std::ostream* os) { *os << t.name; }

namespace {

std::vector<fs::path> FilesUnder(const fs::path& dir) {
  std::vector<fs::path> files;
  if (!fs::is_directory(dir)) return files;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    if (e.is_regular_file()) files.push_back(e.path());
  }
  return files;
}

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class FuzzInputsTest : public ::testing::TestWithParam<Target> {};

TEST_P(FuzzInputsTest, SeedsAndRegressionsRunClean) {
  const fs::path root = fs::path(KSCORE_SOURCE_DIR) / "fuzz";
  const std::vector<fs::path> seeds =
      FilesUnder(root / "corpus" / GetParam().name);
  // Every target has seeds: an empty corpus directory would make this test
  // pass on nothing.
  EXPECT_FALSE(seeds.empty()) << "no seeds in fuzz/corpus/" << GetParam().name;
  std::vector<fs::path> inputs = seeds;
  for (const fs::path& p : FilesUnder(root / "regressions" / GetParam().name)) {
    inputs.push_back(p);
  }
  for (const fs::path& p : inputs) {
    SCOPED_TRACE(p.string());
    GetParam().run(ReadAll(p));
  }
}

// The recorded seeds are what they claim to be: objects the decoders take
// (a seed they refuse would start the fuzzer from nothing).
TEST(SeedsTest, RecordedObjectsDecode) {
  const fs::path corpus = fs::path(KSCORE_SOURCE_DIR) / "fuzz" / "corpus";
  for (const fs::path& p : FilesUnder(corpus / "pod_proto")) {
    EXPECT_TRUE(cache::PodFromProto(ReadAll(p)).ok()) << p;
  }
  for (const fs::path& p : FilesUnder(corpus / "node_proto")) {
    EXPECT_TRUE(cache::NodeFromProto(ReadAll(p)).ok()) << p;
  }
  for (const fs::path& p : FilesUnder(corpus / "pod_json")) {
    EXPECT_TRUE(cache::PodFromJson(nlohmann::json::parse(ReadAll(p))).ok())
        << p;
  }
  for (const fs::path& p : FilesUnder(corpus / "node_json")) {
    EXPECT_TRUE(cache::NodeFromJson(nlohmann::json::parse(ReadAll(p))).ok())
        << p;
  }
  absl::StatusOr<kube::WatchEvent> gone = kube::DecodeWatchFrame(
      ReadAll(corpus / "watch_frame" / "rec-error-gone"));
  ASSERT_TRUE(gone.ok()) << gone.status();
  EXPECT_EQ(gone->type, kube::WatchEvent::Type::kError);
  EXPECT_EQ(gone->object.value("code", 0), 410);
}

INSTANTIATE_TEST_SUITE_P(Targets, FuzzInputsTest,
                         ::testing::ValuesIn(Targets()),
                         [](const ::testing::TestParamInfo<Target>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace kscore::fuzz
