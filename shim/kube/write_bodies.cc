#include "shim/kube/write_bodies.h"

#include <string>

#include "kscore/k8s/k8s_subset.pb.h"
#include "nlohmann/json.hpp"
#include "shim/kube/protobuf_codec.h"

namespace kscore::kube {
namespace {

namespace k8s = ::kscore::k8s;

void SetRef(const ObjectRef& in, k8s::ObjectReference* out) {
  if (!in.api_version.empty()) out->set_api_version(in.api_version);
  if (!in.kind.empty()) out->set_kind(in.kind);
  if (!in.namespace_.empty()) out->set_namespace_(in.namespace_);
  if (!in.name.empty()) out->set_name(in.name);
  if (!in.uid.empty()) out->set_uid(in.uid);
  if (!in.resource_version.empty())
    out->set_resource_version(in.resource_version);
}

std::string MicroTime(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", t, absl::UTCTimeZone());
}

}  // namespace

WriteBody BindingBody(bool protobuf, const std::string& namespace_,
                      const std::string& name, const std::string& uid,
                      const std::string& node) {
  if (protobuf) {
    k8s::Binding b;
    b.mutable_metadata()->set_name(name);
    b.mutable_metadata()->set_namespace_(namespace_);
    b.mutable_metadata()->set_uid(uid);
    SetRef({"v1", "Node", "", node, "", ""}, b.mutable_target());
    return {Wrap(b.SerializeAsString(), "v1", "Binding"), kProtobufContentType};
  }
  nlohmann::json binding = {
      {"apiVersion", "v1"},
      {"kind", "Binding"},
      {"metadata", {{"name", name}, {"namespace", namespace_}, {"uid", uid}}},
      {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}}},
  };
  return {binding.dump(), "application/json"};
}

WriteBody EventBody(bool protobuf, const EventFields& e) {
  if (protobuf && e.series_count == 0) {
    k8s::Event ev;
    ev.mutable_metadata()->set_name(e.name);
    ev.mutable_metadata()->set_namespace_(e.namespace_);
    const absl::Duration since = e.event_time - absl::UnixEpoch();
    const int64_t seconds = absl::ToInt64Seconds(since);
    ev.mutable_event_time()->set_seconds(seconds);
    // MicroTime: microsecond precision, as its JSON form.
    ev.mutable_event_time()->set_nanos(static_cast<int32_t>(
        absl::ToInt64Microseconds(since - absl::Seconds(seconds)) * 1000));
    ev.set_reporting_controller(e.reporting_controller);
    ev.set_reporting_instance(e.reporting_instance);
    ev.set_action(e.action);
    ev.set_reason(e.reason);
    ev.set_type(e.type);
    ev.set_note(e.note);
    SetRef(e.regarding, ev.mutable_regarding());
    if (!e.related.name.empty()) SetRef(e.related, ev.mutable_related());
    return {Wrap(ev.SerializeAsString(), "events.k8s.io/v1", "Event"),
            kProtobufContentType};
  }
  const ObjectRef& r = e.regarding;
  nlohmann::json ev = {
      {"apiVersion", "events.k8s.io/v1"},
      {"kind", "Event"},
      {"metadata", {{"name", e.name}, {"namespace", e.namespace_}}},
      {"eventTime", MicroTime(e.event_time)},
      {"reportingController", e.reporting_controller},
      {"reportingInstance", e.reporting_instance},
      {"action", e.action},
      {"reason", e.reason},
      {"type", e.type},
      {"regarding",
       {{"apiVersion", r.api_version},
        {"kind", r.kind},
        {"namespace", r.namespace_},
        {"name", r.name},
        {"uid", r.uid},
        {"resourceVersion", r.resource_version}}},
      {"note", e.note},
  };
  if (const ObjectRef& rel = e.related; !rel.name.empty()) {
    ev["related"] = {{"apiVersion", rel.api_version},
                     {"kind", rel.kind},
                     {"namespace", rel.namespace_},
                     {"name", rel.name},
                     {"uid", rel.uid}};
  }
  if (e.series_count > 0) {
    ev["series"] = {{"count", e.series_count},
                    {"lastObservedTime", MicroTime(e.series_last_observed)}};
  }
  return {ev.dump(), "application/json"};
}

WriteBody EventSeriesPatch(const EventFields& e) {
  nlohmann::json patch = {
      {"series",
       {{"count", e.series_count},
        {"lastObservedTime", MicroTime(e.series_last_observed)}}}};
  return {patch.dump(), "application/strategic-merge-patch+json"};
}

}  // namespace kscore::kube
