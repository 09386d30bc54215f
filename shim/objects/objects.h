#ifndef KSCORE_SHIM_OBJECTS_OBJECTS_H_
#define KSCORE_SHIM_OBJECTS_OBJECTS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "kscore/scorer/v1/scorer.pb.h"
#include "model/pod_resources.h"
#include "model/selectors.h"
#include "nlohmann/json.hpp"

namespace kscore::objects {

namespace pb = ::kscore::scorer::v1;

// An image of a node (status.images[]): every name it goes by, and its size.
struct NodeImage {
  std::vector<std::string> names;
  int64_t size_bytes = 0;
};

// The controllers default spreading reads, and Services.
enum class WorkloadKind {
  kService,
  kReplicaSet,
  kStatefulSet,
  kReplicationController
};

// What the shim keeps of a Pod: the compact pb::Pod the scorer reads, plus
// what the queue and the cache need. Built once per informer event.
struct PodInfo {
  std::string key;  // namespace/name
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string resource_version;
  std::string scheduler_name;
  std::string node_name;  // spec.nodeName: set once bound (or assumed)
  std::string phase;
  bool deleting = false;  // metadata.deletionTimestamp set
  bool gated = false;     // spec.schedulingGates not empty
  int32_t priority = 0;
  absl::Time created;
  // The message of a PodScheduled=False condition, if any: the shim patches
  // the condition only when its message changes.
  std::string unschedulable_message;
  // status.nominatedNodeName: where a preemption (the shim's, or another
  // scheduler's before it) nominated the pending pod to run.
  std::string nominated_node_name;
  // status.startTime, unset until the kubelet starts the pod.
  std::optional<absl::Time> start_time;
  // The first DisruptionTarget condition is True with reason
  // PreemptionByScheduler: a scheduler preempted the pod.
  bool preempted_by_scheduler = false;
  bool seen_disruption_target = false;  // only the first such condition counts

  // What the status reports of the pod's resources, which counts on its
  // node while an in-place resize is under way. The decoders fill
  // container_names (containers, then init containers, as in the spec),
  // container_statuses (containerStatuses, then initContainerStatuses: the
  // order kube-scheduler searches them by name) and the pod-level part of
  // resource_status; FinishPod matches the containers up.
  struct ContainerStatus {
    std::string name;
    model::PodResourceStatus::Container resources;
  };
  std::vector<std::string> container_names;
  std::vector<ContainerStatus> container_statuses;
  model::PodResourceStatus resource_status;
  bool seen_resize_pending = false;  // only the first such condition counts

  // Why the pod cannot be scheduled as it came, or empty: the first
  // resource quantity of its spec or status that is malformed or negative,
  // with its path. Such an entry is left out of `pod` and the requests
  // below; the shim reports the pod unschedulable with this message rather
  // than place it by the rest (a bound pod still counts on its node).
  std::string invalid;

  pb::Pod pod;
  // What the pod holds on a node (model::AssignedPodRequests): effective
  // requests, and with the non-zero defaults, for scoring.
  pb::Resources requests;
  pb::Resources non_zero;
  std::vector<pb::HostPort> host_ports;

  // The ownerReference with controller: true, if any.
  std::string controller_api_version;
  std::string controller_kind;
  std::string controller_name;
  std::string controller_uid;

  bool terminated() const { return phase == "Succeeded" || phase == "Failed"; }
  // Upstream's PodTerminatingByPreemption: being deleted because a
  // scheduler preempted it.
  bool terminating_by_preemption() const {
    return deleting && preempted_by_scheduler;
  }
};

// A Pod from its JSON, or from its Kubernetes protobuf encoding (the
// object's bytes without envelope, as a list or watch event carries it): the
// same PodInfo for the same object either way.
absl::StatusOr<PodInfo> PodFromJson(const nlohmann::json& obj);
absl::StatusOr<PodInfo> PodFromProto(absl::string_view raw);

// What the shim keeps of a Node: name, labels, taints, unschedulable and
// allocatable (all the plugins read of it), its images, and the identity its
// informer diffs on.
struct NodeInfo {
  std::string uid;
  std::string resource_version;
  pb::Node node;
  // status.images[], as listed.
  std::vector<NodeImage> images;
  // A digest of `images`: the informer's store keeps it instead of the
  // images (up to 50 per node), enough to tell that they changed.
  uint64_t images_digest = 0;
};

// From either encoding, as for pods.
absl::StatusOr<NodeInfo> NodeFromJson(const nlohmann::json& obj);
absl::StatusOr<NodeInfo> NodeFromProto(absl::string_view raw);

// NodeInfo::images_digest of `images`: equal lists give equal digests
// within one process (absl::Hash is seeded per process); no images give 0.
uint64_t ImagesDigest(const std::vector<NodeImage>& images);

// What the shim keeps of a Namespace: its labels, which namespace selectors
// of pod affinity terms match.
struct NamespaceInfo {
  std::string name;
  std::string uid;
  std::string resource_version;
  model::LabelMap labels;
};

absl::StatusOr<NamespaceInfo> NamespaceFromJson(const nlohmann::json& obj);
absl::StatusOr<NamespaceInfo> NamespaceFromProto(absl::string_view raw);

// What the shim keeps of a Service, ReplicaSet, StatefulSet or
// ReplicationController: its spec.selector, which kube-scheduler's default
// spreading reads. A Service's and a ReplicationController's map selector
// becomes match_labels; has_selector is false for a map that is empty or
// unset (selects no pod) and for a ReplicaSet or StatefulSet without
// spec.selector.
struct WorkloadInfo {
  WorkloadKind kind = WorkloadKind::kService;
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string resource_version;
  bool has_selector = false;
  pb::LabelSelector selector;
};

// The kind's name in the API ("Service", "ReplicaSet", ...).
const char* WorkloadKindName(WorkloadKind kind);

// The object must be of `kind`: the informer of each kind says which.
absl::StatusOr<WorkloadInfo> WorkloadFromJson(WorkloadKind kind,
                                              const nlohmann::json& obj);
absl::StatusOr<WorkloadInfo> WorkloadFromProto(WorkloadKind kind,
                                               absl::string_view raw);

// What the shim keeps of a PodDisruptionBudget (policy/v1): what upstream's
// preemption reads of it to tell which victims the budget protects.
// has_selector is false when spec.selector is unset; an unset or empty
// selector protects no pod there (Cache::PdbsCovering).
struct PdbInfo {
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string resource_version;
  bool has_selector = false;
  pb::LabelSelector selector;
  int32_t disruptions_allowed = 0;  // status.disruptionsAllowed
  // The names in status.disruptedPods: evictions the API server has
  // admitted but whose pods are not gone yet; preemption does not charge
  // them to the budget again.
  absl::flat_hash_set<std::string> disrupted_pods;
};

absl::StatusOr<PdbInfo> PdbFromJson(const nlohmann::json& obj);
absl::StatusOr<PdbInfo> PdbFromProto(absl::string_view raw);

// RFC 3339 time as the API server writes it ("2026-12-02T11:36:57Z").
absl::Time ParseTime(const std::string& s);

}  // namespace kscore::objects

#endif  // KSCORE_SHIM_OBJECTS_OBJECTS_H_
