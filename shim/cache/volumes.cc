#include "shim/cache/volumes.h"

#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "shim/kube/object_codec.h"

namespace kscore::cache {
namespace {

bool FullyBound(const pb::ClaimState& c) {
  return !c.volume_name().empty() && c.bind_completed();
}

}  // namespace

std::string ClaimName(const pb::Pod& pod, const pb::VolumeClaim& c) {
  if (c.ephemeral()) return absl::StrCat(pod.name(), "-", c.volume());
  return c.claim_name();
}

void Volumes::UpsertClaim(std::shared_ptr<const objects::ClaimInfo> c) {
  const std::string key = kube::KeyOf(c->namespace_, c->name);
  {
    absl::MutexLock lock(&mu_);
    ClaimEntry& e = claims_[key];
    // A newer version than the one assumed over replaces the assumption.
    if (e.info == nullptr || e.info->resource_version != c->resource_version)
      e.assumed = false;
    e.info = std::move(c);
  }
  Changed(Dep::kClaim, key);
}

void Volumes::RemoveClaim(const std::string& ns, const std::string& name) {
  const std::string key = kube::KeyOf(ns, name);
  {
    absl::MutexLock lock(&mu_);
    claims_.erase(key);
  }
  Changed(Dep::kClaim, key);
}

void Volumes::UpsertVolume(std::shared_ptr<const objects::VolumeInfo> v) {
  const std::string name = v->pv.name();
  {
    absl::MutexLock lock(&mu_);
    VolumeEntry& e = volumes_[name];
    if (e.info != nullptr) {
      by_class_[e.info->pv.storage_class_name()].erase(name);
      if (e.info->resource_version != v->resource_version) e.assumed = false;
    }
    by_class_[v->pv.storage_class_name()].insert(name);
    e.info = std::move(v);
  }
  Changed(Dep::kVolume, name);
}

void Volumes::RemoveVolume(const std::string& name) {
  {
    absl::MutexLock lock(&mu_);
    auto it = volumes_.find(name);
    if (it == volumes_.end()) return;
    by_class_[it->second.info->pv.storage_class_name()].erase(name);
    volumes_.erase(it);
  }
  Changed(Dep::kVolume, name);
}

void Volumes::UpsertClass(std::shared_ptr<const objects::StorageClassInfo> c) {
  const std::string name = c->sc.name();
  {
    absl::MutexLock lock(&mu_);
    classes_[name] = std::move(c);
  }
  Changed(Dep::kClass, name);
}

void Volumes::RemoveClass(const std::string& name) {
  {
    absl::MutexLock lock(&mu_);
    classes_.erase(name);
  }
  Changed(Dep::kClass, name);
}

void Volumes::UpsertDriver(std::shared_ptr<const objects::CsiDriverInfo> d) {
  absl::MutexLock lock(&mu_);
  drivers_[d->name] = d->storage_capacity;
  if (d->prevent_if_missing) {
    required_drivers_.insert(d->name);
  } else {
    required_drivers_.erase(d->name);
  }
}

void Volumes::RemoveDriver(const std::string& name) {
  absl::MutexLock lock(&mu_);
  drivers_.erase(name);
  required_drivers_.erase(name);
}

void Volumes::UpsertCapacity(std::shared_ptr<const objects::CapacityInfo> c) {
  absl::MutexLock lock(&mu_);
  capacities_[kube::KeyOf(c->namespace_, c->name)] = std::move(c);
}

void Volumes::RemoveCapacity(const std::string& ns, const std::string& name) {
  absl::MutexLock lock(&mu_);
  capacities_.erase(kube::KeyOf(ns, name));
}

pb::PersistentVolume Volumes::Effective(const VolumeEntry& e) {
  pb::PersistentVolume pv = e.info->pv;
  if (e.assumed) {
    pv.set_has_claim_ref(true);
    pv.set_claim_namespace(e.claim_namespace);
    pv.set_claim_name(e.claim_name);
    pv.set_claim_uid(e.claim_uid);
  }
  return pv;
}

pb::ClaimState Volumes::Effective(const ClaimEntry& e) {
  pb::ClaimState c = e.info->state;
  if (e.assumed) c.set_selected_node(e.selected_node);
  return c;
}

pb::PodVolumes Volumes::For(const pb::Pod& pod) const {
  pb::PodVolumes out;
  absl::MutexLock lock(&mu_);
  for (const pb::VolumeClaim& vc : pod.volume_claims()) {
    const std::string name = ClaimName(pod, vc);
    auto it = claims_.find(kube::KeyOf(pod.namespace_(), name));
    if (it == claims_.end()) {
      pb::ClaimState* c = out.add_claims();
      c->set_name(name);
      continue;
    }
    pb::ClaimState* c = out.add_claims();
    *c = Effective(it->second);
    c->set_owned_by_pod(!pod.uid().empty() &&
                        it->second.info->controller_uid == pod.uid());
  }
  AddCandidates(pod, out, &out);
  AddClasses(out, &out);
  PodAttachables attachables = AttachableLocked(pod, nullptr);
  for (const Attachable& a : attachables.volumes) {
    pb::AttachableVolume* v = out.add_attachable();
    v->set_driver(a.driver);
    v->set_required_on_node(required_drivers_.contains(a.driver));
    v->set_migrated(a.migrated);
  }
  if (attachables.error.has_value())
    *out.mutable_migration_error() = *std::move(attachables.error);
  return out;
}

void Volumes::AddCandidates(const pb::Pod& pod, const pb::PodVolumes& claims,
                            pb::PodVolumes* out) const {
  std::set<std::string> added;
  for (const pb::ClaimState& c : claims.claims()) {  // the bound volumes
    if (c.volume_name().empty() || added.contains(c.volume_name())) continue;
    auto it = volumes_.find(c.volume_name());
    if (it == volumes_.end()) continue;
    added.insert(c.volume_name());
    *out->add_volumes() = Effective(it->second);
  }
  std::set<std::string> names, classes;  // the pod's claims; delayed classes
  for (const pb::ClaimState& c : claims.claims()) {
    names.insert(c.name());
    if (!c.found() || FullyBound(c) || !c.volume_name().empty()) continue;
    auto cl = classes_.find(c.storage_class_name());
    if (!c.has_storage_class_name() || cl == classes_.end()) continue;
    if (cl->second->sc.volume_binding_mode() == "WaitForFirstConsumer")
      classes.insert(c.storage_class_name());
  }
  for (const std::string& cls : classes) {
    auto bc = by_class_.find(cls);
    if (bc == by_class_.end()) continue;
    for (const std::string& v : bc->second) {
      const VolumeEntry& e = volumes_.at(v);
      if (e.info->deleting || added.contains(v)) continue;
      pb::PersistentVolume pv = Effective(e);
      if (pv.has_claim_ref() && (pv.claim_namespace() != pod.namespace_() ||
                                 !names.contains(pv.claim_name())))
        continue;  // promised to a claim of another pod
      added.insert(v);
      *out->add_volumes() = std::move(pv);
    }
  }
}

void Volumes::AddClasses(const pb::PodVolumes& claims,
                         pb::PodVolumes* out) const {
  std::set<std::string> names;
  for (const pb::ClaimState& c : claims.claims()) {
    if (c.has_storage_class_name() && !c.storage_class_name().empty())
      names.insert(c.storage_class_name());
  }
  for (const std::string& n : names) {
    auto it = classes_.find(n);
    if (it == classes_.end()) continue;
    pb::StorageClass* sc = out->add_classes();
    *sc = it->second->sc;
    auto d = drivers_.find(sc->provisioner());
    sc->set_capacity_tracked(d != drivers_.end() && d->second);
    if (!sc->capacity_tracked()) continue;
    for (const auto& [key, cap] : capacities_) {
      if (cap->capacity.storage_class_name() == n)
        *out->add_capacities() = cap->capacity;
    }
  }
}

absl::StatusOr<Volumes::Reservation> Volumes::Assume(
    const pb::Pod& pod, const pb::NodeVolumes& decisions) {
  Reservation r;
  r.node = decisions.node_name();
  absl::MutexLock lock(&mu_);
  for (const pb::ClaimDecision& d : decisions.claims()) {
    if (d.claim() < 0 || d.claim() >= pod.volume_claims_size()) {
      ForgetLocked(r);
      return absl::InvalidArgumentError(
          absl::StrCat("volume decision for claim ", d.claim(), " of ",
                       pod.volume_claims_size()));
    }
    if (absl::Status s = AssumeOne(pod, d, r.node, &r); !s.ok()) {
      ForgetLocked(r);
      return s;
    }
  }
  return r;
}

absl::Status Volumes::AssumeOne(const pb::Pod& pod, const pb::ClaimDecision& d,
                                const std::string& node, Reservation* r) {
  const std::string name = ClaimName(pod, pod.volume_claims(d.claim()));
  auto c = claims_.find(kube::KeyOf(pod.namespace_(), name));
  if (c == claims_.end()) {
    return absl::FailedPreconditionError(
        absl::StrFormat("persistentvolumeclaim \"%s\" not found", name));
  }
  const objects::ClaimInfo& claim = *c->second.info;
  if (d.volume().empty()) {  // provisioning: the claim gets selected-node
    c->second.assumed = true;
    c->second.selected_node = node;
    r->provisions.push_back(
        {claim.namespace_, claim.name, claim.resource_version});
    return absl::OkStatus();
  }
  auto v = volumes_.find(d.volume());
  if (v == volumes_.end()) {
    return absl::FailedPreconditionError(
        absl::StrFormat("persistentvolume \"%s\" not found", d.volume()));
  }
  const pb::PersistentVolume pv = Effective(v->second);
  const bool ours = pv.claim_namespace() == claim.namespace_ &&
                    pv.claim_name() == claim.name &&
                    (pv.claim_uid().empty() || pv.claim_uid() == claim.uid);
  if (pv.has_claim_ref() && !ours) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "persistentvolume \"%s\" is already bound to claim %s/%s", d.volume(),
        pv.claim_namespace(), pv.claim_name()));
  }
  const bool write = !pv.has_claim_ref() || pv.claim_uid() != claim.uid;
  v->second.assumed = true;
  v->second.claim_namespace = claim.namespace_;
  v->second.claim_name = claim.name;
  v->second.claim_uid = claim.uid;
  r->bindings.push_back({d.volume(), v->second.info->resource_version,
                         claim.namespace_, claim.name, claim.uid,
                         claim.resource_version, write, !pv.has_claim_ref()});
  return absl::OkStatus();
}

void Volumes::Forget(const Reservation& r) {
  absl::MutexLock lock(&mu_);
  ForgetLocked(r);
}

void Volumes::ForgetLocked(const Reservation& r) {
  for (const Binding& b : r.bindings) {
    auto v = volumes_.find(b.volume);
    if (v != volumes_.end() &&
        v->second.info->resource_version == b.volume_version)
      v->second.assumed = false;
  }
  for (const Provision& p : r.provisions) {
    auto c = claims_.find(kube::KeyOf(p.claim_namespace, p.claim_name));
    if (c != claims_.end() &&
        c->second.info->resource_version == p.claim_version)
      c->second.assumed = false;
  }
}

absl::StatusOr<bool> Volumes::Bound(const Reservation& r) const {
  absl::MutexLock lock(&mu_);
  bool done = true;
  for (const Binding& b : r.bindings) {
    auto v = volumes_.find(b.volume);
    auto c = claims_.find(kube::KeyOf(b.claim_namespace, b.claim_name));
    if (v == volumes_.end() || c == claims_.end()) {
      return absl::NotFoundError(absl::StrFormat(
          "failed to check binding: %s",
          v == volumes_.end() ? "persistentvolume not found"
                              : "persistentvolumeclaim not found"));
    }
    const pb::PersistentVolume& pv = v->second.info->pv;
    if (b.write && v->second.info->resource_version == b.volume_version) {
      done = false;  // our write is not in the informer yet
      continue;
    }
    if (!pv.has_claim_ref() || pv.claim_uid().empty()) {
      return absl::AbortedError(
          absl::StrFormat("ClaimRef got reset for pv \"%s\"", b.volume));
    }
    done = done && FullyBound(c->second.info->state);
  }
  for (const Provision& p : r.provisions) {
    auto c = claims_.find(kube::KeyOf(p.claim_namespace, p.claim_name));
    if (c == claims_.end()) {
      return absl::NotFoundError(
          "failed to check provisioning pvc: persistentvolumeclaim not found");
    }
    const objects::ClaimInfo& claim = *c->second.info;
    if (claim.resource_version == p.claim_version) {
      done = false;
      continue;
    }
    if (!claim.state.has_selected_node()) {
      return absl::AbortedError(absl::StrFormat(
          "selectedNode annotation reset for PVC \"%s\"", claim.name));
    }
    if (claim.state.selected_node() != r.node) {
      return absl::AbortedError(
          absl::StrFormat("provisioning failed for PVC \"%s\"", claim.name));
    }
    done = done && FullyBound(claim.state);
  }
  return done;
}

size_t Volumes::ClaimCount() const {
  absl::MutexLock lock(&mu_);
  return claims_.size();
}

size_t Volumes::VolumeCount() const {
  absl::MutexLock lock(&mu_);
  return volumes_.size();
}

}  // namespace kscore::cache
