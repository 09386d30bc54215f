#include "shim/app/cluster_events.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "google/protobuf/util/message_differencer.h"
#include "model/cluster_event.h"
#include "shim/queue/pod_events.h"

namespace kscore::app {

namespace pb = ::kscore::scorer::v1;

void ClusterEvents::OnPod(const PodPtr& pod) { OnPodUpdate(nullptr, pod); }

void ClusterEvents::OnPodUpdate(const PodPtr& before, const PodPtr& pod) {
  namespace action = model::action;
  if (!pod->node_name.empty()) {
    SetGated(pod->key, false);
    cache_->UpsertAssignedPod(*pod);
    queue_->Delete(pod->key);
    // What the pod's arrival or change may do for pods waiting: upstream's
    // informer stops seeing a pod once it has terminated (a Delete).
    if (before == nullptr || before->node_name.empty()) {
      if (!pod->terminated()) {
        queue_->MoveAllToActiveOrBackoff(
            model::MakeEvent(pb::EVENT_RESOURCE_ASSIGNED_POD, action::kAdd),
            {nullptr, nullptr, nullptr, pod});
      }
    } else if (pod->terminated()) {
      if (!before->terminated()) {
        queue_->MoveAllToActiveOrBackoff(
            model::MakeEvent(pb::EVENT_RESOURCE_ASSIGNED_POD, action::kDelete),
            {nullptr, nullptr, pod, nullptr});
      }
    } else {
      for (const pb::ClusterEvent& e : queue::PodUpdateEvents(
               *before, *pod, pb::EVENT_RESOURCE_ASSIGNED_POD)) {
        queue_->MoveAllToActiveOrBackoff(e, {nullptr, nullptr, before, pod});
      }
    }
    return;
  }
  // The nominations of pending pods (status.nominatedNodeName), whoever set
  // them and whoever schedules the pod: upstream's nominator knows only its
  // own queue's, but a pod of another scheduler waiting for its victims to
  // go needs the room as much.
  const std::string was_nominated = cache_->NominatedNode(pod->key);
  if (pod->deleting || pod->gated) {
    cache_->Nominate(*pod, "");  // it will not be scheduled
  } else {
    cache_->UpdatePendingPod(*pod);
  }
  if (!was_nominated.empty() &&
      cache_->NominatedNode(pod->key) != was_nominated) {
    PodLeftNode(*pod, was_nominated, pod->priority);
  }
  if (!serves_(pod->scheduler_name)) return;  // not ours to schedule
  SetGated(pod->key, pod->gated && !pod->deleting);
  if (pod->deleting || pod->gated) {
    queue_->Delete(pod->key);
    return;
  }
  queue_->AddOrUpdate(pod);
}

void ClusterEvents::SetGated(const std::string& key, bool gated) {
  absl::MutexLock lock(&mu_);
  if (gated) {
    gated_.insert(key);
  } else {
    gated_.erase(key);
  }
}

size_t ClusterEvents::gated() const {
  absl::MutexLock lock(&mu_);
  return gated_.size();
}

// An assigned pod's delete for the pods waiting: `pod` no longer holds room
// on `node`. The store may keep only part of the pod; `node` is what it
// held. Upstream treats a nominated pod as assigned for pods of its
// priority or lower (`max_priority`): when the nomination goes (the pod
// deleted, or nominated elsewhere), those pods see this event.
void ClusterEvents::PodLeftNode(const objects::PodInfo& pod,
                                const std::string& node,
                                std::optional<int32_t> max_priority) {
  auto gone = std::make_shared<objects::PodInfo>(pod);
  gone->pod.set_node_name(node);
  queue_->MoveAllToActiveOrBackoff(
      model::MakeEvent(pb::EVENT_RESOURCE_ASSIGNED_POD, model::action::kDelete),
      {nullptr, nullptr, std::move(gone), nullptr}, max_priority);
}

void ClusterEvents::OnPodDelete(const PodPtr& pod) {
  SetGated(pod->key, false);
  const std::string node = cache_->NodeOf(pod->key);
  const bool was_assigned = !node.empty();
  const std::string nominated =
      was_assigned ? "" : cache_->NominatedNode(pod->key);
  cache_->RemovePod(pod->key);
  queue_->Delete(pod->key);
  if (!nominated.empty()) PodLeftNode(*pod, nominated, pod->priority);
  if (was_assigned) PodLeftNode(*pod, node, std::nullopt);  // room freed
}

void ClusterEvents::OnNode(const NodePtr& node) {
  cache_->UpsertNode(node->node, node->images);
  queue_->MoveAllToActiveOrBackoff(
      model::MakeEvent(pb::EVENT_RESOURCE_NODE, model::action::kAdd),
      {nullptr, node, nullptr, nullptr});
}

std::vector<pb::ClusterEvent> NodeUpdateEvents(const pb::Node& before,
                                               const pb::Node& after) {
  using google::protobuf::util::MessageDifferencer;
  namespace action = model::action;
  std::vector<pb::ClusterEvent> events;
  auto add = [&](uint32_t a) {
    events.push_back(model::MakeEvent(pb::EVENT_RESOURCE_NODE, a));
  };
  if (!MessageDifferencer::Equals(before.allocatable(), after.allocatable())) {
    add(action::kUpdateNodeAllocatable);
  }
  bool labels = before.labels_size() != after.labels_size();
  for (const auto& [key, value] : before.labels()) {
    if (labels) break;
    auto it = after.labels().find(key);
    labels = it == after.labels().end() || it->second != value;
  }
  if (labels) add(action::kUpdateNodeLabel);
  // kube-scheduler counts spec.unschedulable as a taint change.
  bool taints = before.unschedulable() != after.unschedulable() ||
                before.taints_size() != after.taints_size();
  for (int i = 0; !taints && i < before.taints_size(); ++i) {
    taints = !MessageDifferencer::Equals(before.taints(i), after.taints(i));
  }
  if (taints) add(action::kUpdateNodeTaint);
  if (!std::equal(
          before.declared_features().begin(), before.declared_features().end(),
          after.declared_features().begin(), after.declared_features().end())) {
    add(action::kUpdateNodeDeclaredFeature);
  }
  if (events.empty()) add(action::kUpdate);
  return events;
}

void ClusterEvents::OnNodeUpdate(const NodePtr& before, const NodePtr& after) {
  // Heartbeats change nothing in the projection: skip them, so thousands
  // of nodes do not re-queue every unschedulable pod.
  if (google::protobuf::util::MessageDifferencer::Equals(before->node,
                                                         after->node)) {
    if (before->images_digest != after->images_digest) {
      cache_->UpsertNode(after->node, after->images);
    }
    return;
  }
  cache_->UpsertNode(after->node, after->images);
  for (const pb::ClusterEvent& event :
       NodeUpdateEvents(before->node, after->node)) {
    queue_->MoveAllToActiveOrBackoff(event, {before, after, nullptr, nullptr});
  }
}

void ClusterEvents::OnNodeDelete(const NodePtr& node) {
  cache_->RemoveNode(node->node.name());
  // PodTopologySpread registers it: a domain may be gone.
  queue_->MoveAllToActiveOrBackoff(
      model::MakeEvent(pb::EVENT_RESOURCE_NODE, model::action::kDelete),
      {node, nullptr, nullptr, nullptr});
}

void ClusterEvents::OnNamespace(const NamespacePtr& ns) {
  cache_->UpsertNamespace(ns->name, ns->labels);
}

void ClusterEvents::OnNamespaceDelete(const NamespacePtr& ns) {
  cache_->RemoveNamespace(ns->name);
}

void ClusterEvents::OnWorkload(const WorkloadPtr& w) {
  cache_->UpsertWorkload(w->kind, w->namespace_, w->name, w->has_selector,
                         w->selector);
}

void ClusterEvents::OnWorkloadDelete(const WorkloadPtr& w) {
  cache_->RemoveWorkload(w->kind, w->namespace_, w->name);
}

void ClusterEvents::OnPdb(const PdbPtr& pdb) { cache_->UpsertPdb(pdb); }

void ClusterEvents::OnPdbDelete(const PdbPtr& pdb) {
  cache_->RemovePdb(pdb->namespace_, pdb->name);
}

kube::EventHandlers<objects::PodInfo> ClusterEvents::PodHandlers(
    std::function<void()> on_synced) {
  kube::EventHandlers<objects::PodInfo> h;
  h.on_add = [this](const PodPtr& pod) { OnPod(pod); };
  h.on_update = [this](const PodPtr& before, const PodPtr& pod) {
    OnPodUpdate(before, pod);
  };
  h.on_delete = [this](const PodPtr& pod) { OnPodDelete(pod); };
  h.on_synced = std::move(on_synced);
  return h;
}

kube::EventHandlers<objects::NodeInfo> ClusterEvents::NodeHandlers(
    std::function<void()> on_synced) {
  kube::EventHandlers<objects::NodeInfo> h;
  h.on_add = [this](const NodePtr& node) { OnNode(node); };
  h.on_update = [this](const NodePtr& before, const NodePtr& after) {
    OnNodeUpdate(before, after);
  };
  h.on_delete = [this](const NodePtr& node) { OnNodeDelete(node); };
  h.on_synced = std::move(on_synced);
  return h;
}

kube::EventHandlers<objects::NamespaceInfo> ClusterEvents::NamespaceHandlers(
    std::function<void()> on_synced) {
  kube::EventHandlers<objects::NamespaceInfo> h;
  h.on_add = [this](const NamespacePtr& ns) { OnNamespace(ns); };
  h.on_update = [this](const NamespacePtr&, const NamespacePtr& ns) {
    OnNamespace(ns);
  };
  h.on_delete = [this](const NamespacePtr& ns) { OnNamespaceDelete(ns); };
  h.on_synced = std::move(on_synced);
  return h;
}

kube::EventHandlers<objects::WorkloadInfo> ClusterEvents::WorkloadHandlers(
    std::function<void()> on_synced) {
  kube::EventHandlers<objects::WorkloadInfo> h;
  h.on_add = [this](const WorkloadPtr& w) { OnWorkload(w); };
  h.on_update = [this](const WorkloadPtr&, const WorkloadPtr& w) {
    OnWorkload(w);
  };
  h.on_delete = [this](const WorkloadPtr& w) { OnWorkloadDelete(w); };
  h.on_synced = std::move(on_synced);
  return h;
}

kube::EventHandlers<objects::PdbInfo> ClusterEvents::PdbHandlers(
    std::function<void()> on_synced) {
  kube::EventHandlers<objects::PdbInfo> h;
  h.on_add = [this](const PdbPtr& pdb) { OnPdb(pdb); };
  h.on_update = [this](const PdbPtr&, const PdbPtr& pdb) { OnPdb(pdb); };
  h.on_delete = [this](const PdbPtr& pdb) { OnPdbDelete(pdb); };
  h.on_synced = std::move(on_synced);
  return h;
}

void ClusterEvents::OnStorage(pb::EventResource resource, bool added) {
  queue_->MoveAllToActiveOrBackoff(model::MakeEvent(
      resource, added ? model::action::kAdd : model::action::kUpdate));
}

namespace {

// Handlers that keep a storage kind in cache::Volumes (`upsert` on add and
// update, `remove` on delete) and report adds and updates as `resource`.
template <typename T, typename Upsert, typename Remove>
kube::EventHandlers<T> StorageHandlers(ClusterEvents* events,
                                       pb::EventResource resource,
                                       Upsert upsert, Remove remove,
                                       std::function<void()> on_synced) {
  kube::EventHandlers<T> h;
  h.on_add = [=](const kube::Ptr<T>& o) {
    upsert(o);
    events->OnStorage(resource, true);
  };
  h.on_update = [=](const kube::Ptr<T>&, const kube::Ptr<T>& o) {
    upsert(o);
    events->OnStorage(resource, false);
  };
  h.on_delete = [=](const kube::Ptr<T>& o) { remove(*o); };
  h.on_synced = std::move(on_synced);
  return h;
}

}  // namespace

kube::EventHandlers<objects::ClaimInfo> ClusterEvents::ClaimHandlers(
    std::function<void()> on_synced) {
  cache::Volumes* v = &cache_->volumes();
  return StorageHandlers<objects::ClaimInfo>(
      this, pb::EVENT_RESOURCE_PERSISTENT_VOLUME_CLAIM,
      [v](const kube::Ptr<objects::ClaimInfo>& c) { v->UpsertClaim(c); },
      [v](const objects::ClaimInfo& c) {
        v->RemoveClaim(c.namespace_, c.name);
      },
      std::move(on_synced));
}

kube::EventHandlers<objects::VolumeInfo> ClusterEvents::VolumeHandlers(
    std::function<void()> on_synced) {
  cache::Volumes* v = &cache_->volumes();
  return StorageHandlers<objects::VolumeInfo>(
      this, pb::EVENT_RESOURCE_PERSISTENT_VOLUME,
      [v](const kube::Ptr<objects::VolumeInfo>& o) { v->UpsertVolume(o); },
      [v](const objects::VolumeInfo& o) { v->RemoveVolume(o.pv.name()); },
      std::move(on_synced));
}

kube::EventHandlers<objects::StorageClassInfo>
ClusterEvents::StorageClassHandlers(std::function<void()> on_synced) {
  cache::Volumes* v = &cache_->volumes();
  return StorageHandlers<objects::StorageClassInfo>(
      this, pb::EVENT_RESOURCE_STORAGE_CLASS,
      [v](const kube::Ptr<objects::StorageClassInfo>& o) { v->UpsertClass(o); },
      [v](const objects::StorageClassInfo& o) { v->RemoveClass(o.sc.name()); },
      std::move(on_synced));
}

kube::EventHandlers<objects::CsiDriverInfo> ClusterEvents::CsiDriverHandlers(
    std::function<void()> on_synced) {
  cache::Volumes* v = &cache_->volumes();
  return StorageHandlers<objects::CsiDriverInfo>(
      this, pb::EVENT_RESOURCE_CSI_DRIVER,
      [v](const kube::Ptr<objects::CsiDriverInfo>& o) { v->UpsertDriver(o); },
      [v](const objects::CsiDriverInfo& o) { v->RemoveDriver(o.name); },
      std::move(on_synced));
}

kube::EventHandlers<objects::CapacityInfo> ClusterEvents::CapacityHandlers(
    std::function<void()> on_synced) {
  cache::Volumes* v = &cache_->volumes();
  return StorageHandlers<objects::CapacityInfo>(
      this, pb::EVENT_RESOURCE_CSI_STORAGE_CAPACITY,
      [v](const kube::Ptr<objects::CapacityInfo>& o) { v->UpsertCapacity(o); },
      [v](const objects::CapacityInfo& o) {
        v->RemoveCapacity(o.namespace_, o.name);
      },
      std::move(on_synced));
}

kube::EventHandlers<objects::CsiNodeInfo> ClusterEvents::CsiNodeHandlers(
    std::function<void()> on_synced) {
  cache::Cache* c = cache_;
  return StorageHandlers<objects::CsiNodeInfo>(
      this, pb::EVENT_RESOURCE_CSI_NODE,
      [c](const kube::Ptr<objects::CsiNodeInfo>& o) { c->UpsertCsiNode(*o); },
      [c](const objects::CsiNodeInfo& o) { c->RemoveCsiNode(o.name); },
      std::move(on_synced));
}

kube::EventHandlers<objects::AttachmentInfo> ClusterEvents::AttachmentHandlers(
    std::function<void()> on_synced) {
  cache::Cache* c = cache_;
  kube::EventHandlers<objects::AttachmentInfo> h;
  h.on_add = [c](const kube::Ptr<objects::AttachmentInfo>& o) {
    c->UpsertAttachment(*o);
  };
  h.on_update = [c](const kube::Ptr<objects::AttachmentInfo>&,
                    const kube::Ptr<objects::AttachmentInfo>& o) {
    c->UpsertAttachment(*o);
  };
  // Only a deletion frees a volume slot (upstream registers only it).
  h.on_delete = [this, c](const kube::Ptr<objects::AttachmentInfo>& o) {
    c->RemoveAttachment(o->name);
    queue_->MoveAllToActiveOrBackoff(model::MakeEvent(
        pb::EVENT_RESOURCE_VOLUME_ATTACHMENT, model::action::kDelete));
  };
  h.on_synced = std::move(on_synced);
  return h;
}

}  // namespace kscore::app
