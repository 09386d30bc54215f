#include "shim/scheduler/event_recorder.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace kscore::scheduler {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Answers every request at once: 201, or 404 for PATCHes when told so.
class RecordingClient : public kube::Client {
 public:
  absl::StatusOr<kube::Response> Do(absl::string_view method,
                                    absl::string_view path,
                                    absl::string_view body,
                                    absl::string_view) override {
    absl::MutexLock lock(&mu_);
    requests_.push_back(absl::StrCat(method, " ", path));
    bodies_.emplace_back(body);
    if (method == "PATCH" && patch_404_) return kube::Response{404, "{}"};
    return kube::Response{201, "{}"};
  }
  absl::Status Stream(absl::string_view,
                      const std::function<bool(absl::string_view)>&,
                      const std::atomic<bool>*) override {
    return absl::UnimplementedError("no streams");
  }
  std::vector<std::string> Requests() {
    absl::MutexLock lock(&mu_);
    return requests_;
  }
  nlohmann::json Body(size_t i) {
    absl::MutexLock lock(&mu_);
    return nlohmann::json::parse(bodies_.at(i));
  }
  void Patch404() {
    absl::MutexLock lock(&mu_);
    patch_404_ = true;
  }

 private:
  absl::Mutex mu_;
  std::vector<std::string> requests_;
  std::vector<std::string> bodies_;
  bool patch_404_ = false;
};

class EventRecorderTest : public ::testing::Test {
 protected:
  EventRecorderTest() : writer_(&client_, Writer::Options()) {
    EventRecorder::Options o;
    o.now = [this] { return now_; };
    recorder_ = std::make_unique<EventRecorder>(&writer_, false, o);
  }

  kube::EventFields Failed(const std::string& pod, const std::string& rv,
                           const std::string& note) {
    kube::EventFields e;
    e.namespace_ = "default";
    e.name = absl::StrCat(pod, ".", ++serial_);
    e.event_time = now_;
    e.reporting_controller = "kscore";
    e.reporting_instance = "kscore-host";
    e.action = "Scheduling";
    e.reason = "FailedScheduling";
    e.type = "Warning";
    e.note = note;
    e.regarding = {"v1", "Pod", "default", pod, "uid-" + pod, rv};
    return e;
  }

  absl::Time now_ = absl::FromUnixSeconds(1'800'000'000);
  int serial_ = 0;
  RecordingClient client_;
  Writer writer_;
  std::unique_ptr<EventRecorder> recorder_;
};

constexpr char kEvents[] = "/apis/events.k8s.io/v1/namespaces/default/events";

TEST_F(EventRecorderTest, RepeatsFoldIntoASeriesAsClientGoDoes) {
  recorder_->Record(Failed("web-1", "7", "0/3 nodes are available: a"));
  now_ += absl::Seconds(10);
  recorder_->Record(Failed("web-1", "7", "0/3 nodes are available: b"));
  now_ += absl::Seconds(10);
  recorder_->Record(Failed("web-1", "7", "0/3 nodes are available: c"));
  // One event created; the second makes it a series of 2 (PATCH); the
  // third only counts.
  EXPECT_THAT(client_.Requests(),
              ElementsAre(absl::StrCat("POST ", kEvents),
                          absl::StrCat("PATCH ", kEvents, "/web-1.1")));
  EXPECT_EQ(client_.Body(0)["note"], "0/3 nodes are available: a");
  EXPECT_FALSE(client_.Body(0).contains("series"));
  EXPECT_EQ(client_.Body(1)["series"]["count"], 2);
  EXPECT_EQ(client_.Body(1)["series"]["lastObservedTime"],
            "2027-01-15T08:00:10.000000Z");
}

TEST_F(EventRecorderTest, ASeriesEndsAfterSixQuietMinutes) {
  recorder_->Record(Failed("web-1", "7", "a"));
  recorder_->Record(Failed("web-1", "7", "a"));
  recorder_->Record(Failed("web-1", "7", "a"));
  ASSERT_EQ(client_.Requests().size(), 2u);
  now_ += absl::Minutes(5);
  recorder_->Record(Failed("web-1", "7", "a"));  // count 4, at 5 min
  now_ += absl::Seconds(61);
  recorder_->Tick();  // at 6m01s: observed 1m01s ago, the series goes on
  EXPECT_EQ(client_.Requests().size(), 2u);
  now_ += absl::Minutes(6);
  recorder_->Tick();  // at 12m01s: quiet for 7 minutes, it ends
  ASSERT_EQ(client_.Requests().size(), 3u);
  EXPECT_EQ(client_.Requests()[2], absl::StrCat("PATCH ", kEvents, "/web-1.1"));
  EXPECT_EQ(client_.Body(2)["series"]["count"], 4);
  EXPECT_EQ(recorder_->cached(), 0u);
  // After the series ended, the same event starts afresh.
  recorder_->Record(Failed("web-1", "7", "a"));
  EXPECT_EQ(client_.Requests().back(), absl::StrCat("POST ", kEvents));
}

TEST_F(EventRecorderTest, OtherObjectsVersionsOrReasonsAreNotFolded) {
  recorder_->Record(Failed("web-1", "7", "a"));
  recorder_->Record(Failed("web-2", "7", "a"));  // another pod
  recorder_->Record(Failed("web-1", "8", "a"));  // the pod changed
  kube::EventFields scheduled = Failed("web-1", "8", "a");
  scheduled.reason = "Scheduled";
  scheduled.type = "Normal";
  scheduled.action = "Binding";
  recorder_->Record(scheduled);
  EXPECT_EQ(client_.Requests(),
            std::vector<std::string>(4, absl::StrCat("POST ", kEvents)));
  EXPECT_EQ(recorder_->cached(), 4u);
  // Singletons are forgotten after six minutes, writing nothing.
  now_ += absl::Minutes(6) + absl::Seconds(1);
  recorder_->Tick();
  EXPECT_EQ(recorder_->cached(), 0u);
  EXPECT_EQ(client_.Requests().size(), 4u);
}

// client-go's key has the related object too: one victim preempted for
// two preemptors gets two events.
TEST_F(EventRecorderTest, OtherRelatedObjectsAreNotFolded) {
  kube::EventFields a = Failed("victim", "7", "Preempted by pod u-a");
  a.related = {"v1", "Pod", "default", "a", "u-a", ""};
  kube::EventFields b = Failed("victim", "7", "Preempted by pod u-b");
  b.related = {"v1", "Pod", "default", "b", "u-b", ""};
  recorder_->Record(a);
  recorder_->Record(b);
  EXPECT_THAT(client_.Requests(), ElementsAre(absl::StrCat("POST ", kEvents),
                                              absl::StrCat("POST ", kEvents)));
}

TEST_F(EventRecorderTest, ASeriesWhoseEventIsGoneIsCreatedWithItsCount) {
  client_.Patch404();
  recorder_->Record(Failed("web-1", "7", "a"));
  recorder_->Record(Failed("web-1", "7", "a"));
  ASSERT_EQ(client_.Requests().size(), 3u);
  EXPECT_EQ(client_.Requests()[2], absl::StrCat("POST ", kEvents));
  EXPECT_EQ(client_.Body(2)["series"]["count"], 2);
  EXPECT_EQ(client_.Body(2)["metadata"]["name"], "web-1.1");
}

TEST_F(EventRecorderTest, OngoingSeriesAreRefreshedEvery30Minutes) {
  recorder_->Record(Failed("web-1", "7", "a"));
  for (int minute = 1; minute <= 31; ++minute) {
    now_ += absl::Minutes(1);
    recorder_->Record(Failed("web-1", "7", "a"));  // never quiet
    recorder_->Tick();
  }
  // POST, PATCH (count 2), then the refresh at 30 minutes.
  std::vector<std::string> r = client_.Requests();
  ASSERT_EQ(r.size(), 3u);
  EXPECT_THAT(r[2], HasSubstr("PATCH"));
  EXPECT_EQ(client_.Body(2)["series"]["count"], 31);
}

}  // namespace
}  // namespace kscore::scheduler
