#ifndef KSCORE_SCORER_PLUGINS_DEFAULT_PREEMPTION_H_
#define KSCORE_SCORER_PLUGINS_DEFAULT_PREEMPTION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "model/plugin_args/default_preemption_args.h"
#include "model/yaml_decode.h"
#include "scorer/framework/preemption.h"

namespace kscore::plugins {

// DefaultPreemption is kube-scheduler v1.37's PostFilter plugin (default
// feature gates: pods are preempted one by one, no pod groups): for a pod no
// node took, it finds the node where removing the fewest, least important
// lower-priority pods lets the pod fit, sparing pods whose
// PodDisruptionBudget would be violated first. It decides only: the shim
// nominates the node and deletes the victims.
//
// The framework (framework/preemption.h) runs the search over the potential
// nodes and the pick; this plugin says how many candidates are enough,
// whether the pod may preempt, and which pods go on one node.
class DefaultPreemption : public framework::PostFilterPlugin,
                          public framework::PreemptionPolicy {
 public:
  static constexpr absl::string_view kName = "DefaultPreemption";
  // Upstream's messages (the plugin's PostFilter prefixes "preemption: ").
  static constexpr absl::string_view kMessagePrefix = "preemption: ";
  static constexpr absl::string_view kReasonNoVictims =
      "No preemption victims found for incoming pod";
  static constexpr absl::string_view kReasonPolicyNever =
      "not eligible due to preemptionPolicy=Never.";
  static constexpr absl::string_view kReasonTerminating =
      "not eligible due to a terminating pod on the nominated node.";

  using Args = model::DefaultPreemptionArgs;

  DefaultPreemption() = default;
  explicit DefaultPreemption(Args args) : args_(args) {}

  absl::string_view Name() const override { return kName; }
  // Upstream registers an assigned pod's deletion only for its PreEnqueue
  // (pods waiting for their own preemption), which kscore does not run:
  // nothing here rejects a pod at PreFilter or Filter.
  std::vector<framework::pb::ClusterEvent> EventsToRegister() const override {
    return {};
  }
  const Args& args() const { return args_; }

  // The framework's search and pick, with upstream's message prefix.
  absl::StatusOr<framework::PostFilterResult> PostFilter(
      const framework::PreemptionInput& in) const override;

  // calculateNumCandidates: the share of the potential nodes, at least the
  // absolute number, at most all of them.
  int32_t NumCandidates(int32_t num_potential_nodes) const override;
  // PodEligibleToPreemptOthers: not with preemptionPolicy Never, nor while
  // a lower-priority pod on the nominated node is terminating.
  std::string IneligibleReason(
      const framework::pb::PreemptRequest& req) const override;
  // SelectVictimsOnNode: remove every lower-priority pod; if the pod then
  // fits, add them back most important first (those whose eviction would
  // violate a PodDisruptionBudget before the others), keeping back each
  // that still lets the pod fit. The rest are the victims.
  absl::StatusOr<Victims> SelectVictimsOnNode(
      const framework::PreemptionInput& in,
      framework::DryRunNode& node) const override;

  // util.MoreImportantPod: higher priority, then earlier start (a pod
  // without one started `now`).
  static bool MoreImportant(const framework::pb::VictimPod& a,
                            const framework::pb::VictimPod& b, absl::Time now);
  // FilterPodsWithPDBViolation over `pods` (taken in that order): whether
  // evicting each, after those before it, leaves a budget of its namespace
  // that selects it below zero. A pod listed in a budget's disruptedPods
  // does not spend it; a budget without a selector (or an empty one)
  // selects no pod.
  static std::vector<bool> ViolatesBudgets(
      absl::Span<const framework::pb::VictimPod* const> pods,
      const google::protobuf::RepeatedPtrField<framework::pb::DisruptionBudget>&
          pdbs);

  // Decodes DefaultPreemptionArgs strictly and validates them as
  // ValidateDefaultPreemptionArgs; errors name the field.
  static absl::StatusOr<Args> ParseArgs(const model::YamlField& args);
  static absl::StatusOr<std::unique_ptr<framework::Plugin>> New(
      const model::YamlField& args);

 private:
  Args args_;
};

}  // namespace kscore::plugins

#endif  // KSCORE_SCORER_PLUGINS_DEFAULT_PREEMPTION_H_
