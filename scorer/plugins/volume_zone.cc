#include "scorer/plugins/volume_zone.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "model/plugin_args/args.h"

namespace kscore::plugins {

using framework::CycleState;
using framework::PluginStatus;
namespace pb = framework::pb;

namespace {

constexpr absl::string_view kTopologyLabels[] = {
    VolumeZone::kBetaZone, VolumeZone::kBetaRegion, VolumeZone::kZone,
    VolumeZone::kRegion};

constexpr absl::string_view kWaitForFirstConsumer = "WaitForFirstConsumer";

// Upstream's translateToGALabel.
absl::string_view ToGA(absl::string_view key) {
  if (key == VolumeZone::kBetaRegion) return VolumeZone::kRegion;
  if (key == VolumeZone::kBetaZone) return VolumeZone::kZone;
  return key;
}

// volumehelpers.LabelZonesToSet: the "__"-separated zones, trimmed, sorted
// and unique; false when one is empty (upstream then ignores the label).
bool LabelZonesToSet(absl::string_view value, std::vector<std::string>& out) {
  out.clear();
  for (absl::string_view zone : absl::StrSplit(value, "__")) {
    zone = absl::StripAsciiWhitespace(zone);
    if (zone.empty()) return false;
    out.emplace_back(zone);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return true;
}

// Upstream's getPVTopologies.
void AddTopologies(const pb::PersistentVolume& pv,
                   std::vector<VolumeZone::Topology>& out) {
  for (absl::string_view key : kTopologyLabels) {
    auto it = pv.labels().find(std::string(key));
    if (it == pv.labels().end()) continue;
    VolumeZone::Topology t;
    t.key = std::string(key);
    if (LabelZonesToSet(it->second, t.values)) out.push_back(std::move(t));
  }
}

template <typename T>
const T* FindByName(const google::protobuf::RepeatedPtrField<T>& list,
                    absl::string_view name) {
  for (const T& x : list) {
    if (x.name() == name) return &x;
  }
  return nullptr;
}

PluginStatus Rejected(std::string reason) {
  return PluginStatus::UnschedulableAndUnresolvable(std::move(reason));
}

// The status of an unbound claim: Skip for a class that delays binding,
// upstream's rejection otherwise.
PluginStatus UnboundClaim(const pb::ClaimState& claim,
                          const pb::PodVolumes& volumes) {
  const std::string& class_name = claim.storage_class_name();
  if (class_name.empty()) {
    return Rejected(
        "PersistentVolumeClaim had no pv name and storageClass name");
  }
  const pb::StorageClass* sc = FindByName(volumes.classes(), class_name);
  if (sc == nullptr) {
    return Rejected(absl::StrCat("storageclass.storage.k8s.io \"", class_name,
                                 "\" not found"));
  }
  if (sc->volume_binding_mode().empty()) {
    return Rejected(absl::StrCat(
        "VolumeBindingMode not set for StorageClass \"", class_name, "\""));
  }
  if (sc->volume_binding_mode() == kWaitForFirstConsumer) {
    return PluginStatus::Skip();
  }
  return Rejected("PersistentVolume had no name");
}

}  // namespace

std::string VolumeZone::PreFilterState::Encode() const {
  pb::TopologySelectorTerm term;
  for (const Topology& t : topologies) {
    pb::TopologySelectorRequirement* r = term.add_match_label_expressions();
    r->set_key(t.key);
    for (const std::string& v : t.values) r->add_values(v);
  }
  return term.SerializeAsString();
}

absl::StatusOr<VolumeZone::PreFilterState> VolumeZone::PreFilterState::Decode(
    absl::string_view bytes) {
  pb::TopologySelectorTerm term;
  if (!term.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InvalidArgumentError("malformed VolumeZone PreFilter state");
  }
  PreFilterState s;
  for (const pb::TopologySelectorRequirement& r :
       term.match_label_expressions()) {
    s.topologies.push_back(
        {r.key(),
         std::vector<std::string>(r.values().begin(), r.values().end())});
  }
  return s;
}

PluginStatus VolumeZone::Prepare(const pb::Pod& pod, PreFilterState& out) {
  out.topologies.clear();
  const pb::PodVolumes& volumes = pod.volumes();
  if (volumes.claims_size() != pod.volume_claims_size()) {
    return PluginStatus::Error(
        absl::StrCat("pod.volumes.claims has ", volumes.claims_size(),
                     " entries, pod.volume_claims ", pod.volume_claims_size()));
  }
  for (int i = 0; i < pod.volume_claims_size(); ++i) {
    // Upstream reads persistentVolumeClaim sources only, not ephemeral ones.
    if (pod.volume_claims(i).ephemeral()) continue;
    if (pod.volume_claims(i).claim_name().empty()) {
      return Rejected("PersistentVolumeClaim had no name");
    }
    const pb::ClaimState& claim = volumes.claims(i);
    if (!claim.found()) {
      return Rejected(absl::StrCat("persistentvolumeclaim \"",
                                   pod.volume_claims(i).claim_name(),
                                   "\" not found"));
    }
    if (claim.volume_name().empty()) {
      PluginStatus s = UnboundClaim(claim, volumes);
      if (s.code == framework::Code::kSkip) continue;
      return s;
    }
    const pb::PersistentVolume* pv =
        FindByName(volumes.volumes(), claim.volume_name());
    if (pv == nullptr) {
      return Rejected(absl::StrCat("persistentvolume \"", claim.volume_name(),
                                   "\" not found"));
    }
    AddTopologies(*pv, out.topologies);
  }
  return PluginStatus::Success();
}

void VolumeZone::AddToPlan(const pb::Pod& pod, pb::PlanResponse& plan) const {
  PreFilterState s;
  if (Prepare(pod, s).ok() && !s.topologies.empty()) {
    plan.set_node_labels(true);
  }
}

VolumeZone::PlanSize VolumeZone::PlanBytes(const pb::Pod& pod) const {
  // At most the node_labels flag: a tag and a byte.
  if (pod.volume_claims().empty()) return {};
  return {2, "pod.volume_claims"};
}

std::vector<pb::ClusterEvent> VolumeZone::EventsToRegister() const {
  namespace action = model::action;
  const uint32_t add_or_update = action::kAdd | action::kUpdate;
  return {
      model::MakeEvent(pb::EVENT_RESOURCE_STORAGE_CLASS, action::kAdd),
      model::MakeEvent(pb::EVENT_RESOURCE_NODE,
                       action::kAdd | action::kUpdateNodeLabel),
      model::MakeEvent(pb::EVENT_RESOURCE_PERSISTENT_VOLUME_CLAIM,
                       add_or_update),
      model::MakeEvent(pb::EVENT_RESOURCE_PERSISTENT_VOLUME, add_or_update)};
}

PluginStatus VolumeZone::PreFilter(CycleState& state,
                                   const pb::Pod& pod) const {
  PreFilterState s;
  if (PluginStatus st = Prepare(pod, s); !st.ok()) return st;
  if (s.topologies.empty()) return PluginStatus::Skip();
  state.Write(kPreFilterStateKey, std::move(s));
  return PluginStatus::Success();
}

PluginStatus VolumeZone::Filter(const CycleState& state, const pb::Pod& pod,
                                const pb::Node& node) const {
  if (pod.volume_claims().empty()) return PluginStatus::Success();
  PreFilterState computed;
  const PreFilterState* s = &computed;
  absl::StatusOr<const PreFilterState*> read =
      state.Read<PreFilterState>(kPreFilterStateKey);
  if (read.ok()) {
    s = *read;
  } else if (absl::IsNotFound(read.status())) {
    // PreFilter did not run (a bare Filter call): work it out here.
    if (PluginStatus st = Prepare(pod, computed); !st.ok()) return st;
  } else {
    return PluginStatus::Error(std::string(read.status().message()));
  }
  const auto& labels = node.labels();
  if (std::none_of(std::begin(kTopologyLabels), std::end(kTopologyLabels),
                   [&labels](absl::string_view key) {
                     return labels.contains(std::string(key));
                   })) {
    // A node without zone labels (a single-zone cluster) takes any volume.
    return PluginStatus::Success();
  }
  for (const Topology& t : s->topologies) {
    auto it = labels.find(t.key);
    if (it == labels.end()) it = labels.find(std::string(ToGA(t.key)));
    if (it == labels.end() ||
        !std::binary_search(t.values.begin(), t.values.end(), it->second)) {
      return Rejected(std::string(kReasonConflict));
    }
  }
  return PluginStatus::Success();
}

absl::StatusOr<std::unique_ptr<framework::Plugin>> VolumeZone::New(
    const model::YamlField& args) {
  KSCORE_RETURN_IF_ERROR(model::ExpectNoArgs(args));
  return std::make_unique<VolumeZone>();
}

}  // namespace kscore::plugins
