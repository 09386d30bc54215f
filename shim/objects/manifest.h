#ifndef KSCORE_SHIM_OBJECTS_MANIFEST_H_
#define KSCORE_SHIM_OBJECTS_MANIFEST_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "shim/objects/objects.h"

namespace kscore::objects {

// A Pod manifest as a client sends it (kubectl kscore what-if): JSON text,
// bounded in depth (kube::ParseJson), decoded by the decoder of pods from
// the API server (PodFromJson, so a field of the wrong type is refused by
// name), with what the API server would fill in: namespace "default", a
// name from generateName, a uid, schedulerName "default-scheduler".
// InvalidArgument naming the fault; a pod with spec.nodeName set is one (no
// scheduler places it).
absl::StatusOr<PodInfo> PodFromManifest(absl::string_view json);

}  // namespace kscore::objects

#endif  // KSCORE_SHIM_OBJECTS_MANIFEST_H_
