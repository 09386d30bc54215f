#ifndef KSCORE_SHIM_CACHE_OBJECT_FIELDS_H_
#define KSCORE_SHIM_CACHE_OBJECT_FIELDS_H_

#include <cstdint>
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
// shim wrote last.
void AddCondition(absl::string_view type, absl::string_view status,
                  absl::string_view message, PodInfo* p);

// What the unsupported rule looks at, as either decoder finds it in the
// spec.
struct Constraints {
  bool required_pod_affinity = false;       // podAffinity required terms
  bool required_pod_anti_affinity = false;  // podAntiAffinity required terms
  // A topologySpreadConstraint whose whenUnsatisfiable is not ScheduleAnyway.
  bool hard_topology_spread = false;
  bool claim_volume = false;  // a persistentVolumeClaim or ephemeral volume
  bool resource_claims = false;
};

// Once a decoder has read the metadata, spec and status into p: defaults,
// the pb::Pod's identity, the derived requests and host ports, and the
// unsupported reason. An error for a pod without a name.
absl::Status FinishPod(const Constraints& constraints, PodInfo* p);

}  // namespace kscore::cache::fields

#endif  // KSCORE_SHIM_CACHE_OBJECT_FIELDS_H_
