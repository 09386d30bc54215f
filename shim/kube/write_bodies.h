#ifndef KSCORE_SHIM_KUBE_WRITE_BODIES_H_
#define KSCORE_SHIM_KUBE_WRITE_BODIES_H_

#include <cstdint>
#include <string>

#include "absl/time/time.h"

namespace kscore::kube {

// A request body and its Content-Type.
struct WriteBody {
  std::string data;
  std::string content_type;
};

struct ObjectRef {
  std::string api_version;
  std::string kind;
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string resource_version;
};

// An events.k8s.io/v1 Event.
struct EventFields {
  std::string namespace_;
  std::string name;
  absl::Time event_time;
  std::string reporting_controller;
  std::string reporting_instance;
  std::string action;
  std::string reason;
  std::string type;
  std::string note;
  ObjectRef regarding;
  // Another object the event is about (a preemptor); unset when name is
  // empty.
  ObjectRef related;
  // An event series (client-go's events recorder): count > 1 when set.
  int32_t series_count = 0;
  absl::Time series_last_observed;
};

// The body of POST .../pods/NAME/binding: JSON, or the protobuf envelope
// (application/vnd.kubernetes.protobuf).
WriteBody BindingBody(bool protobuf, const std::string& namespace_,
                      const std::string& name, const std::string& uid,
                      const std::string& node);

// The body of POST /apis/events.k8s.io/v1/namespaces/NS/events. An event
// with a series is always JSON (the protobuf subset has no series; such
// creations are rare: a series whose event was deleted).
WriteBody EventBody(bool protobuf, const EventFields& event);

// The strategic-merge patch of PATCH .../events/NAME that writes a series'
// count and last observation, as client-go's recorder sends it.
WriteBody EventSeriesPatch(const EventFields& event);

}  // namespace kscore::kube

#endif  // KSCORE_SHIM_KUBE_WRITE_BODIES_H_
