// Cache's bookkeeping for NodeVolumeLimits: per node, the distinct CSI
// volumes its pods and VolumeAttachments use, kept as pods, claims,
// volumes, classes and attachments change (each change re-resolves only the
// pods and attachments that read the object).
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "shim/cache/cache.h"

namespace kscore::cache {
namespace {

constexpr char kPodDep = 'p';
constexpr char kAttachmentDep = 'a';

}  // namespace

Cache::Cache() {
  volumes_.SetOnChange([this](const std::string& dep) { StorageChanged(dep); });
}

void Cache::ResolveCsiLocked(PodEntry* e) const {
  e->csi.clear();
  e->csi_error.clear();
  e->csi_deps.clear();
  if (e->claims == nullptr) return;
  Volumes::PodAttachables a = volumes_.AttachableOf(*e->claims, &e->csi_deps);
  e->csi = std::move(a.volumes);
  if (a.error.has_value()) e->csi_error = a.error->message();
}

void Cache::UseCsiVolume(NodeEntry* n, const std::string& unique,
                         const std::string& driver, int32_t delta,
                         bool attacher) {
  using CsiVolume = NodeEntry::CsiVolume;
  // Upstream counts a volume under its pods' driver, or else under the
  // attacher of the VolumeAttachment naming it.
  const auto counted = [](const CsiVolume& v) -> const std::string* {
    if (v.pods > 0) return &v.driver;
    if (v.attachments > 0) return &v.attacher;
    return nullptr;
  };
  CsiVolume& v = n->csi_volumes[unique];
  if (const std::string* before = counted(v); before != nullptr) {
    auto it = n->csi_attached.find(*before);
    if (it != n->csi_attached.end() && --it->second <= 0)
      n->csi_attached.erase(it);
  }
  if (attacher) {
    v.attachments += delta;
    if (delta > 0) v.attacher = driver;
  } else {
    v.pods += delta;
    if (delta > 0) v.driver = driver;
  }
  if (const std::string* after = counted(v); after != nullptr) {
    ++n->csi_attached[*after];
  } else {
    n->csi_volumes.erase(unique);
  }
}

void Cache::CountCsiLocked(const std::string& key, const PodEntry& e,
                           NodeEntry* n, int sign) {
  const std::string who = std::string(1, kPodDep) + key;
  for (const std::string& dep : e.csi_deps) {
    if (sign > 0) {
      deps_[dep].insert(who);
    } else if (auto it = deps_.find(dep); it != deps_.end()) {
      it->second.erase(who);
      if (it->second.empty()) deps_.erase(it);
    }
  }
  if (n == nullptr) return;
  for (const Volumes::Attachable& a : e.csi)
    UseCsiVolume(n, a.unique, a.driver, sign, false);
  if (e.csi_error.empty()) return;
  if (sign > 0) {
    n->csi_errors[key] = e.csi_error;
  } else {
    n->csi_errors.erase(key);
  }
}

void Cache::StorageChanged(const std::string& dep) {
  absl::MutexLock lock(&mu_);
  auto it = deps_.find(dep);
  if (it == deps_.end()) return;
  // Re-resolving changes deps_.
  const std::vector<std::string> readers(it->second.begin(), it->second.end());
  for (const std::string& r : readers) {
    if (r[0] == kPodDep) {
      ResolvePodLocked(r.substr(1));
    } else {
      ResolveAttachmentLocked(r.substr(1));
    }
  }
}

void Cache::ResolvePodLocked(const std::string& key) {
  auto it = pods_.find(key);
  if (it == pods_.end()) return;
  PodEntry& e = it->second;
  auto nit = nodes_.find(e.node);
  NodeEntry* n = nit == nodes_.end() ? nullptr : nit->second.get();
  const std::vector<Volumes::Attachable> before = e.csi;
  const std::string error_before = e.csi_error;
  CountCsiLocked(key, e, n, -1);
  ResolveCsiLocked(&e);
  CountCsiLocked(key, e, n, +1);
  if (n != nullptr && (e.csi != before || e.csi_error != error_before))
    Encode(n);
}

void Cache::ResolveAttachmentLocked(const std::string& name) {
  auto it = attachments_.find(name);
  if (it == attachments_.end()) return;
  Attachment& a = it->second;
  const std::string unique =
      volumes_.AttachedName(a.info.attacher, a.info.volume_name);
  if (unique == a.unique) return;
  NodeEntry& n = EntryLocked(a.info.node);
  if (!a.unique.empty()) UseCsiVolume(&n, a.unique, a.info.attacher, -1, true);
  a.unique = unique;
  if (!a.unique.empty()) UseCsiVolume(&n, a.unique, a.info.attacher, 1, true);
  SettleLocked(nodes_.find(a.info.node));
}

void Cache::DropAttachmentLocked(const std::string& name) {
  auto it = attachments_.find(name);
  if (it == attachments_.end()) return;
  const Attachment a = std::move(it->second);
  attachments_.erase(it);
  const std::string dep =
      Volumes::DepKey(Volumes::Dep::kVolume, a.info.volume_name);
  if (auto d = deps_.find(dep); d != deps_.end()) {
    d->second.erase(std::string(1, kAttachmentDep) + name);
    if (d->second.empty()) deps_.erase(d);
  }
  if (a.unique.empty()) return;
  auto nit = nodes_.find(a.info.node);
  if (nit == nodes_.end()) return;
  UseCsiVolume(nit->second.get(), a.unique, a.info.attacher, -1, true);
  SettleLocked(nit);
}

void Cache::UpsertAttachment(const objects::AttachmentInfo& a) {
  absl::MutexLock lock(&mu_);
  DropAttachmentLocked(a.name);
  // Upstream finds attachments by spec.nodeName and reads only those that
  // name an attacher and a PersistentVolume.
  if (a.node.empty() || a.attacher.empty() || a.volume_name.empty()) return;
  attachments_[a.name] = Attachment{a, ""};
  deps_[Volumes::DepKey(Volumes::Dep::kVolume, a.volume_name)].insert(
      std::string(1, kAttachmentDep) + a.name);
  ResolveAttachmentLocked(a.name);
}

void Cache::RemoveAttachment(const std::string& name) {
  absl::MutexLock lock(&mu_);
  DropAttachmentLocked(name);
}

void Cache::UpsertCsiNode(const objects::CsiNodeInfo& c) {
  absl::MutexLock lock(&mu_);
  NodeEntry& n = EntryLocked(c.name);
  const auto same = [](const objects::CsiNodeInfo::Driver& x,
                       const objects::CsiNodeInfo::Driver& y) {
    return x.name == y.name && x.limit == y.limit;
  };
  if (n.has_csi_node && std::equal(n.csi_node.begin(), n.csi_node.end(),
                                   c.drivers.begin(), c.drivers.end(), same)) {
    return;
  }
  n.has_csi_node = true;
  n.csi_node = c.drivers;
  SettleLocked(nodes_.find(c.name));
}

void Cache::RemoveCsiNode(const std::string& name) {
  absl::MutexLock lock(&mu_);
  auto it = nodes_.find(name);
  if (it == nodes_.end() || !it->second->has_csi_node) return;
  it->second->has_csi_node = false;
  it->second->csi_node.clear();
  SettleLocked(it);
}

void Cache::SettleLocked(
    absl::flat_hash_map<std::string, std::unique_ptr<NodeEntry>>::iterator it) {
  if (it == nodes_.end()) return;
  if (it->second->Unused()) {
    nodes_.erase(it);
  } else {
    Encode(it->second.get());
  }
}

std::vector<std::string> Cache::InUseNamesLocked(
    const objects::PodInfo& incoming) const {
  return InUseNamesLocked(incoming.pod);
}

std::vector<std::string> Cache::InUseNamesLocked(const pb::Pod& pod) const {
  std::vector<std::string> names;
  if (pod.volume_claims().empty() && pod.in_tree_volumes().empty()) {
    return names;
  }
  for (Volumes::Attachable& a : volumes_.AttachableOf(pod, nullptr).volumes) {
    names.push_back(std::move(a.unique));
  }
  return names;
}

void Cache::AddCandidateCsiVolumes(const std::string& node,
                                   const pb::Pod& preemptor,
                                   pb::PreemptionNode* pn) const {
  absl::MutexLock lock(&mu_);
  auto it = nodes_.find(node);
  if (it == nodes_.end()) return;
  std::vector<const PodEntry*> victims;
  for (const pb::VictimPod& v : pn->pods()) {
    const PodEntry* found = nullptr;
    for (const std::string& key : it->second->pods) {
      const PodEntry& e = pods_.at(key);
      if (e.namespace_ == v.namespace_() && e.name == v.name()) found = &e;
    }
    victims.push_back(found);
  }
  CandidateCsiVolumesLocked(*it->second, victims, InUseNamesLocked(preemptor),
                            pn);
}

void Cache::CandidateCsiVolumesLocked(
    const NodeEntry& n, const std::vector<const PodEntry*>& victims,
    const std::vector<std::string>& in_use, pb::PreemptionNode* pn) const {
  if (n.csi_volumes.empty()) return;
  absl::flat_hash_map<std::string, int32_t> index;  // by unique name
  for (size_t j = 0; j < victims.size(); ++j) {
    if (victims[j] == nullptr) continue;
    pb::VictimPod* v = pn->mutable_pods(static_cast<int>(j));
    for (const Volumes::Attachable& a : victims[j]->csi) {
      auto cv = n.csi_volumes.find(a.unique);
      if (cv == n.csi_volumes.end() || cv->second.pods <= 0) continue;
      auto [slot, added] = index.try_emplace(a.unique, pn->csi_volumes_size());
      if (added) {
        pb::CandidateCsiVolume* c = pn->add_csi_volumes();
        c->set_driver(cv->second.driver);
        c->set_pods(cv->second.pods);
        if (cv->second.attachments > 0) c->set_attacher(cv->second.attacher);
        auto p = std::find(in_use.begin(), in_use.end(), a.unique);
        if (p != in_use.end())
          c->set_preemptor_volume(static_cast<int32_t>(p - in_use.begin()));
      }
      v->add_csi_volumes(slot->second);
    }
  }
}

void Cache::AddInUse(const NodeEntry& n, const std::vector<std::string>& in,
                     pb::Node* extra) {
  if (n.csi_volumes.empty()) return;
  for (size_t i = 0; i < in.size(); ++i) {
    auto it = n.csi_volumes.find(in[i]);
    if (it != n.csi_volumes.end() && it->second.pods > 0)
      extra->add_volumes_in_use(static_cast<int32_t>(i));
  }
}

}  // namespace kscore::cache
