#include "scorer/plugins/default_preemption.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "model/selectors.h"

namespace kscore::plugins {

using framework::PluginStatus;
namespace pb = framework::pb;

absl::StatusOr<framework::PostFilterResult> DefaultPreemption::PostFilter(
    const framework::PreemptionInput& in) const {
  KSCORE_ASSIGN_OR_RETURN(framework::PostFilterResult r,
                          framework::Preempt(*this, in));
  for (std::string& reason : r.status.reasons) {
    reason = absl::StrCat(kMessagePrefix, reason);
  }
  return r;
}

int32_t DefaultPreemption::NumCandidates(int32_t num_potential_nodes) const {
  // In 64 bits: the product cannot overflow, whatever the node count.
  int32_t n = static_cast<int32_t>(int64_t{num_potential_nodes} *
                                   args_.min_candidate_nodes_percentage / 100);
  n = std::max(n, args_.min_candidate_nodes_absolute);
  return std::min(n, num_potential_nodes);
}

std::string DefaultPreemption::IneligibleReason(
    const pb::PreemptRequest& req) const {
  if (req.pod().preemption_policy() == "Never") {
    return std::string(kReasonPolicyNever);
  }
  if (req.nominated_node_name().empty()) return "";
  // The victims of an earlier preemption are still terminating there.
  for (const pb::VictimPod& p : req.nominated_node_pods()) {
    if (p.priority() < req.pod().priority() && p.terminating()) {
      return std::string(kReasonTerminating);
    }
  }
  return "";
}

bool DefaultPreemption::MoreImportant(const pb::VictimPod& a,
                                      const pb::VictimPod& b, absl::Time now) {
  if (a.priority() != b.priority()) return a.priority() > b.priority();
  const int64_t t = absl::ToUnixNanos(now);
  const int64_t sa =
      a.has_start_time_unix_nanos() ? a.start_time_unix_nanos() : t;
  const int64_t sb =
      b.has_start_time_unix_nanos() ? b.start_time_unix_nanos() : t;
  return sa < sb;
}

std::vector<bool> DefaultPreemption::ViolatesBudgets(
    absl::Span<const pb::VictimPod* const> pods,
    const google::protobuf::RepeatedPtrField<pb::DisruptionBudget>& pdbs) {
  std::vector<int64_t> allowed;
  allowed.reserve(pdbs.size());
  for (const pb::DisruptionBudget& pdb : pdbs) {
    allowed.push_back(pdb.disruptions_allowed());
  }
  std::vector<bool> out(pods.size(), false);
  for (size_t i = 0; i < pods.size(); ++i) {
    const pb::VictimPod& pod = *pods[i];
    if (pod.labels().empty()) continue;
    for (int k = 0; k < pdbs.size(); ++k) {
      const pb::DisruptionBudget& pdb = pdbs[k];
      if (pdb.namespace_() != pod.namespace_()) continue;
      // A malformed selector matches no pod, as upstream's conversion error.
      if (!pdb.has_selector() || model::IsEmptySelector(pdb.selector()) ||
          !model::CheckLabelSelector(pdb.selector()).empty() ||
          !model::LabelSelectorMatches(pdb.selector(), pod.labels())) {
        continue;
      }
      // Already counted by the disruption controller: no budget spent.
      if (std::find(pdb.disrupted_pods().begin(), pdb.disrupted_pods().end(),
                    pod.name()) != pdb.disrupted_pods().end()) {
        continue;
      }
      if (--allowed[k] < 0) {
        out[i] = true;
        break;
      }
    }
  }
  return out;
}

absl::StatusOr<DefaultPreemption::Victims>
DefaultPreemption::SelectVictimsOnNode(const framework::PreemptionInput& in,
                                       framework::DryRunNode& node) const {
  const pb::PreemptRequest& req = *in.request;
  Victims out;
  std::vector<int> potential;
  for (int i = 0; i < node.size(); ++i) {
    if (node.pod(i).priority() < req.pod().priority()) potential.push_back(i);
  }
  // Nothing to remove: the node is as Filter found it.
  if (potential.empty()) {
    out.status = PluginStatus::UnschedulableAndUnresolvable(
        std::string(kReasonNoVictims));
    return out;
  }
  for (int i : potential) node.Remove(i);
  // Not even with every lower-priority pod gone. (Upstream does not look
  // for the pod's affinity to the removed pods.)
  if (absl::StatusOr<PluginStatus> s = node.Filter(); !s.ok() || !s->ok()) {
    if (!s.ok()) return s.status();
    out.status = *std::move(s);
    return out;
  }

  auto more_important = [&node, now = in.now](int a, int b) {
    return MoreImportant(node.pod(a), node.pod(b), now);
  };
  std::stable_sort(potential.begin(), potential.end(), more_important);
  std::vector<const pb::VictimPod*> sorted;
  sorted.reserve(potential.size());
  for (int i : potential) sorted.push_back(&node.pod(i));
  const std::vector<bool> violates = ViolatesBudgets(sorted, req.pdbs());
  std::vector<int> violating, non_violating;
  for (size_t k = 0; k < potential.size(); ++k) {
    (violates[k] ? violating : non_violating).push_back(potential[k]);
  }

  // Adds the pod back; keeps it if the pod still fits, else it is a victim.
  auto reprieve = [&](int i) -> absl::StatusOr<bool> {
    node.Add(i);
    KSCORE_ASSIGN_OR_RETURN(PluginStatus s, node.Filter());
    if (s.ok()) return true;
    node.Remove(i);
    out.victims.push_back(i);
    return false;
  };
  for (int i : violating) {
    KSCORE_ASSIGN_OR_RETURN(bool kept, reprieve(i));
    if (!kept) ++out.pdb_violations;
  }
  for (int i : non_violating) {
    KSCORE_RETURN_IF_ERROR(reprieve(i).status());
  }
  // Most important first again, as the pick reads the first as the highest.
  if (!violating.empty() && !non_violating.empty()) {
    std::stable_sort(out.victims.begin(), out.victims.end(), more_important);
  }
  return out;
}

absl::StatusOr<DefaultPreemption::Args> DefaultPreemption::ParseArgs(
    const model::YamlField& args) {
  return model::DecodeDefaultPreemptionArgs(args);
}

absl::StatusOr<std::unique_ptr<framework::Plugin>> DefaultPreemption::New(
    const model::YamlField& args) {
  KSCORE_ASSIGN_OR_RETURN(Args a, ParseArgs(args));
  return std::make_unique<DefaultPreemption>(std::move(a));
}

}  // namespace kscore::plugins
