// Volumes' part for NodeVolumeLimits: which CSI volumes a pod attaches.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "shim/cache/csi_translation.h"
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

// Adds `a` unless its unique name is there; a use that is not migrated
// makes it count on every node.
void AddOnce(Volumes::Attachable a, std::vector<Volumes::Attachable>* out) {
  auto it = std::find_if(
      out->begin(), out->end(),
      [&a](const Volumes::Attachable& x) { return x.unique == a.unique; });
  if (it == out->end()) {
    out->push_back(std::move(a));
  } else if (!a.migrated) {
    it->migrated = false;
  }
}

// checkAttachableInlineVolume on a node with a CSINode: the volume's
// translation, or upstream's error for it.
absl::StatusOr<Volumes::Attachable> Inline(const pb::InTreeVolume& v) {
  absl::StatusOr<csi_translation::Translated> t =
      csi_translation::TranslateInline(v);
  if (!t.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("converting volume(", v.name(),
                     ") from inline to csi: ", t.status().message()));
  }
  // Unlike a PersistentVolume's, an empty handle counts.
  return Volumes::Attachable{UniqueName(t->driver, t->handle), t->driver, true};
}

// A PersistentVolume's CSI source, or the one CSI migration translates its
// in-tree source to (nothing for other sources or a failed translation).
std::optional<Volumes::Attachable> OfVolume(const objects::VolumeInfo& v) {
  std::string driver = v.csi_driver, handle = v.csi_handle;
  const bool migrated = !v.has_csi && v.in_tree.has_value();
  if (migrated) {
    absl::StatusOr<csi_translation::Translated> t =
        csi_translation::TranslatePv(*v.in_tree, v.pv.labels());
    if (!t.ok()) return std::nullopt;
    driver = std::move(t->driver);
    handle = std::move(t->handle);
  }
  if (driver.empty() || handle.empty()) return std::nullopt;
  return Volumes::Attachable{UniqueName(driver, handle), driver, migrated};
}

}  // namespace

std::string Volumes::DepKey(Dep kind, const std::string& key) {
  return absl::StrCat(std::string(1, static_cast<char>(kind)), key);
}

Volumes::PodAttachables Volumes::AttachableOf(
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
  std::string driver = it->second->sc.provisioner();
  const bool migrated = csi_translation::Migratable(driver);
  // An in-tree provisioner counts under its CSI driver (not at all for
  // azure-file and vsphere-volume, whose migration upstream never turns on).
  if (migrated) driver = std::string(csi_translation::MigratedDriver(driver));
  if (driver.empty()) return std::nullopt;
  return Attachable{
      UniqueName(driver,
                 absl::StrCat(kClaimHandlePrefix, "-",
                              kube::KeyOf(claim.namespace_, claim.name))),
      driver, migrated};
}

std::optional<Volumes::Attachable> Volumes::OfClaim(
    const pb::Pod& pod, const pb::VolumeClaim& vc,
    std::vector<std::string>* deps) const {
  const std::string key = kube::KeyOf(pod.namespace_(), ClaimName(pod, vc));
  if (deps != nullptr) deps->push_back(DepKey(Dep::kClaim, key));
  auto c = claims_.find(key);
  if (c == claims_.end()) return std::nullopt;
  const objects::ClaimInfo& claim = *c->second.info;
  // Upstream fails the node for an ephemeral claim another owns; kscore
  // leaves the volume out.
  if (vc.ephemeral() &&
      (pod.uid().empty() || claim.controller_uid != pod.uid())) {
    return std::nullopt;
  }
  const std::string& pv_name = claim.state.volume_name();
  if (pv_name.empty()) return FromClass(claim, deps);
  if (deps != nullptr) deps->push_back(DepKey(Dep::kVolume, pv_name));
  auto v = volumes_.find(pv_name);
  if (v == volumes_.end()) return FromClass(claim, deps);
  return OfVolume(*v->second.info);
}

Volumes::PodAttachables Volumes::AttachableLocked(
    const pb::Pod& pod, std::vector<std::string>* deps) const {
  PodAttachables out;
  // Claims and inline volumes interleaved, in spec order.
  auto inline_volume = pod.in_tree_volumes().begin();
  for (int i = 0; i <= pod.volume_claims_size(); ++i) {
    for (; inline_volume != pod.in_tree_volumes().end() &&
           inline_volume->claims_before() <= i;
         ++inline_volume) {
      if (csi_translation::MigratedDriver(inline_volume->plugin()).empty())
        continue;
      absl::StatusOr<Attachable> a = Inline(*inline_volume);
      if (a.ok()) {
        AddOnce(*std::move(a), &out.volumes);
      } else if (!out.error.has_value()) {
        out.error.emplace().set_message(std::string(a.status().message()));
        out.error->set_claims_before(inline_volume->claims_before());
      }
    }
    if (i == pod.volume_claims_size()) break;
    std::optional<Attachable> a = OfClaim(pod, pod.volume_claims(i), deps);
    if (a.has_value() && !a->driver.empty())
      AddOnce(*std::move(a), &out.volumes);
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
