#ifndef KSCORE_SCORER_PLUGINS_NODE_AFFINITY_H_
#define KSCORE_SCORER_PLUGINS_NODE_AFFINITY_H_

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "model/plugin_args/node_affinity_args.h"
#include "model/yaml_decode.h"
#include "scorer/framework/plugin.h"

namespace kscore::plugins {

// NodeAffinity enforces the pod's nodeSelector and required node affinity,
// and prefers nodes matching its preferred node affinity terms.
class NodeAffinity : public framework::PreFilterPlugin,
                     public framework::FilterPlugin,
                     public framework::PreScorePlugin,
                     public framework::ScorePlugin {
 public:
  static constexpr absl::string_view kName = "NodeAffinity";
  static constexpr absl::string_view kPreFilterStateKey =
      "PreFilterNodeAffinity";
  static constexpr absl::string_view kReasonPod =
      "node(s) didn't match Pod's node affinity/selector";
  static constexpr absl::string_view kReasonEnforced =
      "node(s) didn't match scheduler-enforced node affinity";
  static constexpr absl::string_view kReasonConflict =
      "pod affinity terms conflict";
  // kube-scheduler never runs Filter on nodes its PreFilter result left out
  // (the required terms all pin metadata.name) and reports them this way.
  static constexpr absl::string_view kReasonNotInPreFilterResult =
      "node(s) didn't satisfy plugin(s) [NodeAffinity]";

  // What PreFilter learnt from the pod, so Filter does not re-validate it per
  // node. Encoded as valid_terms, "\nR" (restricted) or "\nA", then
  // "\n<node name>" per allowed name (node names never hold a newline).
  struct PreFilterState {
    // One byte per required term: '1' if it is well formed and non-empty
    // (kube-scheduler drops the others: they match no node).
    std::string valid_terms;
    // When every required term pins metadata.name: the only nodes allowed.
    bool restricted = false;
    absl::flat_hash_set<std::string> node_names;

    std::string Encode() const;
    static absl::StatusOr<PreFilterState> Decode(absl::string_view bytes);
  };

  absl::string_view Name() const override { return kName; }
  // EventsToRegister as upstream's: A node added or relabelled.
  std::vector<framework::pb::ClusterEvent> EventsToRegister() const override {
    return {
        model::MakeEvent(framework::pb::EVENT_RESOURCE_NODE,
                         model::action::kAdd | model::action::kUpdateNodeLabel,
                         /*hinted=*/true)};
  }
  // Upstream's isSchedulableAfterNodeChange: the node matches addedAffinity
  // and the pod's nodeSelector and required terms, and (for an update) the
  // pod's did not match it before.
  model::QueueingHint Hint(const framework::pb::Pod& pod,
                           const model::EventObjects& e) const override;

  // Skip when neither the pod (nodeSelector, required node affinity) nor
  // addedAffinity requires anything.
  // When every required term pins metadata.name: those nodes only.
  std::optional<std::vector<std::string>> PreFilterNodeNames(
      const framework::CycleState& state,
      const framework::pb::Pod& pod) const override;

  framework::PluginStatus PreFilter(
      framework::CycleState& state,
      const framework::pb::Pod& pod) const override;
  framework::PluginStatus Filter(
      const framework::CycleState& state, const framework::pb::Pod& pod,
      const framework::pb::Node& node) const override;
  // Skip when neither the pod nor addedAffinity has preferred terms; Error
  // when one of the pod's is malformed.
  framework::PluginStatus PreScore(
      framework::CycleState& state, const framework::pb::Pod& pod,
      absl::Span<const framework::pb::Node* const> nodes) const override;
  // Raw score: the sum of the weights of the preferred terms (the pod's and
  // addedAffinity's) the node matches. Reads the terms from the pod (checked
  // once per batch): no state needed.
  framework::PluginStatus Score(
      const framework::CycleState& state, const framework::pb::Pod& pod,
      absl::Span<const framework::pb::Node* const> nodes,
      absl::Span<int64_t> scores) const override;
  framework::PluginStatus NormalizeScore(
      const framework::CycleState& state, const framework::pb::Pod& pod,
      absl::Span<int64_t> scores) const override;

  // Computes the PreFilter state (restricted with no names: the terms
  // conflict).
  static PreFilterState Prepare(const framework::pb::Pod& pod);

  // NodeAffinityArgs.addedAffinity: node affinity every pod of the profile
  // gets on top of its own (its required terms are enforced with their own
  // reason; its preferred terms add to every pod's score).
  using Args = model::NodeAffinityArgs;

  NodeAffinity() = default;
  explicit NodeAffinity(Args args) : args_(std::move(args)) {}

  const Args& args() const { return args_; }
  framework::NodeLabelUse NodeLabels() const override {
    return args_.added_affinity.has_required() ||
                   !args_.added_affinity.required().empty() ||
                   !args_.added_affinity.preferred().empty()
               ? framework::NodeLabelUse::kAlways
               : framework::NodeLabelUse::kWhenPodSelects;
  }

  // Decodes NodeAffinityArgs strictly; malformed addedAffinity terms are
  // errors naming the field.
  static absl::StatusOr<Args> ParseArgs(const model::YamlField& args);
  static absl::StatusOr<std::unique_ptr<framework::Plugin>> New(
      const model::YamlField& args);

 private:
  bool HasAddedRequired() const {
    return args_.added_affinity.has_required() ||
           !args_.added_affinity.required().empty();
  }
  // Whether the node matches addedAffinity's required terms (true when
  // there are none).
  bool MatchesAdded(const framework::pb::Node& node) const;
  // kube-scheduler's RequiredNodeAffinity.Match of the pod (nodeSelector
  // and required terms, `s` from Prepare): kMalformed when no term matches
  // and one is malformed, where upstream returns an error.
  enum class PodMatch { kMatch, kNoMatch, kMalformed };
  static PodMatch MatchPod(const PreFilterState& s,
                           const framework::pb::Pod& pod,
                           const framework::pb::Node& node);

  Args args_;
};

}  // namespace kscore::plugins

#endif  // KSCORE_SCORER_PLUGINS_NODE_AFFINITY_H_
