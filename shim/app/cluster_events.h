#ifndef KSCORE_SHIM_APP_CLUSTER_EVENTS_H_
#define KSCORE_SHIM_APP_CLUSTER_EVENTS_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "shim/cache/cache.h"
#include "shim/kube/informer.h"
#include "shim/objects/objects.h"
#include "shim/objects/storage.h"
#include "shim/queue/scheduling_queue.h"

namespace kscore::app {

// The events a node update is made of (UpdateNodeAllocatable,
// UpdateNodeLabel, UpdateNodeTaint, UpdateNodeDeclaredFeature), or one
// generic Update when none of those changed.
std::vector<::kscore::scorer::v1::ClusterEvent> NodeUpdateEvents(
    const ::kscore::scorer::v1::Node& before,
    const ::kscore::scorer::v1::Node& after);

// What the informers' events do to the cache and the queue, as
// kube-scheduler's event handlers: assigned pods go to the cache, pending
// pods of a served profile to the queue, the nominations of pending pods to
// the cache, and changes that may make room move the unschedulable pods
// back. Namespaces, Services, controllers and PodDisruptionBudgets only feed
// the cache. Called on the informers' threads.
class ClusterEvents {
 public:
  using PodPtr = kube::Ptr<objects::PodInfo>;
  using NodePtr = kube::Ptr<objects::NodeInfo>;
  using NamespacePtr = kube::Ptr<objects::NamespaceInfo>;
  using WorkloadPtr = kube::Ptr<objects::WorkloadInfo>;
  using PdbPtr = kube::Ptr<objects::PdbInfo>;

  // `serves` says whether a schedulerName is one of this shim's profiles.
  ClusterEvents(cache::Cache* cache, queue::SchedulingQueue* queue,
                std::function<bool(const std::string&)> serves)
      : cache_(cache), queue_(queue), serves_(std::move(serves)) {}

  void OnPod(const PodPtr& pod);
  // `before` is null for an add.
  void OnPodUpdate(const PodPtr& before, const PodPtr& pod);
  // `pod` may be only what the store keeps (a delete seen by a relist).
  void OnPodDelete(const PodPtr& pod);
  void OnNode(const NodePtr& node);
  // Skips changes that touch nothing the plugins read (status heartbeats).
  // A change of only the images updates the cache without requeueing: no
  // filter reads them, so they make no pod schedulable. Otherwise each of
  // NodeUpdateEvents goes to the queue.
  // `before` may be only what the store keeps (no images, their digest).
  void OnNodeUpdate(const NodePtr& before, const NodePtr& after);
  void OnNodeDelete(const NodePtr& node);

  // Namespace labels and workload selectors: what scoring reads, never a
  // reason to requeue. Deletes may get only what the store keeps.
  void OnNamespace(const NamespacePtr& ns);
  void OnNamespaceDelete(const NamespacePtr& ns);
  void OnWorkload(const WorkloadPtr& w);
  void OnWorkloadDelete(const WorkloadPtr& w);
  // Budgets, which only preemption reads: never a reason to requeue
  // (upstream registers no event for them either).
  void OnPdb(const PdbPtr& pdb);
  void OnPdbDelete(const PdbPtr& pdb);
  // A storage object of `resource` was added (or updated).
  void OnStorage(::kscore::scorer::v1::EventResource resource, bool added);

  // The informers' handlers; `on_synced` runs after each one's first list.
  kube::EventHandlers<objects::PodInfo> PodHandlers(
      std::function<void()> on_synced);
  kube::EventHandlers<objects::NodeInfo> NodeHandlers(
      std::function<void()> on_synced);
  kube::EventHandlers<objects::NamespaceInfo> NamespaceHandlers(
      std::function<void()> on_synced);
  // For the informer of any workload kind.
  kube::EventHandlers<objects::WorkloadInfo> WorkloadHandlers(
      std::function<void()> on_synced);
  kube::EventHandlers<objects::PdbInfo> PdbHandlers(
      std::function<void()> on_synced);
  // The storage objects feed cache::Volumes; their adds and updates move
  // the pods the volume plugins rejected (upstream's storage events).
  kube::EventHandlers<objects::ClaimInfo> ClaimHandlers(
      std::function<void()> on_synced);
  kube::EventHandlers<objects::VolumeInfo> VolumeHandlers(
      std::function<void()> on_synced);
  kube::EventHandlers<objects::StorageClassInfo> StorageClassHandlers(
      std::function<void()> on_synced);
  kube::EventHandlers<objects::CsiDriverInfo> CsiDriverHandlers(
      std::function<void()> on_synced);
  kube::EventHandlers<objects::CapacityInfo> CapacityHandlers(
      std::function<void()> on_synced);
  // NodeVolumeLimits': CSINodes (adds and updates move pods) and
  // VolumeAttachments (deletes do), kept in the cache's nodes.
  kube::EventHandlers<objects::CsiNodeInfo> CsiNodeHandlers(
      std::function<void()> on_synced);
  kube::EventHandlers<objects::AttachmentInfo> AttachmentHandlers(
      std::function<void()> on_synced);

  // Pending pods of served profiles held back by scheduling gates
  // (scheduler_pending_pods{queue="gated"}).
  size_t gated() const;

 private:
  void PodLeftNode(const objects::PodInfo& pod, const std::string& node,
                   std::optional<int32_t> max_priority);
  void SetGated(const std::string& key, bool gated);

  cache::Cache* cache_;
  queue::SchedulingQueue* queue_;
  std::function<bool(const std::string&)> serves_;
  mutable absl::Mutex mu_;
  absl::flat_hash_set<std::string> gated_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kscore::app

#endif  // KSCORE_SHIM_APP_CLUSTER_EVENTS_H_
