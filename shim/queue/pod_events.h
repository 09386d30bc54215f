#ifndef KSCORE_SHIM_QUEUE_POD_EVENTS_H_
#define KSCORE_SHIM_QUEUE_POD_EVENTS_H_

#include <vector>

#include "kscore/scorer/v1/scorer.pb.h"
#include "shim/objects/objects.h"

namespace kscore::queue {

// kube-scheduler's PodSchedulingPropertiesChange: the events a pod update is
// made of (UpdatePodLabel, UpdatePodScaleDown, UpdatePodScaleUp,
// UpdatePodToleration), or one generic Update when none of those changed,
// for `resource` (the rejected pod itself, TARGET_POD, or an ASSIGNED_POD).
std::vector<::kscore::scorer::v1::ClusterEvent> PodUpdateEvents(
    const objects::PodInfo& before, const objects::PodInfo& after,
    ::kscore::scorer::v1::EventResource resource);

}  // namespace kscore::queue

#endif  // KSCORE_SHIM_QUEUE_POD_EVENTS_H_
