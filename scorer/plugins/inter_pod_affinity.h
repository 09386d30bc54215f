#ifndef KSCORE_SCORER_PLUGINS_INTER_POD_AFFINITY_H_
#define KSCORE_SCORER_PLUGINS_INTER_POD_AFFINITY_H_

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "model/plugin_args/inter_pod_affinity_args.h"
#include "model/yaml_decode.h"
#include "scorer/framework/plugin.h"

namespace kscore::plugins {

// InterPodAffinity enforces the pod's required pod affinity and
// anti-affinity and the required anti-affinity of the pods already placed,
// and prefers nodes by the preferred terms of both sides (and by existing
// pods' required affinity, weighted by hardPodAffinityWeight), as
// kube-scheduler v1.37 does with its default feature gates
// (InterPodAffinityHostnameFastPath off).
//
// The shim only counts: the pod's plan asks, per term of the pod, how many
// existing pods match it in each node's topology domain (PodQuery), and for
// the distinct terms of existing pods how many pods carry them there
// (ExistingTerm, TermCount). Whether the incoming pod matches an existing
// pod's term, and what the counts mean, is decided here.
class InterPodAffinity : public framework::PreFilterPlugin,
                         public framework::FilterPlugin,
                         public framework::PreScorePlugin,
                         public framework::ScorePlugin {
 public:
  static constexpr absl::string_view kName = "InterPodAffinity";
  static constexpr absl::string_view kPreFilterStateKey =
      "PreFilterInterPodAffinity";
  static constexpr absl::string_view kPreScoreStateKey =
      "PreScoreInterPodAffinity";
  static constexpr absl::string_view kReasonAffinity =
      "node(s) didn't match pod affinity rules";
  static constexpr absl::string_view kReasonAntiAffinity =
      "node(s) didn't match pod anti-affinity rules";
  static constexpr absl::string_view kReasonExistingAntiAffinity =
      "node(s) didn't satisfy existing pods anti-affinity rules";

  using Args = model::InterPodAffinityArgs;

  // What PreFilter learnt, for Filter. Encoded as "1" or "0" (first_of_group)
  // then ",<index>" per matching term.
  struct PreFilterState {
    // No existing pod matches all of the pod's required affinity terms (on
    // a node with their topology keys) and the pod matches them itself: it
    // may start its group on any node that has every topology key.
    bool first_of_group = false;
    // Indices into ClusterData.existing_terms of the required anti-affinity
    // terms of existing pods that the incoming pod matches, ascending.
    std::vector<int32_t> matching_existing;

    std::string Encode() const;
    static absl::StatusOr<PreFilterState> Decode(absl::string_view bytes);
  };

  // What PreScore learnt, for Score: the signed weight a pod carrying an
  // existing term adds to each node of its domain, for the terms that count
  // (the incoming pod matches them, weight not 0). Encoded as
  // "<index>:<weight>" joined by ",".
  struct PreScoreState {
    std::vector<std::pair<int32_t, int64_t>> existing_weights;

    std::string Encode() const;
    static absl::StatusOr<PreScoreState> Decode(absl::string_view bytes);
  };

  InterPodAffinity() = default;
  explicit InterPodAffinity(Args args) : args_(args) {}

  absl::string_view Name() const override { return kName; }
  // EventsToRegister as upstream's: Assigned pods coming, going or relabelled,
  // the pod relabelled, a node added or relabelled. Unhinted: upstream's
  // hints match the other pod's labels against the pod's terms; not done
  // yet, so every such event queues.
  std::vector<framework::pb::ClusterEvent> EventsToRegister() const override {
    return {
        model::MakeEvent(framework::pb::EVENT_RESOURCE_ASSIGNED_POD,
                         model::action::kAdd | model::action::kUpdatePodLabel |
                             model::action::kDelete),
        model::MakeEvent(framework::pb::EVENT_RESOURCE_TARGET_POD,
                         model::action::kUpdatePodLabel),
        model::MakeEvent(
            framework::pb::EVENT_RESOURCE_NODE,
            model::action::kAdd | model::action::kUpdateNodeLabel)};
  }
  const Args& args() const { return args_; }

  // Existing pods' terms select the incoming pod by its namespace's labels.
  std::vector<framework::pb::PodData> PodDataNeeded() const override {
    return {framework::pb::POD_DATA_NAMESPACE_LABELS};
  }
  bool Plans() const override { return true; }
  // One query per term of the pod, in the order: required affinity (each
  // counting the pods that match every required affinity term, grouped by
  // that term's topology key), required anti-affinity, preferred affinity,
  // preferred anti-affinity. Pods being deleted count, as they are in
  // kube-scheduler's snapshot. A term without a topology key gets a query
  // that matches no pod, so positions stay fixed. Existing terms: required
  // anti-affinity always; required affinity (unless hardPodAffinityWeight
  // is 0) and preferred ones unless ignorePreferredTermsOfExistingPods
  // skips scoring for this pod. Node labels when the pod has required
  // affinity (Filter checks the node has the topology keys). Nothing for a
  // pod with a malformed selector: PreFilter and PreScore reject it.
  void AddToPlan(const framework::pb::Pod& pod,
                 framework::pb::PlanResponse& plan) const override;
  // Each required affinity query carries every required affinity term's
  // selectors: n terms make n * n selectors (the API server admits any
  // number of terms).
  PlanSize PlanBytes(const framework::pb::Pod& pod) const override;

  // UnschedulableAndUnresolvable ("parsing pod: ...") for a malformed
  // selector in any of the pod's terms; Skip when the pod has no required
  // term and no existing pod's required anti-affinity matches it.
  framework::PluginStatus PreFilter(
      framework::CycleState& state,
      const framework::pb::Pod& pod) const override;
  // In kube-scheduler's order: the pod's affinity (every topology key on the
  // node, and a matching pod in each term's domain unless first_of_group;
  // UnschedulableAndUnresolvable), its anti-affinity (no matching pod in any
  // term's domain; Unschedulable), existing pods' anti-affinity (no pod in
  // the node's domain carries a term matching the pod; Unschedulable).
  framework::PluginStatus Filter(
      const framework::CycleState& state, const framework::pb::Pod& pod,
      const framework::pb::Node& node) const override;
  // Skip when ignorePreferredTermsOfExistingPods and the pod has no
  // preferred term, or when no term of either side matches a pod on a node
  // with its topology key; Error for a malformed selector.
  framework::PluginStatus PreScore(
      framework::CycleState& state, const framework::pb::Pod& pod,
      absl::Span<const framework::pb::Node* const> nodes) const override;
  // Raw score: per preferred term of the pod, weight times the matching pods
  // in the node's domain (negative for anti-affinity), plus per existing
  // term that counts, its weight times the pods carrying it there.
  framework::PluginStatus Score(
      const framework::CycleState& state, const framework::pb::Pod& pod,
      absl::Span<const framework::pb::Node* const> nodes,
      absl::Span<int64_t> scores) const override;
  // Any int64: anti-affinity weights subtract.
  model::ScoreRange RawScoreRange() const override {
    return {std::numeric_limits<int64_t>::min(),
            std::numeric_limits<int64_t>::max()};
  }
  // kube-scheduler's min-max scaling onto [0, 100] over the scored nodes
  // (all 0 when every node has the same raw score).
  framework::PluginStatus NormalizeScore(
      const framework::CycleState& state, const framework::pb::Pod& pod,
      absl::Span<int64_t> scores) const override;

  // Decodes InterPodAffinityArgs strictly and validates them as
  // ValidateInterPodAffinityArgs; errors name the field.
  static absl::StatusOr<Args> ParseArgs(const model::YamlField& args);
  static absl::StatusOr<std::unique_ptr<framework::Plugin>> New(
      const model::YamlField& args);

 private:
  // Whether PreScore skips for this pod before looking at the cluster.
  bool SkipsScoring(const framework::pb::Pod& pod) const;

  Args args_;
};

}  // namespace kscore::plugins

#endif  // KSCORE_SCORER_PLUGINS_INTER_POD_AFFINITY_H_
