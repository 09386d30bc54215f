#include "shim/kube/informer.h"

#include <atomic>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace kscore::kube {
namespace {

TEST(AfterWatchTest, GoneRelistsAtOnce) {
  // 410 as the watch's HTTP status...
  EXPECT_EQ(AfterWatch(HttpError(410, "too old"), /*progressed=*/false),
            NextStep::kRelist);
  // ...or as an ERROR event in a 200 stream.
  const nlohmann::json status = {
      {"kind", "Status"},
      {"code", 410},
      {"reason", "Expired"},
      {"message", "too old resource version: 1 (42)"}};
  absl::Status st = WatchErrorStatus(status);
  EXPECT_EQ(HttpStatusOf(st), 410);
  EXPECT_EQ(std::string(st.message()),
            "HTTP 410: too old resource version: 1 (42)");
  EXPECT_EQ(AfterWatch(st, /*progressed=*/true), NextStep::kRelist);
}

TEST(AfterWatchTest, EndedStreamResumesAndErrorsBackOff) {
  EXPECT_EQ(AfterWatch(absl::OkStatus(), true), NextStep::kRewatch);
  // A stream that ends at once without events must not spin.
  EXPECT_EQ(AfterWatch(absl::OkStatus(), false), NextStep::kBackoffRewatch);
  EXPECT_EQ(AfterWatch(absl::UnavailableError("connection reset"), true),
            NextStep::kBackoffRewatch);
  EXPECT_EQ(AfterWatch(HttpError(403, "forbidden"), false),
            NextStep::kBackoffRelist);
  EXPECT_EQ(AfterWatch(WatchErrorStatus({{"code", 500}}), true),
            NextStep::kBackoffRelist);
  EXPECT_EQ(HttpStatusOf(WatchErrorStatus(nlohmann::json::object())), 500);
}

}  // namespace
}  // namespace kscore::kube

namespace kscore::kube {
namespace {

// Answers lists from a script; watches wait until stopped.
class ScriptedClient : public Client {
 public:
  absl::StatusOr<Response> Do(absl::string_view method, absl::string_view path,
                              absl::string_view, absl::string_view) override {
    absl::MutexLock lock(&mu_);
    paths_.push_back(std::string(method) + " " + std::string(path));
    if (next_ >= answers_.size()) return Response{500, "no more answers"};
    return answers_[next_++];
  }
  absl::Status Stream(absl::string_view,
                      const std::function<bool(absl::string_view)>&,
                      const std::atomic<bool>* stop) override {
    while (!stop->load()) absl::SleepFor(absl::Milliseconds(5));
    return absl::OkStatus();
  }
  std::vector<Response> answers_;
  absl::Mutex mu_;
  size_t next_ = 0;
  std::vector<std::string> paths_;
};

TEST(InformerTest, ExpiredContinueTokenRestartsTheListFromTheStart) {
  ScriptedClient client;
  client.answers_ = {
      {200, R"({"metadata":{"resourceVersion":"10","continue":"tok"},
                "items":[{"metadata":{"name":"a","resourceVersion":"1"}}]})"},
      {410, R"({"kind":"Status","code":410,"reason":"Expired"})"},
      {200, R"({"metadata":{"resourceVersion":"12"},
                "items":[{"metadata":{"name":"a","resourceVersion":"1"}},
                         {"metadata":{"name":"b","resourceVersion":"11"}}]})"},
  };
  InformerOptions options;
  options.path = "/api/v1/nodes";
  Informer informer(&client, std::move(options));
  informer.Start();
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (!informer.HasSynced() && absl::Now() < deadline)
    absl::SleepFor(absl::Milliseconds(5));
  ASSERT_TRUE(informer.HasSynced());
  // The whole second list, not the first page or nothing.
  EXPECT_EQ(informer.List().size(), 2u);
  EXPECT_EQ(informer.ResourceVersion(), "12");
  informer.Stop();
  absl::MutexLock lock(&client.mu_);
  ASSERT_EQ(client.paths_.size(), 3u);
  EXPECT_NE(client.paths_[1].find("continue=tok"), std::string::npos);
  EXPECT_EQ(client.paths_[2].find("continue="), std::string::npos);
}

}  // namespace
}  // namespace kscore::kube
