#ifndef KSCORE_SHIM_CACHE_OBJECT_FIELDS_H_
#define KSCORE_SHIM_CACHE_OBJECT_FIELDS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "shim/cache/objects.h"

// The one mapping from Kubernetes fields to what the shim keeps, shared by
// the JSON decoder (objects.cc) and the protobuf one (objects_proto.cc):
// each walks its encoding and hands every field it reads to these, so the
// two cannot map a field differently. Internal to the cache.
namespace kscore::cache::fields {

// One entry of a ResourceList ("cpu": "100m") into out; `path` names the
// list in errors. Resources nothing schedules on (e.g. storage) are skipped.
absl::Status AddResource(absl::string_view path, absl::string_view name,
                         absl::string_view quantity, pb::Resources* out);

// A container port: only host ports (> 0) are kept, TCP by default.
void AddPort(int64_t host_port, absl::string_view protocol,
             absl::string_view host_ip, pb::Container* out);

// A node selector requirement without its values (the caller adds them).
pb::NodeSelectorRequirement* AddRequirement(
    absl::string_view key, absl::string_view op,
    google::protobuf::RepeatedPtrField<pb::NodeSelectorRequirement>* out);

void AddToleration(absl::string_view key, absl::string_view op,
                   absl::string_view value, absl::string_view effect,
                   pb::Pod* out);

void AddTaint(absl::string_view key, absl::string_view value,
              absl::string_view effect, pb::Node* out);

// status.conditions[]: a PodScheduled=False condition's message is what the
// shim wrote last; the first PodResizePending condition says whether a
// resize is infeasible.
void AddCondition(absl::string_view type, absl::string_view status,
                  absl::string_view reason, absl::string_view message,
                  PodInfo* p);

// A resource list of the status as PodResourceStatus keeps it: set when it
// has entries (the protobuf encoding cannot tell an empty list from none).
std::optional<pb::Resources> StatusList(pb::Resources list, bool has_entries);

// status.containerStatuses[] then status.initContainerStatuses[]: a
// container's allocatedResources and resources.requests.
void AddContainerStatus(absl::string_view name,
                        std::optional<pb::Resources> allocated,
                        std::optional<pb::Resources> actuated, PodInfo* p);

// status.allocatedResources, whether status.resources is set, and
// status.resources.requests: the pod-level status.
void SetPodStatusResources(std::optional<pb::Resources> allocated,
                           bool has_resources,
                           std::optional<pb::Resources> actuated, PodInfo* p);

// A pod (anti-)affinity term, required or preferred: only its topology key
// travels (the scorer's gates decide what the terms mean).
void AddAffinityTerm(absl::string_view topology_key, pb::PodAffinity* out);
void AddPreferredAffinityTerm(int32_t weight, absl::string_view topology_key,
                              pb::PodAffinity* out);

void AddSpreadConstraint(int32_t max_skew, absl::string_view topology_key,
                         absl::string_view when_unsatisfiable, pb::Pod* out);

// spec.volumes[]: sent only when it claims storage (a persistentVolumeClaim
// or a generic ephemeral volume); others have no say in placement.
void AddVolume(absl::string_view name, bool claim, absl::string_view claim_name,
               bool ephemeral, pb::Pod* out);

void AddResourceClaim(absl::string_view name, pb::Pod* out);

// Once a decoder has read the metadata, spec and status into p: defaults,
// the pb::Pod's identity, the container statuses matched to the spec's
// containers, and the derived requests and host ports. An error for a pod
// without a name.
absl::Status FinishPod(PodInfo* p);

}  // namespace kscore::cache::fields

#endif  // KSCORE_SHIM_CACHE_OBJECT_FIELDS_H_
