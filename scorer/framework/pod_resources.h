#ifndef KSCORE_SCORER_FRAMEWORK_POD_RESOURCES_H_
#define KSCORE_SCORER_FRAMEWORK_POD_RESOURCES_H_

#include <cstdint>

#include "kscore/scorer/v1/scorer.pb.h"

namespace kscore::framework {

namespace pb = ::kscore::scorer::v1;

// kube-scheduler's defaults for a container that requests no CPU or no
// memory, used when scoring (schedutil.DefaultMilliCPURequest /
// DefaultMemoryRequest).
inline constexpr int64_t kDefaultMilliCpuRequest = 100;
inline constexpr int64_t kDefaultMemoryRequest = int64_t{200} * 1024 * 1024;

// The pod's effective requests, as k8s.io/component-helpers'
// resource.PodRequests: regular containers and restartable (sidecar) init
// containers run together and add up; each other init container runs alone
// next to the sidecars started before it; the pod needs the larger of the two,
// per resource, plus its overhead. `pods` is always 0.
pb::Resources PodRequests(const pb::Pod& pod);

// Like PodRequests, but a container (regular or init) that requests no CPU
// counts as requesting kDefaultMilliCpuRequest, and likewise for memory
// (resource.PodRequests with NonMissingContainerRequests). Other resources are
// as in PodRequests. Scoring uses it so that pods without requests still
// weigh on a node. A request explicitly set to zero cannot be told from a
// missing one in the proto, so it gets the default too.
pb::Resources PodNonZeroRequests(const pb::Pod& pod);

}  // namespace kscore::framework

#endif  // KSCORE_SCORER_FRAMEWORK_POD_RESOURCES_H_
