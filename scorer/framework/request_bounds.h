#ifndef KSCORE_SCORER_FRAMEWORK_REQUEST_BOUNDS_H_
#define KSCORE_SCORER_FRAMEWORK_REQUEST_BOUNDS_H_

// What a call may cost the scorer, counted from the request before any
// plugin runs. A call's work may grow with the product of two of its lists:
// every plugin reads the pod again for each node (its tolerations against
// each node's taints, its node affinity against each node's labels), and a
// preemption dry run filters a node again for each victim and checks each
// victim against every disruption budget. Such work is counted in bytes
// read (a pass over the pod's bytes for each node), so that a call whose
// product passes a bound is refused instead of run: INVALID_ARGUMENT, as a
// batch over --max-batch-nodes, since the request alone decides it (the
// shim retries RESOURCE_EXHAUSTED on another replica and counts it as the
// scorer unreachable).

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "kscore/scorer/v1/scorer.pb.h"

namespace kscore::framework {

namespace pb = ::kscore::scorer::v1;

// Filter, PreScore, Score or Evaluate of `pod` on `nodes`: the pod's bytes
// read once per node and once per taint of each node (TaintToleration
// reads the tolerations for each taint).
int64_t NodesWork(const pb::Pod& pod, absl::Span<const pb::Node* const> nodes);

// Preempt: for each victim, the pod and the cluster data read again (a
// filter of its node, PreFilter again once a counted pod moved) and the
// disruption budgets read (selectors and disrupted pods); and each victim's
// host ports looked up among its node's used ports.
int64_t PreemptWork(const pb::PreemptRequest& req);

// QueueingHint: each query's pod read once for each taint of the event's
// nodes (TaintToleration's hint filters the pod on both) and each host port
// of the event's pods (NodePorts' hint compares the pod's ports with the
// deleted pod's).
int64_t HintWork(const pb::QueueingHintRequest& req);

// INVALID_ARGUMENT when `work` is above `max_work`: "<field>: the call
// would read about <work> bytes (<what>), more than the limit of
// <max_work> (<limit>); <advice>".
absl::Status CheckWork(int64_t work, int64_t max_work, absl::string_view field,
                       absl::string_view what, absl::string_view limit,
                       absl::string_view advice);

}  // namespace kscore::framework

#endif  // KSCORE_SCORER_FRAMEWORK_REQUEST_BOUNDS_H_
