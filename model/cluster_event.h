#ifndef KSCORE_MODEL_CLUSTER_EVENT_H_
#define KSCORE_MODEL_CLUSTER_EVENT_H_

// kube-scheduler's cluster events (framework.ClusterEvent): what plugins
// register (EventsToRegister) and what the shim's queue matches against the
// plugins that rejected a pod.

#include <cstdint>
#include <ostream>
#include <string>

#include "kscore/scorer/v1/scorer.pb.h"

namespace kscore::model {

namespace pb = ::kscore::scorer::v1;

// kube-scheduler's ActionType bits, same values.
namespace action {
inline constexpr uint32_t kAdd = 1u << 0;
inline constexpr uint32_t kDelete = 1u << 1;
inline constexpr uint32_t kUpdateNodeAllocatable = 1u << 2;
inline constexpr uint32_t kUpdateNodeLabel = 1u << 3;
inline constexpr uint32_t kUpdateNodeTaint = 1u << 4;
inline constexpr uint32_t kUpdateNodeCondition = 1u << 5;
inline constexpr uint32_t kUpdateNodeAnnotation = 1u << 6;
inline constexpr uint32_t kUpdateNodeDeclaredFeature = 1u << 7;
inline constexpr uint32_t kUpdateNodePreemptionPolicy = 1u << 8;
inline constexpr uint32_t kUpdatePodLabel = 1u << 9;
inline constexpr uint32_t kUpdatePodScaleDown = 1u << 10;
inline constexpr uint32_t kUpdatePodScaleUp = 1u << 11;
inline constexpr uint32_t kUpdatePodToleration = 1u << 12;
inline constexpr uint32_t kUpdatePodSchedulingGatesEliminated = 1u << 13;
inline constexpr uint32_t kUpdatePodGeneratedResourceClaim = 1u << 14;
inline constexpr uint32_t kAll = (1u << 15) - 1;
inline constexpr uint32_t kUpdate = kAll & ~(kAdd | kDelete);
}  // namespace action

inline pb::ClusterEvent MakeEvent(pb::EventResource resource, uint32_t actions,
                                  bool hinted = false) {
  pb::ClusterEvent e;
  e.set_resource(resource);
  e.set_action_type(actions);
  e.set_hinted(hinted);
  return e;
}

// kube-scheduler's QueueingHint.
enum class QueueingHint { kQueueSkip, kQueue };
// Upstream's names, "Queue" and "QueueSkip" (for logs and test failures).
inline std::ostream& operator<<(std::ostream& os, QueueingHint h) {
  return os << (h == QueueingHint::kQueue ? "Queue" : "QueueSkip");
}

// A cluster event with its object before and after (null when absent: no
// before for an add, no after for a delete): nodes for NODE events, the
// other pod for ASSIGNED_POD ones.
struct EventObjects {
  pb::ClusterEvent event;
  const pb::Node* old_node = nullptr;
  const pb::Node* new_node = nullptr;
  const pb::Pod* old_pod = nullptr;
  const pb::Pod* new_pod = nullptr;
};

// Every event: what a plugin that registers nothing in particular gets, and
// the queue's own events (UnschedulableTimeout).
inline bool IsWildCard(const pb::ClusterEvent& e) {
  return e.resource() == pb::EVENT_RESOURCE_WILDCARD &&
         e.action_type() == action::kAll;
}

// kube-scheduler's MatchClusterEvents: whether `incoming` is one of the
// events `registered` stands for.
bool MatchClusterEvents(const pb::ClusterEvent& registered,
                        const pb::ClusterEvent& incoming);

// kube-scheduler's event label ("NodeAdd", "AssignedPodDelete",
// "NodeUpdateNodeTaint"...), as scheduler_queue_incoming_pods_total uses.
std::string EventLabel(const pb::ClusterEvent& e);

}  // namespace kscore::model

#endif  // KSCORE_MODEL_CLUSTER_EVENT_H_
