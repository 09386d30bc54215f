#include "shim/kube/protobuf_codec.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kscore/k8s/k8s_subset.pb.h"
#include "shim/kube/informer.h"
#include "shim/kube/write_bodies.h"

namespace kscore::kube {
namespace {

namespace k8s = ::kscore::k8s;
using nlohmann::json;
using ::testing::HasSubstr;

// magic + runtime.Unknown around an object's bytes, as the API server sends.
std::string Envelope(const std::string& raw, const std::string& kind) {
  return Wrap(raw, "v1", kind);
}

k8s::Pod SamplePod() {
  k8s::Pod pod;
  k8s::ObjectMeta* m = pod.mutable_metadata();
  m->set_name("web-1");
  m->set_namespace_("default");
  m->set_uid("u-1");
  m->set_resource_version("42");
  m->mutable_creation_timestamp()->set_seconds(
      1796000000);  // 2026-11-30T00:53:20Z
  (*m->mutable_labels())["app"] = "web";
  k8s::PodSpec* s = pod.mutable_spec();
  s->set_scheduler_name("concentrate-scheduler");
  s->set_priority(0);
  k8s::Container* c = s->add_containers();
  (*c->mutable_resources()->mutable_requests())["cpu"].set_string("100m");
  k8s::ContainerPort* port = c->add_ports();
  port->set_host_port(8080);
  port->set_protocol("UDP");
  k8s::Toleration* t = s->add_tolerations();
  t->set_operator_("Exists");
  s->mutable_affinity()
      ->mutable_pod_anti_affinity()
      ->add_required_during_scheduling_ignored_during_execution()
      ->set_topology_key("x");
  s->add_volumes()
      ->mutable_volume_source()
      ->mutable_persistent_volume_claim()
      ->set_claim_name("c");
  pod.mutable_status()->set_phase("Pending");
  return pod;
}

TEST(ProtobufCodecTest, ListsKeepTheirItemsAndContinueToken) {
  k8s::List list;
  list.mutable_metadata()->set_resource_version("100");
  list.mutable_metadata()->set_continue_("next");
  k8s::Pod a = SamplePod();
  k8s::Pod b = SamplePod();
  b.mutable_metadata()->set_name("web-2");
  list.add_items(a.SerializeAsString());
  list.add_items(b.SerializeAsString());
  absl::StatusOr<DecodedList> d =
      DecodeList(Envelope(list.SerializeAsString(), "PodList"));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->resource_version, "100");
  EXPECT_EQ(d->continue_token, "next");
  ASSERT_EQ(d->items.size(), 2u);
  // Items stay encoded, byte for byte, for the informer's codec.
  EXPECT_EQ(d->items[1], b.SerializeAsString());

  // Not an envelope, or one the shim cannot read: clear errors.
  EXPECT_THAT(std::string(DecodeList("{}").status().message()),
              HasSubstr("no k8s\\0 magic"));
  k8s::Unknown gz;
  gz.set_raw("x");
  gz.set_content_encoding("gzip");
  EXPECT_THAT(
      std::string(DecodeList(std::string("k8s\0", 4) + gz.SerializeAsString())
                      .status()
                      .message()),
      HasSubstr("content encoding \"gzip\""));
}

TEST(ProtobufCodecTest, WatchFramesGiveEventsAndErrors) {
  k8s::WatchEvent added;
  added.set_type("ADDED");
  added.mutable_object()->set_raw(
      Envelope(SamplePod().SerializeAsString(), "Pod"));
  absl::StatusOr<WatchEvent> ev = DecodeWatchFrame(added.SerializeAsString());
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_EQ(ev->type, WatchEvent::Type::kAdded);
  // The object's bytes, out of their envelope.
  EXPECT_EQ(ev->protobuf, SamplePod().SerializeAsString());
  absl::StatusOr<std::string> rv = ResourceVersionOf(ev->protobuf);
  ASSERT_TRUE(rv.ok()) << rv.status();
  EXPECT_EQ(*rv, "42");
  EXPECT_FALSE(ResourceVersionOf("\xff\xff\xff").ok());

  // An ERROR event carries a Status: 410 makes the informer relist.
  k8s::Status status;
  status.set_code(410);
  status.set_reason("Expired");
  status.set_message("too old resource version: 1 (42)");
  k8s::WatchEvent error;
  error.set_type("ERROR");
  error.mutable_object()->set_raw(
      Envelope(status.SerializeAsString(), "Status"));
  ev = DecodeWatchFrame(error.SerializeAsString());
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_EQ(ev->type, WatchEvent::Type::kError);
  absl::Status st = WatchErrorStatus(ev->object);
  EXPECT_EQ(HttpStatusOf(st), 410);
  EXPECT_THAT(std::string(st.message()),
              HasSubstr("too old resource version: 1 (42)"));
  EXPECT_EQ(AfterWatch(st, true), NextStep::kRelist);

  k8s::WatchEvent odd;
  odd.set_type("SIDEWAYS");
  EXPECT_THAT(
      std::string(DecodeWatchFrame(odd.SerializeAsString()).status().message()),
      HasSubstr("unknown watch event type \"SIDEWAYS\""));
  EXPECT_FALSE(DecodeWatchFrame("\xff\xff\xff").ok());
}

TEST(ProtobufCodecTest, ErrorBodiesReadAsText) {
  k8s::Status status;
  status.set_code(403);
  status.set_message("pods is forbidden");
  EXPECT_THAT(ErrorBodyText(Envelope(status.SerializeAsString(), "Status")),
              HasSubstr("pods is forbidden"));
  EXPECT_EQ(ErrorBodyText("plain text"), "plain text");
}

// As client-go's error text: the Status's message alone.
TEST(ProtobufCodecTest, ErrorMessagesAreTheStatusMessage) {
  k8s::Status status;
  status.set_code(409);
  status.set_message("the object has been modified");
  EXPECT_EQ(ErrorMessage(Envelope(status.SerializeAsString(), "Status")),
            "the object has been modified");
  EXPECT_EQ(ErrorMessage(R"({"kind":"Status","code":409,"message":"gone"})"),
            "gone");
  EXPECT_EQ(ErrorMessage(R"({"kind":"Status","code":500})"),
            R"({"kind":"Status","code":500})");
  EXPECT_EQ(ErrorMessage("plain text"), "plain text");
}

// Found by fuzz_watch_frame: proto2 strings are not checked for UTF-8, and
// the Status's JSON text threw on a byte that is not, ending the reflector's
// thread (and the shim). Each such byte reads as U+FFFD, as in Go. The
// inputs are fuzz/regressions/watch_frame/error-*-not-utf8.
TEST(ProtobufCodecTest, StatusesWithInvalidUtf8ReadAsText) {
  k8s::Status status;
  status.set_code(410);
  status.set_reason("\xff");
  status.set_message("too old resource version");
  k8s::WatchEvent error;
  error.set_type("ERROR");
  error.mutable_object()->set_raw(
      Envelope(status.SerializeAsString(), "Status"));
  absl::StatusOr<WatchEvent> ev = DecodeWatchFrame(error.SerializeAsString());
  ASSERT_TRUE(ev.ok()) << ev.status();
  absl::Status st = WatchErrorStatus(ev->object);
  EXPECT_EQ(HttpStatusOf(st), 410);
  EXPECT_THAT(std::string(st.message()), HasSubstr("too old"));
  ev->object.erase("message");  // the whole Status is the message then
  EXPECT_THAT(std::string(WatchErrorStatus(ev->object).message()),
              HasSubstr("\"reason\":\"\xef\xbf\xbd\""));

  status.set_code(403);
  status.set_message("pods is \xff forbidden");
  EXPECT_THAT(ErrorBodyText(Envelope(status.SerializeAsString(), "Status")),
              HasSubstr("pods is \xef\xbf\xbd forbidden"));
}

TEST(WriteBodiesTest, BindingEnvelopeCarriesTypeAndTarget) {
  WriteBody b = BindingBody(true, "default", "web-1", "u-1", "node-7");
  EXPECT_EQ(b.content_type, kProtobufContentType);
  ASSERT_TRUE(IsProtobufEnvelope(b.data));
  k8s::Unknown u;
  ASSERT_TRUE(u.ParseFromString(b.data.substr(4)));
  EXPECT_EQ(u.type_meta().api_version(), "v1");
  EXPECT_EQ(u.type_meta().kind(), "Binding");
  k8s::Binding binding;
  ASSERT_TRUE(binding.ParseFromString(u.raw()));
  EXPECT_EQ(binding.metadata().name(), "web-1");
  EXPECT_EQ(binding.metadata().namespace_(), "default");
  EXPECT_EQ(binding.metadata().uid(), "u-1");
  EXPECT_EQ(binding.target().kind(), "Node");
  EXPECT_EQ(binding.target().name(), "node-7");

  WriteBody j = BindingBody(false, "default", "web-1", "u-1", "node-7");
  EXPECT_EQ(j.content_type, "application/json");
  EXPECT_EQ(json::parse(j.data)["target"]["name"], "node-7");
}

TEST(WriteBodiesTest, EventTimeKeepsMicroseconds) {
  EventFields e;
  e.event_time = absl::FromUnixMicros(1796000000123456);
  e.reason = "Scheduled";
  WriteBody b = EventBody(true, e);
  k8s::Unknown u;
  ASSERT_TRUE(u.ParseFromString(b.data.substr(4)));
  EXPECT_EQ(u.type_meta().api_version(), "events.k8s.io/v1");
  k8s::Event ev;
  ASSERT_TRUE(ev.ParseFromString(u.raw()));
  EXPECT_EQ(ev.event_time().seconds(), 1796000000);
  EXPECT_EQ(ev.event_time().nanos(), 123456000);
  EXPECT_EQ(ev.reason(), "Scheduled");
  EXPECT_EQ(json::parse(EventBody(false, e).data)["eventTime"],
            "2026-11-30T00:53:20.123456Z");
}

// A preemption's event names the preemptor as its related object, in both
// encodings; other events have none.
TEST(WriteBodiesTest, RelatedObjectOnlyWhenNamed) {
  EventFields e;
  e.regarding = {"v1", "Pod", "default", "victim", "u-v", ""};
  e.related = {"v1", "Pod", "default", "preemptor", "u-p", ""};
  k8s::Unknown u;
  ASSERT_TRUE(u.ParseFromString(EventBody(true, e).data.substr(4)));
  k8s::Event ev;
  ASSERT_TRUE(ev.ParseFromString(u.raw()));
  EXPECT_EQ(ev.related().name(), "preemptor");
  EXPECT_EQ(ev.related().uid(), "u-p");
  EXPECT_EQ(ev.related().kind(), "Pod");
  const json j = json::parse(EventBody(false, e).data);
  EXPECT_EQ(j["related"]["name"], "preemptor");
  EXPECT_EQ(j["related"]["uid"], "u-p");
  e.related = {};
  ASSERT_TRUE(u.ParseFromString(EventBody(true, e).data.substr(4)));
  ASSERT_TRUE(ev.ParseFromString(u.raw()));
  EXPECT_FALSE(ev.has_related());
  EXPECT_FALSE(json::parse(EventBody(false, e).data).contains("related"));
}

}  // namespace
}  // namespace kscore::kube
