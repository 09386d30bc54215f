#include "scorer/plugins/volume_restrictions.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "model/plugin_args/args.h"

namespace kscore::plugins {

using framework::CycleState;
using framework::PluginStatus;
namespace pb = framework::pb;

namespace {

constexpr absl::string_view kReadWriteOncePod = "ReadWriteOncePod";

bool Overlap(const google::protobuf::RepeatedPtrField<std::string>& a,
             const google::protobuf::RepeatedPtrField<std::string>& b) {
  return std::any_of(a.begin(), a.end(), [&b](const std::string& x) {
    return std::find(b.begin(), b.end(), x) != b.end();
  });
}

bool AnyConflict(const pb::Pod& pod,
                 const google::protobuf::RepeatedPtrField<pb::InlineDisk>& on) {
  for (const pb::InlineDisk& d : pod.inline_disks()) {
    for (const pb::InlineDisk& e : on) {
      if (VolumeRestrictions::Conflict(d, e)) return true;
    }
  }
  return false;
}

}  // namespace

std::string VolumeRestrictions::PreFilterState::Encode() const {
  // "conflicts;i,j,...".
  return absl::StrCat(conflicts, ";", absl::StrJoin(rwop_claims, ","));
}

absl::StatusOr<VolumeRestrictions::PreFilterState>
VolumeRestrictions::PreFilterState::Decode(absl::string_view bytes) {
  const auto malformed = [] {
    return absl::InvalidArgumentError(
        "malformed VolumeRestrictions PreFilter state");
  };
  std::pair<absl::string_view, absl::string_view> parts =
      absl::StrSplit(bytes, absl::MaxSplits(';', 1));
  PreFilterState s;
  if (!absl::SimpleAtoi(parts.first, &s.conflicts)) return malformed();
  if (parts.second.empty()) return s;
  for (absl::string_view c : absl::StrSplit(parts.second, ',')) {
    int32_t i = 0;
    if (!absl::SimpleAtoi(c, &i) || i < 0) return malformed();
    s.rwop_claims.push_back(i);
  }
  return s;
}

bool VolumeRestrictions::Conflict(const pb::InlineDisk& a,
                                  const pb::InlineDisk& b) {
  if (a.kind() != b.kind()) return false;
  const bool both_read_only = a.read_only() && b.read_only();
  switch (a.kind()) {
    case pb::DISK_KIND_GCE_PD:
    case pb::DISK_KIND_ISCSI:
      return a.id() == b.id() && !both_read_only;
    case pb::DISK_KIND_AWS_EBS:
      return a.id() == b.id();
    case pb::DISK_KIND_RBD:
      return Overlap(a.monitors(), b.monitors()) && a.pool() == b.pool() &&
             a.id() == b.id() && !both_read_only;
    default:
      return false;
  }
}

PluginStatus VolumeRestrictions::Prepare(const pb::Pod& pod,
                                         absl::Span<const int64_t> freed,
                                         PreFilterState& out) {
  out = {};
  const pb::PodVolumes& volumes = pod.volumes();
  if (volumes.claims_size() != pod.volume_claims_size()) {
    return PluginStatus::Error(
        absl::StrCat("pod.volumes.claims has ", volumes.claims_size(),
                     " entries, pod.volume_claims ", pod.volume_claims_size()));
  }
  std::vector<absl::string_view> names;  // the set upstream keeps
  for (int i = 0; i < pod.volume_claims_size(); ++i) {
    // Upstream reads persistentVolumeClaim sources only, not ephemeral ones.
    const pb::VolumeClaim& v = pod.volume_claims(i);
    if (v.ephemeral()) continue;
    const pb::ClaimState& claim = volumes.claims(i);
    if (!claim.found()) {
      return PluginStatus::UnschedulableAndUnresolvable(absl::StrCat(
          "persistentvolumeclaim \"", v.claim_name(), "\" not found"));
    }
    const auto& modes = claim.access_modes();
    if (std::find(modes.begin(), modes.end(), kReadWriteOncePod) ==
            modes.end() ||
        std::find(names.begin(), names.end(), v.claim_name()) != names.end()) {
      continue;
    }
    names.push_back(v.claim_name());
    out.rwop_claims.push_back(i);
    // IsPVCUsedByPods: one per claim in use, however many pods use it.
    if (claim.pod_refs() > 0) ++out.conflicts;
  }
  // RemovePod: one per removed pod's volume naming a ReadWriteOncePod claim.
  for (int32_t i : out.rwop_claims) {
    if (static_cast<size_t>(i) < freed.size()) out.conflicts -= freed[i];
  }
  return PluginStatus::Success();
}

std::vector<pb::ClusterEvent> VolumeRestrictions::EventsToRegister() const {
  namespace action = model::action;
  return {model::MakeEvent(pb::EVENT_RESOURCE_ASSIGNED_POD, action::kDelete,
                           /*hinted=*/true),
          model::MakeEvent(pb::EVENT_RESOURCE_NODE, action::kAdd),
          model::MakeEvent(pb::EVENT_RESOURCE_PERSISTENT_VOLUME_CLAIM,
                           action::kAdd)};
}

model::QueueingHint VolumeRestrictions::Hint(
    const pb::Pod& pod, const model::EventObjects& e) const {
  using model::QueueingHint;
  const pb::Pod* deleted = e.old_pod;
  if (e.event.resource() != pb::EVENT_RESOURCE_ASSIGNED_POD ||
      deleted == nullptr) {
    return QueueingHint::kQueue;
  }
  if (deleted->namespace_() != pod.namespace_())
    return QueueingHint::kQueueSkip;
  if (AnyConflict(pod, deleted->inline_disks())) return QueueingHint::kQueue;
  for (const pb::VolumeClaim& d : deleted->volume_claims()) {
    if (d.ephemeral()) continue;
    for (const pb::VolumeClaim& c : pod.volume_claims()) {
      if (!c.ephemeral() && c.claim_name() == d.claim_name()) {
        return QueueingHint::kQueue;
      }
    }
  }
  return QueueingHint::kQueueSkip;
}

PluginStatus VolumeRestrictions::PreFilter(CycleState& state,
                                           const pb::Pod& pod) const {
  PreFilterState s;
  if (PluginStatus st = Prepare(pod, state.freed_claim_refs(), s); !st.ok()) {
    return st;
  }
  if (pod.inline_disks().empty() && s.conflicts == 0) {
    return PluginStatus::Skip();
  }
  state.Write(kPreFilterStateKey, std::move(s));
  return PluginStatus::Success();
}

PluginStatus VolumeRestrictions::Filter(const CycleState& state,
                                        const pb::Pod& pod,
                                        const pb::Node& node) const {
  if (AnyConflict(pod, node.disks())) {
    return PluginStatus::Unschedulable(std::string(kReasonDiskConflict));
  }
  PreFilterState computed;
  const PreFilterState* s = &computed;
  absl::StatusOr<const PreFilterState*> read =
      state.Read<PreFilterState>(kPreFilterStateKey);
  if (read.ok()) {
    s = *read;
  } else if (absl::IsNotFound(read.status())) {
    // PreFilter did not run (a bare Filter call): work it out here.
    PluginStatus st = Prepare(pod, state.freed_claim_refs(), computed);
    if (!st.ok()) return st;
  } else {
    return PluginStatus::Error(std::string(read.status().message()));
  }
  if (s->conflicts > 0) {
    return PluginStatus::Unschedulable(
        std::string(kReasonReadWriteOncePodConflict));
  }
  return PluginStatus::Success();
}

absl::StatusOr<std::unique_ptr<framework::Plugin>> VolumeRestrictions::New(
    const model::YamlField& args) {
  KSCORE_RETURN_IF_ERROR(model::ExpectNoArgs(args));
  return std::make_unique<VolumeRestrictions>();
}

}  // namespace kscore::plugins
