#include "shim/kube/informer.h"

#include <atomic>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kscore/k8s/k8s_subset.pb.h"

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
  // The first protobuf watch gets `frames_`, then waits like Stream.
  absl::Status StreamFrames(
      absl::string_view path, absl::string_view,
      const std::function<bool(absl::string_view)>& on_frame,
      const std::atomic<bool>* stop) override {
    std::vector<std::string> frames;
    {
      absl::MutexLock lock(&mu_);
      paths_.push_back("WATCH " + std::string(path));
      frames.swap(frames_);
    }
    for (const std::string& f : frames) {
      if (!on_frame(f)) return absl::OkStatus();
    }
    while (!stop->load()) absl::SleepFor(absl::Milliseconds(5));
    return absl::OkStatus();
  }
  std::vector<Response> answers_;
  std::vector<std::string> frames_;
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
  InformerOptions<nlohmann::json> options;
  options.path = "/api/v1/nodes";
  options.codec = JsonCodec();
  Informer<nlohmann::json> informer(&client, std::move(options));
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

// A typed object for the test: what a codec made of a protobuf Pod.
struct Named {
  std::string name;
  std::string rv;
  std::string phase;
};

std::string PodBytes(const std::string& name, const std::string& rv,
                     const std::string& phase = "Pending") {
  k8s::Pod pod;
  pod.mutable_metadata()->set_name(name);
  pod.mutable_metadata()->set_namespace_("ns");
  pod.mutable_metadata()->set_uid("uid-" + name);
  pod.mutable_metadata()->set_resource_version(rv);
  pod.mutable_status()->set_phase(phase);
  return pod.SerializeAsString();
}

std::string Frame(const std::string& type, const std::string& object) {
  k8s::WatchEvent ev;
  ev.set_type(type);
  ev.mutable_object()->set_raw(Wrap(object, "v1", "Pod"));
  return ev.SerializeAsString();
}

// Decodes each object once (counted); a pod named "bad" does not decode.
ObjectCodec<Named> NamedCodec(std::atomic<int>* decodes) {
  ObjectCodec<Named> codec;
  codec.from_protobuf =
      [decodes](absl::string_view raw) -> absl::StatusOr<Named> {
    ++*decodes;
    k8s::Pod pod;
    if (!pod.ParseFromArray(raw.data(), static_cast<int>(raw.size())) ||
        pod.metadata().name() == "bad") {
      return absl::InvalidArgumentError("undecodable");
    }
    return Named{pod.metadata().name(), pod.metadata().resource_version(),
                 pod.status().phase()};
  };
  codec.identity = [](const Named& n) {
    return Identity{"ns/" + n.name, "uid-" + n.name, n.rv};
  };
  // The store keeps the identity's part only.
  codec.keep = [](const Named& n) { return Named{n.name, n.rv, ""}; };
  return codec;
}

TEST(InformerTest, ProtobufObjectsAreDecodedOnceIntoTheirType) {
  ScriptedClient client;
  k8s::List list;
  list.mutable_metadata()->set_resource_version("10");
  list.add_items(PodBytes("a", "1"));
  list.add_items(PodBytes("bad", "2"));  // skipped, not fatal
  list.add_items(PodBytes("b", "3"));
  client.answers_ = {{200, Wrap(list.SerializeAsString(), "v1", "PodList")}};
  k8s::Pod bookmark;
  bookmark.mutable_metadata()->set_resource_version("20");
  client.frames_ = {Frame("MODIFIED", PodBytes("a", "11", "Running")),
                    Frame("DELETED", PodBytes("b", "12")),
                    Frame("BOOKMARK", bookmark.SerializeAsString())};

  std::atomic<int> decodes{0};
  absl::Mutex mu;
  std::vector<std::string> seen;
  auto record = [&](std::string s) {
    absl::MutexLock lock(&mu);
    seen.push_back(std::move(s));
  };
  InformerOptions<Named> options;
  options.path = "/api/v1/pods";
  options.protobuf = true;
  options.codec = NamedCodec(&decodes);
  options.handlers.on_add = [&](const Ptr<Named>& n) {
    record(absl::StrCat("add ", n->name, "@", n->rv, " ", n->phase));
  };
  options.handlers.on_update = [&](const Ptr<Named>& old_n,
                                   const Ptr<Named>& n) {
    record(absl::StrCat("update ", n->name, "@", old_n->rv, "->", n->rv, " ",
                        old_n->phase, "->", n->phase));
  };
  options.handlers.on_delete = [&](const Ptr<Named>& n) {
    record(absl::StrCat("delete ", n->name, "@", n->rv));
  };
  Informer<Named> informer(&client, std::move(options));
  informer.Start();
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (informer.ResourceVersion() != "20" && absl::Now() < deadline)
    absl::SleepFor(absl::Milliseconds(5));
  informer.Stop();
  EXPECT_EQ(informer.ResourceVersion(), "20");  // the bookmark's
  absl::MutexLock lock(&mu);
  // Handlers get whole new objects; old ones are what the store kept.
  EXPECT_THAT(
      seen, ::testing::ElementsAre("add a@1 Pending", "add b@3 Pending",
                                   "update a@1->11 ->Running", "delete b@12"));
  // Once per listed item and per watched object; the bookmark is not
  // decoded as a Named.
  EXPECT_EQ(decodes.load(), 5);
  ASSERT_EQ(informer.List().size(), 1u);
  EXPECT_EQ(informer.Get("ns/a")->rv, "11");
  EXPECT_TRUE(informer.HasSynced());
}

}  // namespace
}  // namespace kscore::kube
