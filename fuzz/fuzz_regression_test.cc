// Every input under fuzz/corpus/<target>/ (the seeds) and
// fuzz/regressions/<target>/ (each input a fuzzer once crashed on) fed to
// its target, as the fuzzer binaries do, in the ordinary build: a crash or
// a broken invariant fails the target's test here (under ASan+UBSan too
// with hack/test.sh --sanitize).
#include <filesystem>
#include <fstream>
#include <memory>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz/targets.h"
#include "grpcpp/server_context.h"
#include "grpcpp/test/default_reactor_test_peer.h"
#include "gtest/gtest.h"
#include "kscore/scorer/v1/scorer.pb.h"
#include "nlohmann/json.hpp"
#include "scorer/framework/profile_set.h"
#include "scorer/plugins/registry.h"
#include "scorer/server/scorer_service.h"
#include "shim/kube/protobuf_codec.h"
#include "shim/objects/objects.h"

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
    EXPECT_TRUE(objects::PodFromProto(ReadAll(p)).ok()) << p;
  }
  for (const fs::path& p : FilesUnder(corpus / "node_proto")) {
    EXPECT_TRUE(objects::NodeFromProto(ReadAll(p)).ok()) << p;
  }
  for (const fs::path& p : FilesUnder(corpus / "pod_json")) {
    EXPECT_TRUE(objects::PodFromJson(nlohmann::json::parse(ReadAll(p))).ok())
        << p;
  }
  for (const fs::path& p : FilesUnder(corpus / "node_json")) {
    EXPECT_TRUE(objects::NodeFromJson(nlohmann::json::parse(ReadAll(p))).ok())
        << p;
  }
  absl::StatusOr<kube::WatchEvent> gone = kube::DecodeWatchFrame(
      ReadAll(corpus / "watch_frame" / "rec-error-gone"));
  ASSERT_TRUE(gone.ok()) << gone.status();
  EXPECT_EQ(gone->type, kube::WatchEvent::Type::kError);
  EXPECT_EQ(gone->object.value("code", 0), 410);
}

// Found by fuzz_scorer_normalize (fuzz/regressions/scorer_normalize/
// no-plugins-one-node): NormalizeScore with no plugins and a node read the
// node's total past the end of an empty vector (a crash of the scorer). Each
// node's total is 0 then.
TEST(ScorerRegressionTest, NormalizeScoreWithoutPluginsTotalsZero) {
  absl::StatusOr<std::unique_ptr<framework::ProfileSet>> set =
      framework::ParseProfileSet(R"(
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: concentrate-scheduler
)",
                                 plugins::DefaultRegistry());
  ASSERT_TRUE(set.ok()) << set.status();
  server::ScorerService service(set->get(), server::ServiceOptions{});
  scorer::v1::NormalizeScoreRequest req;
  ASSERT_TRUE(req.ParseFromString(
      ReadAll(fs::path(KSCORE_SOURCE_DIR) /
              "fuzz/regressions/scorer_normalize/no-plugins-one-node")));
  ASSERT_EQ(req.plugins_size(), 0);
  ASSERT_EQ(req.scores_size(), 1);
  scorer::v1::NormalizeScoreResponse resp;
  grpc::CallbackServerContext ctx;
  grpc::testing::DefaultReactorTestPeer peer(&ctx);
  service.NormalizeScore(&ctx, &req, &resp);
  ASSERT_TRUE(peer.test_status_set());
  ASSERT_TRUE(peer.test_status().ok()) << peer.test_status().error_message();
  ASSERT_EQ(resp.scores_size(), 1);
  EXPECT_EQ(resp.scores(0).node_name(), "node");
  EXPECT_EQ(resp.scores(0).total(), 0);
}

INSTANTIATE_TEST_SUITE_P(Targets, FuzzInputsTest,
                         ::testing::ValuesIn(Targets()),
                         [](const ::testing::TestParamInfo<Target>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace kscore::fuzz
