#ifndef KSCORE_SCORER_FRAMEWORK_PROFILE_H_
#define KSCORE_SCORER_FRAMEWORK_PROFILE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "model/cluster_event.h"
#include "model/config.h"
#include "scorer/framework/cycle_state.h"
#include "scorer/framework/plugin.h"
#include "scorer/framework/preemption.h"
#include "scorer/framework/registry.h"
#include "scorer/framework/status.h"

namespace kscore::framework {

// Raw, normalised and weighted scores of the feasible nodes of one cycle.
struct ScoreTable {
  std::vector<const ScorePlugin*> plugins;  // not skipped, in run order
  // The names of the nodes scored, in score order, when known (empty
  // otherwise): views of strings the caller owns.
  std::vector<absl::string_view> nodes;
  std::vector<int32_t> weights;  // per plugin
  // [plugin][node]
  std::vector<std::vector<int64_t>> raw;
  std::vector<std::vector<int64_t>> normalized;
  std::vector<int64_t> total;  // per node; filled by Normalize
};

// What a whole cycle decides about one batch of nodes (the fused call): the
// pod's PreFilter outcome, each node's Filter verdict, and the feasible
// nodes' scores.
struct NodeVerdicts {
  PluginStatus pre_filter;           // when not ok, nothing else is filled
  std::vector<PluginStatus> filter;  // per input node
  std::vector<int> feasible;         // indices into the input nodes
  std::vector<std::string> skipped;  // score plugins PreScore skipped
  ScoreTable scores;                 // over `feasible`
  // kube-scheduler's Diagnosis.UnschedulablePlugins (sorted): the plugin
  // whose PreFilter rejected the pod, those whose PreFilter result narrowed
  // the nodes, and the Filter plugins that rejected a node.
  std::vector<std::string> unschedulable_plugins;
};

// Told, once per extension point a call runs, how long all of the point's
// plugins took and the point's outcome: what kube-scheduler records as
// scheduler_framework_extension_point_duration_seconds. As upstream, Filter
// is one observation for the whole batch (Success unless a plugin errs),
// and Score covers NormalizeScore and the weights when they run with it.
// Called concurrently, from the calling thread.
class ExtensionPointObserver {
 public:
  virtual ~ExtensionPointObserver() = default;
  virtual void OnExtensionPoint(model::ExtensionPoint point, Code code,
                                const std::string& profile,
                                absl::Duration took) = 0;
};

// How far Evaluate goes for a batch: everything, raw scores only (the
// caller normalises across batches), or PreFilter and Filter only.
enum class EvaluateMode { kFull, kRawScores, kFilterOnly };

// Create's plugin lists, one per point the scorer runs (profile.cc).
struct PointPlugins;

// One scheduling profile: the plugins enabled at each extension point (after
// merging with kube-scheduler's defaults and expanding multiPoint), their
// weights, and the code that runs them in order. Immutable after Create, so
// one Profile serves any number of concurrent calls.
class Profile {
 public:
  struct PluginInfo {
    std::string name;
    int32_t weight = 0;
    std::vector<std::string> extension_points;
    // EventsToRegister, for PreFilter and Filter plugins.
    std::vector<pb::ClusterEvent> events;
  };

  // Builds the profile; errors name the configuration field. `warnings`
  // receives notes about default plugins that kscore does not run.
  static absl::StatusOr<std::unique_ptr<Profile>> Create(
      const model::ProfileConfig& config, const model::SchedulerConfig& global,
      const Registry& registry, std::vector<std::string>* warnings = nullptr);

  const std::string& scheduler_name() const { return scheduler_name_; }
  int32_t percentage_of_nodes_to_score() const { return percentage_; }
  const std::vector<std::string>& label_count_keys() const {
    return label_count_keys_;
  }
  // The most any enabled plugin needs of pb::Node::labels.
  NodeLabelUse node_labels() const { return node_labels_; }
  // Whether a request for this pod must carry node labels.
  bool NeedsNodeLabels(const pb::Pod& pod) const;
  std::vector<PluginInfo> Describe() const;
  // What the Pod message must carry (pb::Profile::pod_data), and whether
  // pods need a Plan.
  const std::vector<pb::PodData>& pod_data() const { return pod_data_; }
  bool plans() const { return plans_; }
  // Whether every enabled plugin is Batchable (pb::Profile::batches).
  bool batches() const { return batches_; }
  // The longest bind timeout of the VolumeDecisionPlugins, 0 without one
  // (pb::Profile::volume_bind_timeout_seconds).
  int64_t volume_bind_timeout_seconds() const;
  // The pod's plan: every enabled plugin's queries, in a fixed order.
  pb::PlanResponse Plan(const pb::Pod& pod) const;
  // INVALID_ARGUMENT when the pod's plan would take more than `max_bytes`
  // (the plugins' Plugin::PlanBytes), naming the pod's field that makes it
  // and `limit` (the option that sets the bound): checked before Plan or
  // BindCluster builds it.
  absl::Status CheckPlanSize(const pb::Pod& pod, int64_t max_bytes,
                             absl::string_view limit) const;
  // Checks that `cluster` and the nodes answer the pod's plan (one answer
  // and one Node.query_counts entry per query, existing terms' indices in
  // range; a node may carry no counts when the plan has no query) and makes
  // them the plugins' view through `state`. INVALID_ARGUMENT names the
  // field. `cluster` must outlive the state's use.
  absl::Status BindCluster(CycleState& state, const pb::Pod& pod,
                           const pb::ClusterData& cluster,
                           absl::Span<const pb::Node* const> nodes) const;
  // Plugins not run whose gates refuse the pods that need them.
  std::vector<std::string> GateNames() const;

  // Fine-grained extension points. absl errors mean bad input (e.g. a
  // missing or corrupt CycleState key) or a plugin bug. Each tells
  // `observer` (when given) how long it took; RunNormalizeScore as "Score".
  // `unschedulable_plugins`, when given, receives the plugin that rejected
  // the pod or those whose PreFilter result narrowed the nodes.
  absl::StatusOr<PluginStatus> RunPreFilter(
      CycleState& state, const pb::Pod& pod,
      ExtensionPointObserver* observer = nullptr,
      std::vector<std::string>* unschedulable_plugins = nullptr) const;
  // First failing filter per node; state must come from RunPreFilter.
  absl::StatusOr<std::vector<PluginStatus>> RunFilter(
      const CycleState& state, const pb::Pod& pod,
      absl::Span<const pb::Node* const> nodes,
      ExtensionPointObserver* observer = nullptr) const;
  // Returns the score plugins that asked to be skipped.
  absl::StatusOr<std::vector<std::string>> RunPreScore(
      CycleState& state, const pb::Pod& pod,
      absl::Span<const pb::Node* const> nodes,
      ExtensionPointObserver* observer = nullptr) const;
  absl::StatusOr<ScoreTable> RunScore(
      const CycleState& state, const pb::Pod& pod,
      absl::Span<const pb::Node* const> nodes,
      absl::Span<const std::string> skipped,
      ExtensionPointObserver* observer = nullptr) const;
  // Normalises table.raw in place into table.normalized and table.total.
  absl::Status RunNormalizeScore(
      const CycleState& state, const pb::Pod& pod, ScoreTable& table,
      ExtensionPointObserver* observer = nullptr) const;
  // kube-scheduler's queueing hints for one rejected pod and one event:
  // true (Queue) when one of `plugins`, the pod's rejecting plugins, says
  // the event may make it schedulable. A plugin's Hint is asked only about
  // an event one of its hinted registrations matches. A name the profile
  // does not run at PreFilter or Filter, or a plugin with no hinted
  // registration matching the event, answers Queue: when unsure, queue
  // (upstream asks only registered hints, so the shim and this profile
  // disagree). InvalidArgument when `plugins` is empty.
  absl::StatusOr<bool> QueueingHint(const pb::Pod& pod,
                                    absl::Span<const std::string> plugins,
                                    const model::EventObjects& e) const;
  // Whether a PostFilter plugin (preemption) is enabled.
  bool post_filters() const { return !post_filter_.empty(); }
  // kube-scheduler's RunPostFilterPlugins for a pod no node took, with the
  // potential nodes and their lower-priority pods (PreemptRequest): runs the
  // pod's PreFilter over the request's cluster data, then each PostFilter
  // plugin until one succeeds or fails other than Unschedulable. A failure
  // names its plugin (the first that rejected) and carries the plugins'
  // messages. `now` stands in for start times the pods do not have.
  // InvalidArgument for a request whose parts do not add up;
  // FailedPrecondition when the profile runs no PostFilter plugin.
  absl::StatusOr<PostFilterResult> RunPostFilter(
      const pb::PreemptRequest& req, absl::Time now,
      ExtensionPointObserver* observer = nullptr) const;
  // What the VolumeDecisionPlugins (enabled at Filter, not skipped by
  // their PreFilter) decide for each of `nodes`, feasible nodes of the
  // cycle of `state`, in order: one entry per node that has claims to bind
  // (kube-scheduler's Reserve assumes them on the node it picks).
  absl::StatusOr<std::vector<pb::NodeVolumes>> DecideVolumes(
      const CycleState& state, const pb::Pod& pod,
      absl::Span<const pb::Node* const> nodes) const;
  // Finds a score plugin by name (for NormalizeScore requests).
  const ScorePlugin* FindScorePlugin(absl::string_view name) const;
  int32_t WeightOf(absl::string_view name) const;

  // All of the above for one batch, as far as `mode` says: with kRawScores
  // table.normalized and table.total stay empty, with kFilterOnly the whole
  // table does. `observer` hears of each point run (Score once, normalising
  // included).
  absl::StatusOr<NodeVerdicts> Evaluate(
      CycleState& state, const pb::Pod& pod,
      absl::Span<const pb::Node* const> nodes, EvaluateMode mode,
      ExtensionPointObserver* observer = nullptr) const;
  absl::StatusOr<NodeVerdicts> Evaluate(CycleState& state, const pb::Pod& pod,
                                        absl::Span<const pb::Node* const> nodes,
                                        bool normalize) const {
    return Evaluate(state, pod, nodes,
                    normalize ? EvaluateMode::kFull : EvaluateMode::kRawScores);
  }

 private:
  friend class ProfilePeer;  // scorer/testing/profile_peer.h: tests only

  Profile() = default;

  // Create's steps after the plugin lists are final: what plans and
  // requests need, the queueing hints, the label counts scoring reads.
  void FillPlanners(const PointPlugins& plugins);
  void FillEventToPluginMap(const PointPlugins& plugins);
  void FillLabelCountKeys(const PointPlugins& plugins);

  absl::StatusOr<PluginStatus> PreFilterUntimed(
      CycleState& state, const pb::Pod& pod,
      std::vector<std::string>* unschedulable_plugins) const;
  absl::StatusOr<std::vector<PluginStatus>> FilterUntimed(
      const CycleState& state, const pb::Pod& pod,
      absl::Span<const pb::Node* const> nodes) const;
  absl::StatusOr<std::vector<std::string>> PreScoreUntimed(
      CycleState& state, const pb::Pod& pod,
      absl::Span<const pb::Node* const> nodes) const;
  absl::StatusOr<ScoreTable> ScoreUntimed(
      const CycleState& state, const pb::Pod& pod,
      absl::Span<const pb::Node* const> nodes,
      absl::Span<const std::string> skipped) const;
  absl::Status NormalizeScoreUntimed(const CycleState& state,
                                     const pb::Pod& pod,
                                     ScoreTable& table) const;

  std::string scheduler_name_;
  int32_t percentage_ = 0;
  std::vector<std::unique_ptr<Plugin>> owned_;
  std::vector<const PreFilterPlugin*> pre_filter_;
  std::vector<const FilterPlugin*> filter_;
  std::vector<const PreScorePlugin*> pre_score_;
  std::vector<const ScorePlugin*> score_;
  std::vector<int32_t> score_weights_;
  std::vector<const PostFilterPlugin*> post_filter_;
  // Filter plugins that also decide volume bindings.
  std::vector<const VolumeDecisionPlugin*> volume_deciders_;
  // Gates of enabled plugins the scorer does not run (Registry::Gate),
  // checked before the PreFilter plugins.
  std::vector<std::pair<std::string, PodGate>> gates_;
  std::vector<std::string> label_count_keys_;
  NodeLabelUse node_labels_ = NodeLabelUse::kNever;
  std::vector<pb::PodData> pod_data_;
  bool plans_ = false;
  bool batches_ = true;
  // Every distinct enabled plugin, in the order plans are built.
  std::vector<const Plugin*> planners_;
  // PreFilter and Filter plugins by name, with their hinted registrations.
  struct Hinter {
    const Plugin* plugin = nullptr;
    std::vector<pb::ClusterEvent> hinted;
  };
  absl::flat_hash_map<absl::string_view, Hinter> hinters_;
};

}  // namespace kscore::framework

#endif  // KSCORE_SCORER_FRAMEWORK_PROFILE_H_
