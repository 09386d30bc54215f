#ifndef KSCORE_SHIM_OBJECTS_OBJECT_FIELDS_H_
#define KSCORE_SHIM_OBJECTS_OBJECT_FIELDS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "shim/objects/objects.h"

// The one mapping from Kubernetes fields to what the shim keeps, shared by
// the JSON decoder (objects.cc) and the protobuf one (objects_proto.cc):
// each walks its encoding and hands every field it reads to these, so the
// two cannot map a field differently. Internal to objects/.
namespace kscore::objects::fields {

// One entry of a ResourceList ("cpu": "100m") into out; `path` names the
// list in errors. Resources nothing schedules on (e.g. storage) are skipped.
// A malformed or negative quantity is an error (and nothing is added); one
// beyond int64 saturates (ParseQuantity).
absl::Status AddResource(absl::string_view path, absl::string_view name,
                         absl::string_view quantity, pb::Resources* out);

// A bad quantity in one of a pod's resource lists does not drop the pod:
// with `invalid` (&PodInfo::invalid) the first such error is noted there
// and true returned (the entry is left out); without, false.
bool NoteInvalid(const absl::Status& error, std::string* invalid);

// A container port: only host ports (> 0) are kept, TCP by default. One
// above 65535 (the API server admits none) is noted in `invalid`, named
// `<container>.ports[<index>].hostPort`, and left out like a bad quantity:
// a bound pod's ports count on its node, and the scorer refuses a node
// whose ports are not ports.
void AddPort(int64_t host_port, absl::string_view protocol,
             absl::string_view host_ip, absl::string_view container, int index,
             std::string* invalid, pb::Container* out);

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
// resize is infeasible; the first DisruptionTarget one whether a scheduler
// preempted the pod.
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

// A label selector requirement without its values (the caller adds them).
// The caller copies matchLabels itself, and creates the selector only when
// the object has one: an unset selector selects nothing, an empty one
// everything.
pb::LabelSelectorRequirement* AddSelectorRequirement(absl::string_view key,
                                                     absl::string_view op,
                                                     pb::LabelSelector* out);

// A pod (anti-)affinity term, required or preferred, with its topology key;
// the caller adds its selectors and namespaces.
pb::PodAffinityTerm* AddAffinityTerm(absl::string_view topology_key,
                                     pb::PodAffinity* out);
pb::PodAffinityTerm* AddPreferredAffinityTerm(int32_t weight,
                                              absl::string_view topology_key,
                                              pb::PodAffinity* out);

// A topology spread constraint; the caller adds its label selector,
// minDomains (when set) and matchLabelKeys. The policies stay as written:
// empty when unset.
pb::TopologySpreadConstraint* AddSpreadConstraint(
    int32_t max_skew, absl::string_view topology_key,
    absl::string_view when_unsatisfiable,
    absl::string_view node_affinity_policy,
    absl::string_view node_taints_policy, pb::Pod* out);

// metadata.ownerReferences[], in order: the first with controller: true is
// the pod's controller (metav1.GetControllerOf).
void AddOwnerReference(absl::string_view api_version, absl::string_view kind,
                       absl::string_view name, absl::string_view uid,
                       bool controller, PodInfo* p);

// The image of an init container or container (called for the init
// containers first, then the containers), then those of image volumes
// (spec.volumes[].image.reference), each as written.
void AddImage(absl::string_view image, pb::Pod* out);
void AddImageVolume(absl::string_view reference, pb::Pod* out);

// spec.volumes[]: sent only when it claims storage (a persistentVolumeClaim
// or a generic ephemeral volume); others have no say in placement.
void AddVolume(absl::string_view name, bool claim, absl::string_view claim_name,
               bool ephemeral, pb::Pod* out);

// spec.volumes[] of the in-tree kinds VolumeRestrictions checks
// (pb::Pod::inline_disks); the caller sets the monitors of an RBD one.
pb::InlineDisk* AddInlineDisk(pb::DiskKind kind, absl::string_view id,
                              bool read_only, pb::Pod* out);

// spec.volumes[] of an in-tree plugin CSI migration knows
// (pb::Pod::in_tree_volumes; `plugin` one of storage.h's kPlugin*), after
// the pod's claims before it were added; the caller sets azure_kind.
pb::InTreeVolume* AddInTreeVolume(absl::string_view name,
                                  absl::string_view plugin,
                                  absl::string_view id, pb::Pod* out);

void AddResourceClaim(absl::string_view name, pb::Pod* out);

// Once a decoder has read the metadata, spec and status into p: defaults,
// the pb::Pod's identity, the container statuses matched to the spec's
// containers, and the derived requests and host ports. An error for a pod
// without a name.
absl::Status FinishPod(PodInfo* p);

// status.images[] of a node: an image without its names (the caller adds
// them). A negative size counts as 0.
NodeImage* AddNodeImage(int64_t size_bytes, NodeInfo* out);

// Once a decoder has read the node: the images' digest. An error for a node
// without a name.
absl::Status FinishNode(NodeInfo* n);

// An error for a namespace without a name.
absl::Status FinishNamespace(const NamespaceInfo& ns);

// Once a decoder has read the workload's metadata and selector (a map into
// match_labels, or a LabelSelector, set when `selector_set`): whether it
// has a selector. An error for a workload without a name.
absl::Status FinishWorkload(bool selector_set, WorkloadInfo* w);

// Once a decoder has read the budget's metadata, selector (set when
// `selector_set`) and status: whether it has a selector. An error for a
// budget without a name.
absl::Status FinishPdb(bool selector_set, PdbInfo* p);

}  // namespace kscore::objects::fields

#endif  // KSCORE_SHIM_OBJECTS_OBJECT_FIELDS_H_
