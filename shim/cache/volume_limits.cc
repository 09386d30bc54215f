// Volumes' part for NodeVolumeLimits: which CSI volumes a pod attaches.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "shim/cache/volumes.h"
#include "shim/kube/object_codec.h"

namespace kscore::cache {
namespace {

// Stands for upstream's random prefix of the handles it makes up for claims
// without a volume: unlike any real handle, the same for every claim.
constexpr char kClaimHandlePrefix[] = "\x01kscore";

std::string UniqueName(const std::string& driver, const std::string& handle) {
  return absl::StrCat(driver, "/", handle);
}

}  // namespace

std::string Volumes::DepKey(Dep kind, const std::string& key) {
  return absl::StrCat(std::string(1, static_cast<char>(kind)), key);
}

std::vector<Volumes::Attachable> Volumes::AttachableOf(
    const pb::Pod& pod, std::vector<std::string>* deps) const {
  absl::MutexLock lock(&mu_);
  return AttachableLocked(pod, deps);
}

std::optional<Volumes::Attachable> Volumes::FromClass(
    const objects::ClaimInfo& claim, std::vector<std::string>* deps) const {
  // No class: the claim binds immediately, so upstream does not count it.
  if (!claim.state.has_storage_class_name() ||
      claim.state.storage_class_name().empty()) {
    return std::nullopt;
  }
  const std::string& name = claim.state.storage_class_name();
  if (deps != nullptr) deps->push_back(DepKey(Dep::kClass, name));
  auto it = classes_.find(name);
  if (it == classes_.end()) return std::nullopt;
  // In-tree provisioners would be counted under their CSI driver on nodes
  // with a CSINode (migration), which kscore leaves out: they count as any
  // other provisioner here.
  const std::string& driver = it->second->sc.provisioner();
  return Attachable{
      UniqueName(driver,
                 absl::StrCat(kClaimHandlePrefix, "-",
                              kube::KeyOf(claim.namespace_, claim.name))),
      driver};
}

std::vector<Volumes::Attachable> Volumes::AttachableLocked(
    const pb::Pod& pod, std::vector<std::string>* deps) const {
  std::vector<Attachable> out;
  for (const pb::VolumeClaim& vc : pod.volume_claims()) {
    const std::string key = kube::KeyOf(pod.namespace_(), ClaimName(pod, vc));
    if (deps != nullptr) deps->push_back(DepKey(Dep::kClaim, key));
    auto c = claims_.find(key);
    if (c == claims_.end()) continue;
    const objects::ClaimInfo& claim = *c->second.info;
    // Upstream fails the node for an ephemeral claim another owns; kscore
    // leaves the volume out.
    if (vc.ephemeral() &&
        (pod.uid().empty() || claim.controller_uid != pod.uid())) {
      continue;
    }
    std::optional<Attachable> a;
    const std::string& pv_name = claim.state.volume_name();
    auto v = pv_name.empty() ? volumes_.end() : volumes_.find(pv_name);
    if (!pv_name.empty() && deps != nullptr)
      deps->push_back(DepKey(Dep::kVolume, pv_name));
    if (v == volumes_.end()) {
      a = FromClass(claim, deps);
    } else if (!v->second.info->csi_driver.empty() &&
               !v->second.info->csi_handle.empty()) {
      a = Attachable{
          UniqueName(v->second.info->csi_driver, v->second.info->csi_handle),
          v->second.info->csi_driver};
    }  // else an in-tree volume: counted only with migration
    if (!a.has_value() || a->driver.empty()) continue;
    if (std::find(out.begin(), out.end(), *a) == out.end())
      out.push_back(std::move(*a));
  }
  return out;
}

std::string Volumes::AttachedName(const std::string& attacher,
                                  const std::string& volume) const {
  if (attacher.empty() || volume.empty()) return "";
  absl::MutexLock lock(&mu_);
  auto v = volumes_.find(volume);
  if (v == volumes_.end() || v->second.info->csi_driver.empty()) return "";
  return UniqueName(attacher, v->second.info->csi_handle);
}

}  // namespace kscore::cache
