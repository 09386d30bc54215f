#ifndef KSCORE_SHIM_CACHE_VOLUMES_H_
#define KSCORE_SHIM_CACHE_VOLUMES_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "kscore/scorer/v1/scorer.pb.h"
#include "shim/objects/storage.h"

namespace kscore::cache {

namespace pb = ::kscore::scorer::v1;

// The storage objects VolumeBinding reads, as their informers hold them,
// with the bindings Reserve assumed over them (upstream's PV and PVC assume
// caches): an assumed volume carries its new claimRef and an assumed claim
// its selected node until the informer shows a newer version of the object
// or the assumption is forgotten. Thread-safe.
class Volumes {
 public:
  void UpsertClaim(std::shared_ptr<const objects::ClaimInfo> c);
  void RemoveClaim(const std::string& ns, const std::string& name);
  void UpsertVolume(std::shared_ptr<const objects::VolumeInfo> v);
  void RemoveVolume(const std::string& name);
  void UpsertClass(std::shared_ptr<const objects::StorageClassInfo> c);
  void RemoveClass(const std::string& name);
  void UpsertDriver(std::shared_ptr<const objects::CsiDriverInfo> d);
  void RemoveDriver(const std::string& name);
  void UpsertCapacity(std::shared_ptr<const objects::CapacityInfo> c);
  void RemoveCapacity(const std::string& ns, const std::string& name);

  // Pod.volumes for a pod with these namespace, name, claims and in-tree
  // volumes (the comments of pb::PodVolumes say what goes in).
  pb::PodVolumes For(const pb::Pod& pod) const;

  // What Reserve assumed for one pod: PreBind writes it, Forget undoes it.
  struct Binding {  // a claim bound to an existing volume
    std::string volume;
    std::string volume_version;  // the volume's resourceVersion assumed over
    std::string claim_namespace;
    std::string claim_name;
    std::string claim_uid;
    std::string claim_version;
    // The volume needs its claimRef written (it names no claim yet, or
    // another uid), and then pv.kubernetes.io/bound-by-controller too when
    // it named no claim (upstream's GetBindVolumeToClaim).
    bool write = true;
    bool bound_by_controller = true;
  };
  struct Provision {  // a claim to provision on the node
    std::string claim_namespace;
    std::string claim_name;
    std::string claim_version;
  };
  struct Reservation {
    std::string node;
    std::vector<Binding> bindings;
    std::vector<Provision> provisions;
    bool empty() const { return bindings.empty() && provisions.empty(); }
  };
  // Upstream's AssumePodVolumes for `pod` on `node` with the scorer's
  // decisions (pb::NodeVolumes; claim indexes into pod.volume_claims).
  // FailedPrecondition, assuming nothing, when a volume is gone, changed or
  // already promised to another claim, or a claim changed since.
  absl::StatusOr<Reservation> Assume(const pb::Pod& pod,
                                     const pb::NodeVolumes& decisions);
  // Undoes what `r` assumed that still stands (upstream's revert).
  void Forget(const Reservation& r);
  // PreBind's wait (upstream's checkBindings), against the informers: true
  // once every claim of `r` is bound (spec.volumeName and
  // pv.kubernetes.io/bind-completed), false while not yet, an error with
  // upstream's words when the binding can no longer happen.
  absl::StatusOr<bool> Bound(const Reservation& r) const;

  size_t ClaimCount() const;
  size_t VolumeCount() const;

  // NodeVolumeLimits: a CSI volume a pod attaches, by upstream's unique
  // name (driver/handle) and its driver; `migrated` for an in-tree volume
  // CSI migration translates, which upstream counts only on nodes with a
  // CSINode (pb::AttachableVolume::migrated).
  struct Attachable {
    std::string unique;
    std::string driver;
    bool migrated = false;
    bool operator==(const Attachable&) const = default;
  };
  struct PodAttachables {
    std::vector<Attachable> volumes;
    // The first in-tree inline volume whose translation fails, if any:
    // upstream's error on nodes with a CSINode.
    std::optional<pb::MigrationError> error;
  };
  // Upstream's filterAttachableVolumes, from the informers' objects (not
  // what Reserve assumed), in spec order: per claim of `pod` that exists
  // (and, for an ephemeral one, is controlled by the pod), the CSI source
  // of its volume (or the one CSI migration translates its in-tree source
  // to), or when it names none or a missing one, its class's provisioner
  // (an in-tree one's CSI driver) with a handle of the claim's own; per
  // in-tree inline volume (pb::Pod::in_tree_volumes), its translation. Each
  // once (by unique name; migrated only when every use is). `deps`, when
  // set, gets the keys (DepKey) of the claims, volumes and classes read.
  PodAttachables AttachableOf(const pb::Pod& pod,
                              std::vector<std::string>* deps) const;
  // The unique name of the volume a VolumeAttachment with `attacher` names,
  // when it is a CSI one ("" otherwise).
  std::string AttachedName(const std::string& attacher,
                           const std::string& volume) const;
  // What an object change is known by to those who read it.
  enum class Dep : char { kClaim = 'c', kVolume = 'v', kClass = 's' };
  static std::string DepKey(Dep kind, const std::string& key);
  // Called after each change of a claim, volume or class (outside the lock)
  // with its DepKey. Set once, before any change.
  void SetOnChange(std::function<void(const std::string&)> f) {
    on_change_ = std::move(f);
  }

 private:
  struct VolumeEntry {
    std::shared_ptr<const objects::VolumeInfo> info;
    // Assumed by Reserve over info's version: the claim it is promised to.
    bool assumed = false;
    std::string claim_namespace, claim_name, claim_uid;
  };
  struct ClaimEntry {
    std::shared_ptr<const objects::ClaimInfo> info;
    bool assumed = false;  // Reserve set selected_node over info's version
    std::string selected_node;
  };
  // The volume as VolumeBinding sees it (with what is assumed).
  static pb::PersistentVolume Effective(const VolumeEntry& e);
  static pb::ClaimState Effective(const ClaimEntry& e);
  void AddCandidates(const pb::Pod& pod, const pb::PodVolumes& claims,
                     pb::PodVolumes* out) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void AddClasses(const pb::PodVolumes& claims, pb::PodVolumes* out) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status AssumeOne(const pb::Pod& pod, const pb::ClaimDecision& d,
                         const std::string& node, Reservation* r)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ForgetLocked(const Reservation& r) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  PodAttachables AttachableLocked(const pb::Pod& pod,
                                  std::vector<std::string>* deps) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // getCSIDriverInfo for one of the pod's claims.
  std::optional<Attachable> OfClaim(const pb::Pod& pod,
                                    const pb::VolumeClaim& vc,
                                    std::vector<std::string>* deps) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // getCSIDriverInfoFromSC: the class's provisioner and the claim's handle.
  std::optional<Attachable> FromClass(const objects::ClaimInfo& claim,
                                      std::vector<std::string>* deps) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Changed(Dep kind, const std::string& key) const {
    if (on_change_) on_change_(DepKey(kind, key));
  }

  std::function<void(const std::string&)> on_change_;

  mutable absl::Mutex mu_;
  std::map<std::string, ClaimEntry> claims_ ABSL_GUARDED_BY(mu_);  // ns/name
  std::map<std::string, VolumeEntry> volumes_ ABSL_GUARDED_BY(mu_);
  // class name -> names of its volumes.
  std::map<std::string, std::set<std::string>> by_class_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::shared_ptr<const objects::StorageClassInfo>>
      classes_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, bool> drivers_ ABSL_GUARDED_BY(mu_);  // capacity?
  // CSIDrivers with preventPodSchedulingIfMissing.
  std::set<std::string> required_drivers_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::shared_ptr<const objects::CapacityInfo>>
      capacities_ ABSL_GUARDED_BY(mu_);  // ns/name
};

// A generic ephemeral volume's claim name: <pod name>-<volume name>.
std::string ClaimName(const pb::Pod& pod, const pb::VolumeClaim& c);

}  // namespace kscore::cache

#endif  // KSCORE_SHIM_CACHE_VOLUMES_H_
