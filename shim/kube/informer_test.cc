#include "shim/kube/informer.h"

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
