#ifndef KSCORE_SHIM_KUBE_PROTOBUF_CODEC_H_
#define KSCORE_SHIM_KUBE_PROTOBUF_CODEC_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"
#include "shim/kube/store.h"

namespace kscore::kube {

// Parses `raw` into `out`, or InvalidArgument naming `what` ("Pod", "list"...).
template <typename Message>
absl::Status ParseMessage(absl::string_view raw, const char* what,
                          Message* out) {
  if (!out->ParseFromArray(raw.data(), static_cast<int>(raw.size()))) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a protobuf ", what, " (", raw.size(), " bytes)"));
  }
  return absl::OkStatus();
}

// The Kubernetes protobuf encoding (what kube-scheduler's client-go asks for
// by default): cheaper than JSON for the API server to encode for every
// watcher and for the shim to read.
inline constexpr char kProtobufContentType[] =
    "application/vnd.kubernetes.protobuf";
// Asked for on lists: protobuf, or JSON from a server that has no protobuf
// for the resource.
inline constexpr char kProtobufOrJson[] =
    "application/vnd.kubernetes.protobuf, application/json";
inline constexpr char kProtobufWatch[] =
    "application/vnd.kubernetes.protobuf;stream=watch";

// True when body starts with the protobuf envelope's magic "k8s\0".
bool IsProtobufEnvelope(absl::string_view body);

// An object's bytes in an envelope (magic + runtime.Unknown naming its
// apiVersion and kind), as the API server takes a protobuf request body.
std::string Wrap(absl::string_view raw, absl::string_view api_version,
                 absl::string_view kind);

// The object bytes inside an envelope (magic + runtime.Unknown).
absl::StatusOr<std::string> Unwrap(absl::string_view body);

struct DecodedList {
  std::vector<std::string> items;  // each object's bytes, still encoded
  std::string resource_version;
  std::string continue_token;
};
// A PodList / NodeList response body (an envelope).
absl::StatusOr<DecodedList> DecodeList(absl::string_view body);

// One frame of a protobuf watch stream (a meta/v1.WatchEvent): the object's
// bytes in `protobuf`. The object of an ERROR event is a Status, given in
// `object` as {"kind": "Status", "code": ..., "message": ..., "reason": ...}
// like its JSON form.
absl::StatusOr<WatchEvent> DecodeWatchFrame(absl::string_view frame);

// metadata.resourceVersion of any object's bytes (e.g. a BOOKMARK's).
absl::StatusOr<std::string> ResourceVersionOf(absl::string_view raw);

// An error response body as text: the message of a protobuf Status, or the
// body itself (JSON or anything else).
std::string ErrorBodyText(absl::string_view body);
// What client-go's error says for such a body: a Status's message (JSON or
// protobuf), else ErrorBodyText.
std::string ErrorMessage(absl::string_view body);

}  // namespace kscore::kube

#endif  // KSCORE_SHIM_KUBE_PROTOBUF_CODEC_H_
