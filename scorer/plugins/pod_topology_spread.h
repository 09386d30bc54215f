#ifndef KSCORE_SCORER_PLUGINS_POD_TOPOLOGY_SPREAD_H_
#define KSCORE_SCORER_PLUGINS_POD_TOPOLOGY_SPREAD_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "model/plugin_args/pod_topology_spread_args.h"
#include "model/selectors.h"
#include "model/yaml_decode.h"
#include "scorer/framework/plugin.h"

namespace kscore::plugins {

// PodTopologySpread keeps matching pods spread over topology domains: Filter
// rejects nodes where the pod would push a DoNotSchedule constraint past its
// maxSkew, Score prefers nodes whose domains hold fewer matching pods
// (ScheduleAnyway constraints). A pod without constraints gets the profile's
// default constraints, selecting the pods of its Services and controller.
//
// The shim counts the matching pods per domain over the whole cluster (the
// plan's queries, one per constraint); this plugin decides what the counts
// mean.
class PodTopologySpread : public framework::PreFilterPlugin,
                          public framework::FilterPlugin,
                          public framework::PreScorePlugin,
                          public framework::ScorePlugin {
 public:
  static constexpr absl::string_view kName = "PodTopologySpread";
  static constexpr absl::string_view kPreFilterStateKey =
      "PreFilterPodTopologySpread";
  static constexpr absl::string_view kPreScoreStateKey =
      "PreScorePodTopologySpread";
  static constexpr absl::string_view kReasonConstraintsNotMatch =
      "node(s) didn't match pod topology spread constraints";
  static constexpr absl::string_view kReasonNodeLabelNotMatch =
      "node(s) didn't match pod topology spread constraints (missing "
      "required label)";

  using Args = model::PodTopologySpreadArgs;

  // A constraint of the pod's (or a default one) as kube-scheduler's
  // topologySpreadConstraint: the selector with matchLabelKeys merged in.
  struct Constraint {
    int32_t max_skew = 0;
    std::string topology_key;
    // False when the selector selects no pod (labelSelector unset).
    bool has_selector = false;
    framework::pb::LabelSelector selector;
    int32_t min_domains = 1;
    bool honor_node_affinity = true;
    bool honor_node_taints = false;
    // Whether existing pods are counted: a selector with no requirement
    // counts none (kube-scheduler's countPodsMatchSelector), though it
    // matches the incoming pod.
    bool Counts() const;
    bool Matches(const model::LabelMap& labels) const;
  };

  // What Filter needs per DoNotSchedule constraint, worked out by PreFilter
  // from the cluster's answers. Encoded as one line per constraint:
  // "<maxSkew> <minMatch> <selfMatch 0|1> <topologyKey>".
  struct PreFilterState {
    struct Item {
      int32_t max_skew = 0;
      // The global minimum of matching pods a domain may be compared to:
      // 0 while fewer domains than minDomains exist.
      int64_t min_match = 0;
      bool self_match = false;
      std::string topology_key;
    };
    std::vector<Item> constraints;
    std::string Encode() const;
    static absl::StatusOr<PreFilterState> Decode(absl::string_view bytes);
  };

  // What Score and NormalizeScore need, worked out by PreScore from the
  // feasible nodes. Encoded as the number of constraints, one line per
  // constraint "<maxSkew> <weight as hex bits> <topologyKey>", then one line
  // per ignored node.
  struct PreScoreState {
    struct Item {
      int32_t max_skew = 0;
      // log(number of domains among the feasible nodes + 2).
      double weight = 0;
      std::string topology_key;
    };
    std::vector<Item> constraints;
    // Feasible nodes missing one of the constraints' topology keys: they
    // score 0.
    absl::flat_hash_set<std::string> ignored;
    std::string Encode() const;
    static absl::StatusOr<PreScoreState> Decode(absl::string_view bytes);
  };

  explicit PodTopologySpread(Args args);

  absl::string_view Name() const override { return kName; }
  // EventsToRegister as upstream's: Assigned pods coming, going or relabelled,
  // the pod relabelled or tolerating more, nodes added, deleted, relabelled or
  // retainted. Unhinted: upstream's hints (selectors against the changed
  // pod, the node's topology keys) are not done yet; every such event
  // queues.
  std::vector<framework::pb::ClusterEvent> EventsToRegister() const override {
    return {
        model::MakeEvent(framework::pb::EVENT_RESOURCE_ASSIGNED_POD,
                         model::action::kAdd | model::action::kUpdatePodLabel |
                             model::action::kDelete),
        model::MakeEvent(framework::pb::EVENT_RESOURCE_TARGET_POD,
                         model::action::kUpdatePodToleration |
                             model::action::kUpdatePodLabel),
        model::MakeEvent(framework::pb::EVENT_RESOURCE_NODE,
                         model::action::kAdd | model::action::kDelete |
                             model::action::kUpdateNodeLabel |
                             model::action::kUpdateNodeTaint)};
  }
  framework::NodeLabelUse NodeLabels() const override {
    return framework::NodeLabelUse::kAlways;
  }
  // The pod's Services and controller when there are default constraints.
  std::vector<framework::pb::PodData> PodDataNeeded() const override;
  bool Plans() const override { return true; }
  // One query per DoNotSchedule constraint (domain counts and minimum),
  // then one per ScheduleAnyway constraint (per node for the hostname key,
  // else per domain); score_needs_all_feasible when the pod has a
  // ScheduleAnyway constraint, since the weights and the normalisation
  // depend on every feasible node.
  void AddToPlan(const framework::pb::Pod& pod,
                 framework::pb::PlanResponse& plan) const override;
  // Each query lists every key of its kind's constraints: n constraints on
  // n keys make n * n keys (the API server admits any number of
  // constraints, each {topologyKey, whenUnsatisfiable} once).
  PlanSize PlanBytes(const framework::pb::Pod& pod) const override;

  // Skip when the pod has no DoNotSchedule constraint.
  framework::PluginStatus PreFilter(
      framework::CycleState& state,
      const framework::pb::Pod& pod) const override;
  framework::PluginStatus Filter(
      const framework::CycleState& state, const framework::pb::Pod& pod,
      const framework::pb::Node& node) const override;
  // Skip when the pod has no ScheduleAnyway constraint.
  framework::PluginStatus PreScore(
      framework::CycleState& state, const framework::pb::Pod& pod,
      absl::Span<const framework::pb::Node* const> nodes) const override;
  // Raw score: the sum over constraints of (matching pods in the node's
  // domain) * weight + maxSkew - 1, rounded; 0 for ignored nodes.
  framework::PluginStatus Score(
      const framework::CycleState& state, const framework::pb::Pod& pod,
      absl::Span<const framework::pb::Node* const> nodes,
      absl::Span<int64_t> scores) const override;
  // Fewer matching pods score higher; ignored nodes get 0. Needs the node
  // names when PreScore ignored any node.
  framework::PluginStatus NormalizeScoreByNode(
      const framework::CycleState& state, const framework::pb::Pod& pod,
      absl::Span<const absl::string_view> nodes,
      absl::Span<int64_t> scores) const override;

  // The pod's constraints with the given whenUnsatisfiable, or the default
  // ones when it has none; an error naming the constraint when a selector is
  // malformed.
  absl::StatusOr<std::vector<Constraint>> Constraints(
      const framework::pb::Pod& pod, bool do_not_schedule) const;

  const Args& args() const { return args_; }

  // Decodes PodTopologySpreadArgs strictly and validates them as
  // kube-scheduler's ValidatePodTopologySpreadArgs, naming the field.
  static absl::StatusOr<Args> ParseArgs(const model::YamlField& args);
  static absl::StatusOr<std::unique_ptr<framework::Plugin>> New(
      const model::YamlField& args);

 private:
  Args args_;
  // The constraints a pod without its own gets (before their selector).
  std::vector<framework::pb::TopologySpreadConstraint> defaults_;
};

// helper.DefaultSelector: the requirements of the pod's Services' selectors
// and of its ReplicationController's, ReplicaSet's or StatefulSet's, ANDed.
// No requirement at all when the pod belongs to none.
framework::pb::LabelSelector DefaultSelector(
    const framework::pb::WorkloadSelectors& workloads);

}  // namespace kscore::plugins

#endif  // KSCORE_SCORER_PLUGINS_POD_TOPOLOGY_SPREAD_H_
