#ifndef KSCORE_SCORER_FRAMEWORK_PLUGIN_H_
#define KSCORE_SCORER_FRAMEWORK_PLUGIN_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "kscore/scorer/v1/scorer.pb.h"
#include "model/cluster_event.h"
#include "model/score_range.h"
#include "scorer/framework/cycle_state.h"
#include "scorer/framework/status.h"

namespace kscore::framework {

namespace pb = ::kscore::scorer::v1;

using model::kMaxNodeScore;
using model::kMinNodeScore;
using model::ScoreRange;

// When a plugin reads pb::Node::labels. The shim leaves labels out of the
// request when no enabled plugin needs them for the pod at hand: they are most
// of a node's bytes on the wire.
enum class NodeLabelUse {
  kNever,
  kWhenPodSelects,  // only for pods with a nodeSelector or node affinity
  kAlways,
};
// Plugins own only their rule; the framework (profile.h) owns ordering,
// weights and range checks. A plugin implements one or more of the extension
// point interfaces below. Plugin methods are const: a plugin keeps no state
// between calls other than its configuration; per-pod state goes to
// CycleState.
class Plugin {
 public:
  virtual ~Plugin() = default;
  virtual absl::string_view Name() const = 0;
  // Label keys whose per-node counts (pb::Node::label_counts) this plugin
  // reads; the shim keeps them incrementally.
  virtual std::vector<std::string> LabelCountKeys() const { return {}; }
  // True when the plugin's args turn its Filter on wherever the plugin is
  // enabled (Concentrate's rejectEverything), not only where a profile
  // enables it at filter.
  virtual bool FiltersWheneverEnabled() const { return false; }
  virtual NodeLabelUse NodeLabels() const { return NodeLabelUse::kNever; }
  // What the Pod message must carry beyond its spec for this plugin
  // (pb::Profile::pod_data).
  virtual std::vector<pb::PodData> PodDataNeeded() const { return {}; }
  // True when AddToPlan may add anything: pods of the plugin's profiles then
  // need a Plan (pb::Profile::plans).
  virtual bool Plans() const { return false; }
  // True when the plugin's answers for a pod depend only on the pod message,
  // the node and the cluster data (as the contract above asks of every
  // plugin): then two pods whose messages differ only in name and uid get
  // the same answers on a node that did not change, and their cycles may be
  // batched (sessions.h). A plugin that reads anything else says false, and
  // its profiles' pods are never batched.
  virtual bool Batchable() const { return true; }
  // Appends the plugin's questions about the cluster for this pod to
  // plan.queries and the existing-term kinds it reads to
  // plan.existing_terms; sets plan.score_needs_all_feasible if its Score
  // depends on every feasible node at once. Deterministic in the pod: the
  // answers come back in ClusterData and Node at the same positions, from
  // CycleState::QueryBase(Name()) on. Malformed input adds nothing here; the
  // plugin reports it from PreFilter or PreScore as kube-scheduler does.
  virtual void AddToPlan(const pb::Pod& /*pod*/,
                         pb::PlanResponse& /*plan*/) const {}
  // At least the bytes AddToPlan adds for `pod` (as
  // PlanResponse::ByteSizeLong counts them), found in time linear in the
  // pod without building anything, and the pod's field that makes them
  // ("pod.topology_spread_constraints"). The framework refuses a pod whose
  // plan would be larger than its bound before a plugin builds it: a plan
  // may grow with the square of the pod (every query of n spread
  // constraints lists the n keys).
  struct PlanSize {
    int64_t bytes = 0;
    absl::string_view field;
  };
  virtual PlanSize PlanBytes(const pb::Pod& /*pod*/) const { return {}; }
  // kube-scheduler's EventsToRegister (pb::PluginInfo::events): the cluster
  // events that may make a pod this plugin rejected at PreFilter or Filter
  // schedulable. The default is every event, as upstream gives a plugin
  // without EnqueueExtensions.
  virtual std::vector<pb::ClusterEvent> EventsToRegister() const {
    return {model::MakeEvent(pb::EVENT_RESOURCE_WILDCARD, model::action::kAll)};
  }
  // kube-scheduler's QueueingHintFn for the registrations marked hinted:
  // whether `e` may make `pod`, which this plugin rejected, schedulable.
  // Called only for an event such a registration matches. When unsure,
  // kQueue.
  virtual model::QueueingHint Hint(const pb::Pod& /*pod*/,
                                   const model::EventObjects& /*e*/) const {
    return model::QueueingHint::kQueue;
  }
};

class PreFilterPlugin : public virtual Plugin {
 public:
  // Computes per-pod state once. Success, Skip (the plugin's Filter is not
  // needed for this pod), UnschedulableAndUnresolvable, or Error.
  virtual PluginStatus PreFilter(CycleState& state,
                                 const pb::Pod& pod) const = 0;
  // kube-scheduler's PreFilterResult, asked after PreFilter succeeded: the
  // only nodes the pod can go to, or nullopt for every node. The framework
  // runs no Filter on the other nodes and reports them as "node(s) didn't
  // satisfy plugin(s) [Name]".
  virtual std::optional<std::vector<std::string>> PreFilterNodeNames(
      const CycleState& /*state*/, const pb::Pod& /*pod*/) const {
    return std::nullopt;
  }
};

class FilterPlugin : public virtual Plugin {
 public:
  // Success if the pod fits the node, Unschedulable(AndUnresolvable) with
  // kube-scheduler's reason string otherwise; Error for bad input.
  virtual PluginStatus Filter(const CycleState& state, const pb::Pod& pod,
                              const pb::Node& node) const = 0;
};

class PreScorePlugin : public virtual Plugin {
 public:
  // Runs once over the feasible nodes. Skip leaves the plugin out of Score.
  virtual PluginStatus PreScore(
      CycleState& state, const pb::Pod& pod,
      absl::Span<const pb::Node* const> nodes) const = 0;
};

class ScorePlugin : public virtual Plugin {
 public:
  // Writes one raw score per node (scores.size() == nodes.size()).
  virtual PluginStatus Score(const CycleState& state, const pb::Pod& pod,
                             absl::Span<const pb::Node* const> nodes,
                             absl::Span<int64_t> scores) const = 0;
  // What Score can give: a NormalizeScore request whose raw scores lie
  // outside is refused before any plugin runs. Most plugins count, or add
  // weights that are not negative (the default); those already in
  // [0, 100] without a NormalizeScore say so.
  virtual ScoreRange RawScoreRange() const { return {}; }
  // Maps the raw scores of all feasible nodes onto [kMinNodeScore,
  // kMaxNodeScore]. The default keeps them: for plugins whose raw scores are
  // already in range.
  virtual PluginStatus NormalizeScore(const CycleState& /*state*/,
                                      const pb::Pod& /*pod*/,
                                      absl::Span<int64_t> /*scores*/) const {
    return PluginStatus::Success();
  }
  // What the framework calls: NormalizeScore, for plugins whose mapping
  // depends on which node a score belongs to (kube-scheduler hands
  // NormalizeScore a NodeScoreList). nodes[i] names the node of scores[i];
  // nodes is empty when the caller does not know them (a NormalizeScore
  // request with compact raw scores). The default ignores the names.
  virtual PluginStatus NormalizeScoreByNode(
      const CycleState& state, const pb::Pod& pod,
      absl::Span<const absl::string_view> /*nodes*/,
      absl::Span<int64_t> scores) const {
    return NormalizeScore(state, pod, scores);
  }
};

// Optional, next to FilterPlugin: a plugin whose Filter settles more than a
// verdict, namely how the pod's volumes would be bound on the node (what
// kube-scheduler's Reserve then assumes and PreBind writes). The framework
// asks it for feasible nodes only, when the caller wants the decisions
// (EvaluateRequest.volume_decisions); the caller reserves and binds.
class VolumeDecisionPlugin : public virtual Plugin {
 public:
  // For `node`, which the plugin's Filter accepted in the cycle of `state`:
  // appends one pb::ClaimDecision per claim to bind there to out.claims
  // (nothing when the pod has nothing to bind). Error only for bad input,
  // as Filter would report it.
  virtual PluginStatus DecideVolumes(const CycleState& state,
                                     const pb::Pod& pod, const pb::Node& node,
                                     pb::NodeVolumes& out) const = 0;
  // How long the caller waits for the bindings it writes to be complete
  // (pb::Profile::volume_bind_timeout_seconds).
  virtual int64_t BindTimeoutSeconds() const = 0;
};

}  // namespace kscore::framework

#endif  // KSCORE_SCORER_FRAMEWORK_PLUGIN_H_
