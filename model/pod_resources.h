#ifndef KSCORE_MODEL_POD_RESOURCES_H_
#define KSCORE_MODEL_POD_RESOURCES_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "kscore/scorer/v1/scorer.pb.h"

namespace kscore::model {

namespace pb = ::kscore::scorer::v1;

// kube-scheduler's defaults for a container that requests no CPU or no
// memory, used when scoring (schedutil.DefaultMilliCPURequest /
// DefaultMemoryRequest).
inline constexpr int64_t kDefaultMilliCpuRequest = 100;
inline constexpr int64_t kDefaultMemoryRequest = int64_t{200} * 1024 * 1024;

// What the kubelet reports of a running pod's resources (its status). While
// an in-place resize is under way these differ from the spec, and the pod
// holds the larger of the two on its node. A list left unset is absent (nil)
// in the pod.
struct PodResourceStatus {
  struct Container {
    std::optional<pb::Resources> allocated;  // allocatedResources
    std::optional<pb::Resources> actuated;   // resources.requests
  };
  // One entry per pod.containers() and per pod.init_containers(), in order:
  // the container status of the same name (empty entries when there is none;
  // missing trailing entries count as empty).
  std::vector<Container> containers;
  std::vector<Container> init_containers;
  // Pod-level status: status.allocatedResources, whether status.resources is
  // set, and status.resources.requests.
  std::optional<pb::Resources> allocated;
  bool has_resources = false;
  std::optional<pb::Resources> actuated;
  // The PodResizePending condition says Infeasible: the spec is left out.
  bool resize_infeasible = false;
};

// The incoming pod's effective requests, as k8s.io/component-helpers'
// resource.PodRequests with kube-scheduler v1.37's default feature gates:
// regular containers and restartable (sidecar) init containers run together
// and add up; each other init container runs alone next to the sidecars
// started before it; the pod needs the larger of the two, per resource. Where
// pod-level requests (spec.resources) set cpu, memory or hugepages, they
// replace that sum. Then overhead adds. `pods` is always 0. A resource is
// present in the result when any list it comes from has it.
pb::Resources PodRequests(const pb::Pod& pod);

// The incoming pod's requests as NodeResourcesFit scores it: a container
// (regular or init) that has no CPU request counts as requesting
// kDefaultMilliCpuRequest, and likewise for memory; a request set to zero
// stays zero (resource.PodRequests with NonMissingContainerRequests), so that
// pods without requests still weigh on a node. Pod-level requests are left
// out, as upstream leaves them out there: v1.37's NodeResourcesFit builds its
// scorer without the PodLevelResources gate (its Filter and
// NodeResourcesBalancedAllocation do read them).
pb::Resources PodNonZeroRequests(const pb::Pod& pod);

// What a pod holds on its node (framework.PodInfo.CalculateResource): its
// requests, counting the status as well as the spec during a resize, and its
// requests with the non-zero defaults for the node's non-zero aggregate
// (only cpu and memory of non_zero are meant to be read).
struct AssignedPodResources {
  pb::Resources requests;
  pb::Resources non_zero;
};
AssignedPodResources AssignedPodRequests(const pb::Pod& pod,
                                         const PodResourceStatus& status);

}  // namespace kscore::model

#endif  // KSCORE_MODEL_POD_RESOURCES_H_
