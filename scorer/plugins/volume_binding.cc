#include "scorer/plugins/volume_binding.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "model/saturating.h"
#include "model/selectors.h"
#include "scorer/framework/shape_score.h"

namespace kscore::plugins {

using framework::CycleState;
using framework::PluginStatus;
using model::LabelMap;
namespace pb = framework::pb;

namespace {

constexpr char kBound = 'b';
constexpr char kDelayed = 'd';
// config.MaxCustomPriorityScore to fwk.MaxNodeScore.
constexpr int64_t kShapeScale =
    model::kMaxNodeScore / model::kMaxCustomPriorityScore;
constexpr int64_t kMaxUtilization = 100;

std::string Quote(absl::string_view s) { return absl::StrCat("\"", s, "\""); }

// volume.GetPersistentVolumeClaimClass (the shim already preferred the beta
// annotation).
const std::string& ClaimClass(const pb::ClaimState& c) {
  return c.storage_class_name();
}

int64_t Request(const pb::ClaimState& c) {
  return c.has_storage_request() ? c.storage_request() : 0;
}

const pb::StorageClass* FindClass(const pb::PodVolumes& v,
                                  absl::string_view name) {
  for (const pb::StorageClass& c : v.classes()) {
    if (c.name() == name) return &c;
  }
  return nullptr;
}

const pb::PersistentVolume* FindVolume(const pb::PodVolumes& v,
                                       absl::string_view name) {
  for (const pb::PersistentVolume& pv : v.volumes()) {
    if (pv.name() == name) return &pv;
  }
  return nullptr;
}

// volume.CheckNodeAffinity against the node's labels alone: well-formed,
// non-empty terms ORed; malformed ones match nothing.
bool VolumeReachesNode(const pb::PersistentVolume& pv, const LabelMap& labels) {
  if (!pv.has_node_affinity()) return true;
  for (const pb::NodeSelectorTerm& t : pv.node_affinity()) {
    if (model::CheckNodeSelectorTerm(t).empty() &&
        model::NodeSelectorTermMatchesLabels(t, labels)) {
      return true;
    }
  }
  return false;
}

// v1helper.MatchTopologySelectorTerms: no term matches everything; an empty
// or malformed term matches nothing; requirements are "key In values".
bool MatchesTopology(
    const google::protobuf::RepeatedPtrField<pb::TopologySelectorTerm>& terms,
    const LabelMap& labels) {
  if (terms.empty()) return true;
  for (const pb::TopologySelectorTerm& t : terms) {
    if (t.match_label_expressions().empty()) continue;
    bool match = true;
    for (const pb::TopologySelectorRequirement& r :
         t.match_label_expressions()) {
      pb::NodeSelectorRequirement req;
      req.set_key(r.key());
      req.set_operator_("In");
      *req.mutable_values() = r.values();
      auto it = labels.find(r.key());
      if (!model::CheckNodeSelectorRequirement(req).empty() ||
          it == labels.end() ||
          std::find(r.values().begin(), r.values().end(), it->second) ==
              r.values().end()) {
        match = false;
        break;
      }
    }
    if (match) return true;
  }
  return false;
}

// volume.CheckAccessModes: the volume offers every mode the claim asks.
bool HasAccessModes(const pb::ClaimState& claim,
                    const pb::PersistentVolume& pv) {
  for (const std::string& mode : claim.access_modes()) {
    if (std::find(pv.access_modes().begin(), pv.access_modes().end(), mode) ==
        pv.access_modes().end()) {
      return false;
    }
  }
  return true;
}

// volume.CheckVolumeModeMismatches: unset is Filesystem.
bool VolumeModeMismatch(const pb::ClaimState& claim,
                        const pb::PersistentVolume& pv) {
  auto mode = [](const std::string& m) -> absl::string_view {
    return m.empty() ? "Filesystem" : absl::string_view(m);
  };
  return mode(claim.volume_mode()) != mode(pv.volume_mode());
}

// volume.IsVolumeBoundToClaim: a claimRef with a uid names one incarnation
// of the claim.
bool BoundToClaim(const pb::PersistentVolume& pv, const pb::Pod& pod,
                  const pb::ClaimState& claim) {
  return pv.has_claim_ref() && pv.claim_name() == claim.name() &&
         pv.claim_namespace() == pod.namespace_() &&
         (pv.claim_uid().empty() || pv.claim_uid() == claim.uid());
}

// podHasPVCs: "" when every claim exists, is not lost or being deleted and,
// for an ephemeral volume, belongs to the pod; else upstream's error.
std::string CheckClaims(const pb::Pod& pod) {
  for (int i = 0; i < pod.volume_claims_size(); ++i) {
    const bool ephemeral = pod.volume_claims(i).ephemeral();
    const pb::ClaimState& c = pod.volumes().claims(i);
    if (!c.found()) {
      return ephemeral ? absl::StrCat(
                             "waiting for ephemeral volume controller to "
                             "create the persistentvolumeclaim ",
                             Quote(c.name()))
                       : absl::StrCat("persistentvolumeclaim ", Quote(c.name()),
                                      " not found");
    }
    if (c.phase() == "Lost") {
      return absl::StrCat("persistentvolumeclaim ", Quote(c.name()),
                          " bound to non-existent persistentvolume ",
                          Quote(c.volume_name()));
    }
    if (c.deleting()) {
      return absl::StrCat("persistentvolumeclaim ", Quote(c.name()),
                          " is being deleted");
    }
    if (ephemeral && !c.owned_by_pod()) {  // ephemeral.VolumeIsForPod
      return absl::StrCat("PVC ", pod.namespace_(), "/", c.name(),
                          " was not created for pod ", pod.namespace_(), "/",
                          pod.name(), " (pod is not owner)");
    }
  }
  return "";
}

// volume.IsDelayBindingMode.
absl::StatusOr<bool> DelaysBinding(const pb::PodVolumes& v,
                                   const pb::ClaimState& claim) {
  const std::string& name = ClaimClass(claim);
  if (name.empty()) return false;
  const pb::StorageClass* c = FindClass(v, name);
  if (c == nullptr) return false;
  if (c->volume_binding_mode().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "VolumeBindingMode not set for StorageClass ", Quote(name)));
  }
  return c->volume_binding_mode() == "WaitForFirstConsumer";
}

struct Binding {
  int claim = 0;
  const pb::PersistentVolume* pv = nullptr;
};
struct Provision {
  int claim = 0;
  const pb::StorageCapacity* capacity = nullptr;  // NodeCapacity
};

// FindPodVolumes' answer for one node.
struct NodeFit {
  std::vector<Binding> bindings;
  std::vector<Provision> provisions;
  bool bound_satisfied = true;
  bool unbound_satisfied = true;
  bool sufficient_storage = true;
  bool bound_pvs_found = true;

  std::vector<std::string> Reasons() const {
    std::vector<std::string> out;
    if (!bound_satisfied) out.emplace_back(VolumeBinding::kReasonNodeConflict);
    if (!unbound_satisfied) {
      out.emplace_back(VolumeBinding::kReasonBindConflict);
    }
    if (!sufficient_storage) {
      out.emplace_back(VolumeBinding::kReasonNotEnoughSpace);
    }
    if (!bound_pvs_found) out.emplace_back(VolumeBinding::kReasonPVNotExist);
    return out;
  }
};

// checkBoundClaims: the first bound claim whose volume is missing or does
// not reach the node decides.
void CheckBoundClaims(const pb::Pod& pod, absl::string_view kinds,
                      const pb::Node& node, NodeFit& fit) {
  for (size_t i = 0; i < kinds.size(); ++i) {
    if (kinds[i] != kBound) continue;
    const pb::ClaimState& c = pod.volumes().claims(static_cast<int>(i));
    const pb::PersistentVolume* pv = FindVolume(pod.volumes(), c.volume_name());
    if (pv == nullptr) {
      fit.bound_pvs_found = false;
      return;
    }
    // tryTranslatePVToCSI (CSI migration of in-tree volumes) is not done.
    if (!VolumeReachesNode(*pv, node.labels())) {
      fit.bound_satisfied = false;
      return;
    }
  }
}

// volume.FindMatchingVolume in the scheduler's path (delayBinding, a node,
// VolumeAttributesClass on): a volume pre-bound to the claim wins (or, not
// reaching the node, means none); else the smallest available one of the
// claim's class that fits. The candidates are the pod's volumes of the
// class, in the shim's order (upstream's cache lists them in no order).
absl::StatusOr<const pb::PersistentVolume*> FindMatchingVolume(
    const pb::Pod& pod, const pb::ClaimState& claim, const pb::Node& node,
    const absl::flat_hash_set<const pb::PersistentVolume*>& excluded) {
  if (claim.has_selector()) {
    if (std::string why = model::CheckLabelSelector(claim.selector());
        !why.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("error creating internal label selector for claim: ",
                       pod.namespace_(), "/", claim.name(), ": ", why));
    }
  }
  const std::string& cls = ClaimClass(claim);
  const pb::PersistentVolume* smallest = nullptr;
  for (const pb::PersistentVolume& pv : pod.volumes().volumes()) {
    if (pv.storage_class_name() != cls || excluded.contains(&pv)) continue;
    const bool bound_to_claim = BoundToClaim(pv, pod, claim);
    if (pv.has_claim_ref() && !bound_to_claim) continue;
    if (pv.capacity() < Request(claim)) continue;
    if (VolumeModeMismatch(claim, pv)) continue;
    if (pv.volume_attributes_class_name() !=
        claim.volume_attributes_class_name()) {
      continue;
    }
    const bool reaches = VolumeReachesNode(pv, node.labels());
    if (bound_to_claim) return reaches ? &pv : nullptr;
    if (pv.phase() != "Available") continue;
    if (claim.has_selector() &&
        !model::LabelSelectorMatches(claim.selector(), pv.labels())) {
      continue;
    }
    if (!reaches || !HasAccessModes(claim, pv)) continue;
    if (smallest == nullptr || smallest->capacity() > pv.capacity()) {
      smallest = &pv;
    }
  }
  return smallest;
}

// findMatchingVolumes: claims by increasing request (a stable sort: Go's
// sort.Sort is an insertion sort, so stable, up to 12 claims; beyond, its
// order among equal requests is unspecified), each taking a volume no
// earlier claim took. Returns the claims left to provision.
absl::StatusOr<std::vector<int>> FindMatchingVolumes(const pb::Pod& pod,
                                                     std::vector<int> claims,
                                                     const pb::Node& node,
                                                     NodeFit& fit) {
  const auto& states = pod.volumes().claims();
  std::stable_sort(claims.begin(), claims.end(), [&states](int a, int b) {
    return Request(states[a]) < Request(states[b]);
  });
  absl::flat_hash_set<const pb::PersistentVolume*> chosen;
  std::vector<int> unbound;
  for (int i : claims) {
    KSCORE_ASSIGN_OR_RETURN(const pb::PersistentVolume* pv,
                            FindMatchingVolume(pod, states[i], node, chosen));
    if (pv == nullptr) {
      unbound.push_back(i);
      fit.unbound_satisfied = false;
      continue;
    }
    chosen.insert(pv);
    fit.bindings.push_back({i, pv});
  }
  return unbound;
}

// hasEnoughCapacity: a claim without a request, or of a class whose driver
// does not track capacity, always fits; else the first capacity of the
// class that is large enough and reaches the node (nullopt: none).
std::optional<const pb::StorageCapacity*> CapacityFor(
    const pb::PodVolumes& v, const pb::ClaimState& claim,
    const pb::StorageClass& cls, const pb::Node& node) {
  if (!claim.has_storage_request() || !cls.capacity_tracked()) {
    return nullptr;
  }
  for (const pb::StorageCapacity& c : v.capacities()) {
    if (c.storage_class_name() != cls.name() || !c.has_limit() ||
        c.limit() < claim.storage_request() || !c.has_node_topology() ||
        !model::CheckLabelSelector(c.node_topology()).empty() ||
        !model::LabelSelectorMatches(c.node_topology(), node.labels())) {
      continue;
    }
    return &c;
  }
  return std::nullopt;
}

// checkVolumeProvisions: every claim's class provisions on the node with
// enough capacity; the first that does not decides.
absl::Status CheckVolumeProvisions(const pb::Pod& pod,
                                   absl::Span<const int> claims,
                                   const pb::Node& node, NodeFit& fit) {
  fit.unbound_satisfied = true;
  std::vector<Provision> provisions;
  for (int i : claims) {
    const pb::ClaimState& claim = pod.volumes().claims(i);
    const std::string& name = ClaimClass(claim);
    if (name.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "no class for claim ",
          Quote(absl::StrCat(pod.namespace_(), "/", claim.name()))));
    }
    const pb::StorageClass* cls = FindClass(pod.volumes(), name);
    if (cls == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("failed to find storage class ", Quote(name)));
    }
    if (cls->provisioner().empty() ||
        cls->provisioner() == "kubernetes.io/no-provisioner" ||
        !MatchesTopology(cls->allowed_topologies(), node.labels())) {
      fit.unbound_satisfied = false;
      return absl::OkStatus();
    }
    std::optional<const pb::StorageCapacity*> capacity =
        CapacityFor(pod.volumes(), claim, *cls, node);
    if (!capacity.has_value()) {
      fit.sufficient_storage = false;
      return absl::OkStatus();
    }
    provisions.push_back({i, *capacity});
  }
  fit.provisions = std::move(provisions);
  return absl::OkStatus();
}

// volumeBinder.FindPodVolumes for one node, from PreFilter's kinds.
absl::StatusOr<NodeFit> FindPodVolumes(const pb::Pod& pod,
                                       absl::string_view kinds,
                                       const pb::Node& node) {
  NodeFit fit;
  CheckBoundClaims(pod, kinds, node, fit);
  std::vector<int> to_match;
  std::vector<int> to_provision;
  for (size_t i = 0; i < kinds.size(); ++i) {
    if (kinds[i] != kDelayed) continue;
    const pb::ClaimState& c = pod.volumes().claims(static_cast<int>(i));
    if (!c.has_selected_node()) {
      to_match.push_back(static_cast<int>(i));
    } else if (c.selected_node() != node.name()) {
      fit.unbound_satisfied = false;  // provisioned for another node
      return fit;
    } else {
      to_provision.push_back(static_cast<int>(i));
    }
  }
  if (!to_match.empty()) {
    KSCORE_ASSIGN_OR_RETURN(std::vector<int> unbound,
                            FindMatchingVolumes(pod, to_match, node, fit));
    to_provision.insert(to_provision.end(), unbound.begin(), unbound.end());
  }
  if (!to_provision.empty()) {
    KSCORE_RETURN_IF_ERROR(CheckVolumeProvisions(pod, to_provision, node, fit));
  }
  return fit;
}

// PreFilter's kinds, checked against the pod.
absl::StatusOr<std::string> KindsOf(const CycleState& state,
                                    const pb::Pod& pod) {
  absl::StatusOr<const VolumeBinding::State*> s =
      state.Read<VolumeBinding::State>(VolumeBinding::kStateKey);
  if (absl::IsNotFound(s.status()) && pod.volume_claims().empty()) {
    return std::string();
  }
  if (!s.ok()) return s.status();
  const std::string& kinds = (*s)->kinds;
  if (!kinds.empty() &&
      (kinds.size() != static_cast<size_t>(pod.volume_claims_size()) ||
       pod.volumes().claims_size() != pod.volume_claims_size())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cycle_state[\"", VolumeBinding::kStateKey, "\"] has ", kinds.size(),
        " claims, the pod ", pod.volume_claims_size()));
  }
  return kinds;
}

}  // namespace

absl::StatusOr<VolumeBinding::State> VolumeBinding::State::Decode(
    absl::string_view bytes) {
  if (bytes.find_first_not_of("bd") != absl::string_view::npos) {
    return absl::InvalidArgumentError("malformed VolumeBinding state");
  }
  return State{std::string(bytes)};
}

VolumeBinding::VolumeBinding(Args args) : args_(std::move(args)) {
  for (const model::UtilizationShapePoint& p : args_.shape) {
    shape_.push_back({p.utilization, p.score * kShapeScale});
  }
}

void VolumeBinding::AddToPlan(const pb::Pod& pod,
                              pb::PlanResponse& plan) const {
  if (!pod.volume_claims().empty()) plan.set_node_labels(true);
}

VolumeBinding::PlanSize VolumeBinding::PlanBytes(const pb::Pod& pod) const {
  if (pod.volume_claims().empty()) return {};
  return {2, "pod.volume_claims"};  // node_labels: a tag and a byte
}

std::vector<pb::ClusterEvent> VolumeBinding::EventsToRegister() const {
  using model::action::kAdd;
  using model::action::kUpdate;
  // Upstream's registrations; its hints for claims, classes, CSINodes,
  // CSIDrivers and capacities read objects the hint call does not carry,
  // so those events move the pod whenever they happen.
  return {
      model::MakeEvent(pb::EVENT_RESOURCE_STORAGE_CLASS, kAdd | kUpdate),
      model::MakeEvent(pb::EVENT_RESOURCE_PERSISTENT_VOLUME_CLAIM,
                       kAdd | kUpdate),
      model::MakeEvent(pb::EVENT_RESOURCE_PERSISTENT_VOLUME, kAdd | kUpdate),
      model::MakeEvent(pb::EVENT_RESOURCE_NODE,
                       kAdd | model::action::kUpdateNodeLabel),
      model::MakeEvent(pb::EVENT_RESOURCE_CSI_NODE, kAdd | kUpdate),
      model::MakeEvent(pb::EVENT_RESOURCE_CSI_DRIVER, kUpdate),
      model::MakeEvent(pb::EVENT_RESOURCE_CSI_STORAGE_CAPACITY,
                       kAdd | kUpdate)};
}

PluginStatus VolumeBinding::PreFilter(CycleState& state,
                                      const pb::Pod& pod) const {
  // Upstream writes an empty state here; a pod without claims needs none
  // (KindsOf), which keeps the key off the wire.
  if (pod.volume_claims().empty()) return PluginStatus::Skip();
  if (pod.volumes().claims_size() != pod.volume_claims_size()) {
    return PluginStatus::Error(
        absl::StrCat("pod.volumes.claims has ", pod.volumes().claims_size(),
                     " entries for ", pod.volume_claims_size(),
                     " pod.volume_claims (the profile's pod_data asks for "
                     "POD_DATA_VOLUMES)"));
  }
  if (std::string why = CheckClaims(pod); !why.empty()) {
    return PluginStatus::UnschedulableAndUnresolvable(std::move(why));
  }
  // GetPodVolumeClaims: bound is a volume name and bind-completed.
  State s;
  bool immediate = false;
  for (const pb::ClaimState& c : pod.volumes().claims()) {
    if (!c.volume_name().empty() && c.bind_completed()) {
      s.kinds.push_back(kBound);
      continue;
    }
    absl::StatusOr<bool> delay = DelaysBinding(pod.volumes(), c);
    if (!delay.ok())
      return PluginStatus::Error(std::string(delay.status().message()));
    if (*delay && c.volume_name().empty()) {
      s.kinds.push_back(kDelayed);
    } else {
      immediate = true;  // prebound claims count as immediate
    }
  }
  if (immediate) {
    return PluginStatus::UnschedulableAndUnresolvable(
        std::string(kReasonUnboundImmediate));
  }
  state.Write(kStateKey, std::move(s));
  return PluginStatus::Success();
}

PluginStatus VolumeBinding::Filter(const CycleState& state, const pb::Pod& pod,
                                   const pb::Node& node) const {
  absl::StatusOr<std::string> kinds = KindsOf(state, pod);
  if (!kinds.ok())
    return PluginStatus::Error(std::string(kinds.status().message()));
  absl::StatusOr<NodeFit> fit = FindPodVolumes(pod, *kinds, node);
  if (!fit.ok())
    return PluginStatus::Error(std::string(fit.status().message()));
  std::vector<std::string> reasons = fit->Reasons();
  if (reasons.empty()) return PluginStatus::Success();
  PluginStatus s = PluginStatus::UnschedulableAndUnresolvable("");
  s.reasons = std::move(reasons);
  return s;
}

PluginStatus VolumeBinding::PreScore(
    CycleState& state, const pb::Pod& pod,
    absl::Span<const pb::Node* const> /*nodes*/) const {
  absl::StatusOr<std::string> kinds = KindsOf(state, pod);
  if (!kinds.ok())
    return PluginStatus::Error(std::string(kinds.status().message()));
  return PluginStatus::Success();
}

int64_t VolumeBinding::ScoreClasses(
    absl::Span<const std::pair<int64_t, int64_t>> requested_capacity) const {
  if (requested_capacity.empty()) return 0;
  int64_t sum = 0;
  for (const auto& [requested, capacity] : requested_capacity) {
    const int64_t utilization =
        capacity == 0 || requested > capacity
            ? kMaxUtilization
            : model::MulDiv(requested, kMaxUtilization, capacity);
    sum += framework::BrokenLinear(shape_, utilization);
  }
  return static_cast<int64_t>(
      std::round(static_cast<double>(sum) /
                 static_cast<double>(requested_capacity.size())));
}

PluginStatus VolumeBinding::Score(const CycleState& state, const pb::Pod& pod,
                                  absl::Span<const pb::Node* const> nodes,
                                  absl::Span<int64_t> scores) const {
  absl::StatusOr<std::string> kinds = KindsOf(state, pod);
  if (!kinds.ok())
    return PluginStatus::Error(std::string(kinds.status().message()));
  for (size_t n = 0; n < nodes.size(); ++n) {
    scores[n] = 0;
    if (kinds->empty()) continue;  // Filter never ran: no podVolumes
    absl::StatusOr<NodeFit> fit = FindPodVolumes(pod, *kinds, *nodes[n]);
    if (!fit.ok())
      return PluginStatus::Error(std::string(fit.status().message()));
    if (!fit->Reasons().empty()) continue;
    // Per class: requested and capacity.
    absl::flat_hash_map<std::string, std::pair<int64_t, int64_t>> classes;
    if (!fit->bindings.empty()) {
      for (const Binding& b : fit->bindings) {
        auto& [requested, capacity] = classes[b.pv->storage_class_name()];
        requested =
            model::SatAdd(requested, Request(pod.volumes().claims(b.claim)));
        capacity = model::SatAdd(capacity, b.pv->capacity());
      }
    } else {
      for (const Provision& p : fit->provisions) {
        if (p.capacity == nullptr) continue;
        const pb::ClaimState& c = pod.volumes().claims(p.claim);
        auto& [requested, capacity] = classes[ClaimClass(c)];
        // The node's capacity, not a sum: two claims share it.
        capacity = p.capacity->has_capacity() ? p.capacity->capacity() : 0;
        requested = model::SatAdd(requested, Request(c));
      }
    }
    std::vector<std::pair<int64_t, int64_t>> list;
    for (const auto& [cls, rc] : classes) list.push_back(rc);
    scores[n] = ScoreClasses(list);
  }
  return PluginStatus::Success();
}

PluginStatus VolumeBinding::DecideVolumes(const CycleState& state,
                                          const pb::Pod& pod,
                                          const pb::Node& node,
                                          pb::NodeVolumes& out) const {
  absl::StatusOr<std::string> kinds = KindsOf(state, pod);
  if (!kinds.ok())
    return PluginStatus::Error(std::string(kinds.status().message()));
  if (kinds->find(kDelayed) == std::string::npos)
    return PluginStatus::Success();
  absl::StatusOr<NodeFit> fit = FindPodVolumes(pod, *kinds, node);
  if (!fit.ok())
    return PluginStatus::Error(std::string(fit.status().message()));
  if (!fit->Reasons().empty()) {
    return PluginStatus::Error(absl::StrCat("node \"", node.name(),
                                            "\" does not fit the pod's "
                                            "volumes: run Filter first"));
  }
  std::vector<std::pair<int, std::string>> decisions;
  for (const Binding& b : fit->bindings) {
    decisions.emplace_back(b.claim, b.pv->name());
  }
  for (const Provision& p : fit->provisions) {
    decisions.emplace_back(p.claim, "");
  }
  std::sort(decisions.begin(), decisions.end());
  for (auto& [claim, volume] : decisions) {
    pb::ClaimDecision* d = out.add_claims();
    d->set_claim(claim);
    d->set_volume(std::move(volume));
  }
  return PluginStatus::Success();
}

absl::StatusOr<VolumeBinding::Args> VolumeBinding::ParseArgs(
    const model::YamlField& args) {
  return model::DecodeVolumeBindingArgs(args);
}

absl::StatusOr<std::unique_ptr<framework::Plugin>> VolumeBinding::New(
    const model::YamlField& args) {
  KSCORE_ASSIGN_OR_RETURN(Args a, ParseArgs(args));
  return std::make_unique<VolumeBinding>(std::move(a));
}

}  // namespace kscore::plugins
