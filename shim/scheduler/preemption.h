#ifndef KSCORE_SHIM_SCHEDULER_PREEMPTION_H_
#define KSCORE_SHIM_SCHEDULER_PREEMPTION_H_

// Seam 5, PostFilter: kube-scheduler's DefaultPreemption for a pod no node
// took, decided by the scorer (Preempt). The shim prepares the data (the
// potential nodes with their lower-priority pods) and reads the answer; the
// Scheduler carries it out (nomination, victims).

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "shim/scheduler/cycle.h"

namespace kscore::scheduler {

// The nodes Filter found Unschedulable (not UnschedulableAndUnresolvable):
// every node when PreFilter rejected the pod as Unschedulable, none when it
// rejected it as unresolvable. In the order the cycle looked at them.
std::vector<std::string> PotentialNodes(const CandidateVerdicts& ev,
                                        const cache::Cache& cache);

// The potential nodes in the order the dry run tries them: from a random
// offset, as upstream's DryRunPreemption starts, wrapping.
std::vector<std::string> PreemptOrder(const CycleInput& in,
                                      const CandidateVerdicts& ev);

// How many potential nodes of `potential` a first Preempt call sends: a
// quarter more than upstream's default DefaultPreemptionArgs make its dry
// run look for (max(100, 10%)), so that the run usually stops within them;
// more in the ratio of `nominated` of `all` nodes having pods nominated to
// them, which an equal-priority preemptor usually cannot use. An answer
// that says `partial` is asked again with twice the nodes, up to every one.
size_t FirstPreemptNodes(size_t potential, size_t nominated = 0,
                         size_t all = 0);

// What an answer means for the pod, checked against the request it answers
// (indices in range): on SUCCESS a Preemption and kSet; otherwise kClear
// when no candidate was found, kKeep when the pod was not eligible (it
// waits for the victims it already preempted to go). An answer that does
// not fit the request is an error.
struct PostFilterOutcome {
  Nominating nominating = Nominating::kKeep;
  std::optional<Preemption> preemption;
  std::string message;  // upstream's PostFilter message, for FailedScheduling
};
absl::StatusOr<PostFilterOutcome> ReadPreemptResponse(
    const pb::PreemptRequest& req, const pb::PreemptResponse& resp);

// Builds the request, asks the scorer and records the outcome in `result`
// (whose failure is Unschedulable): its nomination, the preemption, and
// the PostFilter message appended to the failure's, as upstream's
// FitError.Error() appends it. A scorer without Preempt (UNIMPLEMENTED,
// logged once) means no preemption; another failure keeps the nomination.
void PostFilter(const CycleInput& in, const CyclePlan& plan,
                const CandidateVerdicts& ev, scorer_client::Scorer& scorer,
                CycleResult& result);

}  // namespace kscore::scheduler

#endif  // KSCORE_SHIM_SCHEDULER_PREEMPTION_H_
