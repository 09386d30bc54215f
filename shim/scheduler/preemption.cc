#include "shim/scheduler/preemption.h"

#include <algorithm>
#include <atomic>
#include <random>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/arena.h"
#include "spdlog/spdlog.h"

namespace kscore::scheduler {
namespace {

// Upstream's PodEligibleToPreemptOthers said no ("not eligible due to
// preemptionPolicy=Never." or "... a terminating pod on the nominated
// node."): its PostFilter returns no result, which leaves the nomination
// as it is. The answer carries no flag for it, only the words.
bool NotEligible(const pb::PreemptResponse& resp) {
  constexpr absl::string_view kWords = "not eligible due to";
  return absl::StrContains(resp.message(), kWords) ||
         (resp.status().reasons_size() > 0 &&
          absl::StrContains(resp.status().reasons(0), kWords));
}

}  // namespace

std::vector<std::string> PotentialNodes(const CandidateVerdicts& ev,
                                        const cache::Cache& cache) {
  if (ev.pre_filter_code == pb::CODE_UNSCHEDULABLE) return cache.NodeNames();
  if (ev.pre_filter_code != pb::CODE_SUCCESS) return {};
  std::vector<std::string> out = ev.potential_before;
  out.reserve(out.size() + ev.potential.size());
  for (size_t i : ev.potential) out.push_back(ev.names[i]);
  return out;
}

size_t FirstPreemptNodes(size_t potential, size_t nominated, size_t all) {
  const size_t base = std::max<size_t>(125, potential / 8);
  if (nominated == 0 || all == 0) return std::min(potential, base);
  if (nominated >= all) return potential;
  return std::min(potential, base * all / (all - nominated));
}

std::vector<std::string> PreemptOrder(const CycleInput& in,
                                      const CandidateVerdicts& ev) {
  std::vector<std::string> potential = PotentialNodes(ev, *in.cache);
  if (!potential.empty()) {
    // Upstream's GetOffsetAndNumCandidates: a random start, so that
    // preemptions spread over the nodes.
    std::uniform_int_distribution<size_t> offset(0, potential.size() - 1);
    std::rotate(
        potential.begin(),
        potential.begin() + static_cast<std::ptrdiff_t>(
                                in.rng != nullptr ? offset(*in.rng) : 0),
        potential.end());
  }
  return potential;
}

namespace {

// The request but its nodes: the pod, the counts, its nominated node and,
// unless Filter found it unresolvable, that node's lower-priority pods.
void PreemptHeader(const CycleInput& in, const CyclePlan& plan,
                   const CandidateVerdicts& ev,
                   const std::vector<std::string>& order,
                   pb::PreemptRequest& req) {
  const objects::PodInfo& pod = *in.pod;
  req.Clear();
  req.set_profile(pod.scheduler_name);
  req.set_config_hash(in.profile->config_hash);
  *req.mutable_pod() = plan.pod;
  if (plan.prepared != nullptr) *req.mutable_cluster() = plan.prepared->cluster;
  req.set_num_nodes(static_cast<int32_t>(ev.all_nodes));
  req.set_num_potential_nodes(static_cast<int32_t>(order.size()));
  const std::string nominated = in.cache->NominatedNode(pod.key);
  req.set_nominated_node_name(nominated);
  if (!nominated.empty() &&
      std::find(order.begin(), order.end(), nominated) != order.end()) {
    for (pb::VictimPod& v :
         in.cache->LowerPriorityPods(nominated, pod.priority)) {
      *req.add_nominated_node_pods() = std::move(v);
    }
  }
}

// The request to send for the first `first_nodes` of `order` into
// `encoded`: `head` (the request but its nodes), the nodes with their
// lower-priority pods, and the budgets of the victims' namespaces; into
// req, the budgets and, per node sent, what reading the answer needs.
void SetPreemptNodes(const CycleInput& in, const CyclePlan& plan,
                     const std::vector<std::string>& order, size_t first_nodes,
                     const std::string& head, pb::PreemptRequest& req,
                     std::string* encoded) {
  req.clear_nodes();
  req.clear_pdbs();
  *encoded = head;
  const std::vector<std::string> sent(
      order.begin(), order.begin() + static_cast<std::ptrdiff_t>(
                                         std::min(order.size(), first_nodes)));
  in.cache->EncodePreemptionNodes(
      *in.pod, plan.pod, in.profile->label_count_keys, sent, plan.node_labels,
      plan.plan, plan.prepared.get(), in.max_victim_pods, encoded,
      req.mutable_nodes());
  absl::flat_hash_set<std::string> seen;
  std::vector<std::string> namespaces;
  for (const pb::PreemptionNode& n : req.nodes()) {
    for (const pb::VictimPod& v : n.pods()) {
      if (seen.insert(v.namespace_()).second) {
        namespaces.push_back(v.namespace_());
      }
    }
  }
  std::sort(namespaces.begin(), namespaces.end());
  pb::PreemptRequest budgets;
  for (pb::DisruptionBudget& b : in.cache->DisruptionBudgetsIn(namespaces)) {
    *budgets.add_pdbs() = std::move(b);
  }
  budgets.AppendToString(encoded);
  *req.mutable_pdbs() = budgets.pdbs();
}

}  // namespace

absl::StatusOr<PostFilterOutcome> ReadPreemptResponse(
    const pb::PreemptRequest& req, const pb::PreemptResponse& resp) {
  PostFilterOutcome out;
  out.message = resp.message();
  switch (resp.status().code()) {
    case pb::CODE_SUCCESS:
      break;
    case pb::CODE_UNSCHEDULABLE:
    case pb::CODE_UNSCHEDULABLE_AND_UNRESOLVABLE:
      // Upstream clears the nomination only when the search found no
      // candidate (NewPostFilterResultWithNominatedNode("")).
      out.nominating = resp.candidates().empty() && !NotEligible(resp)
                           ? Nominating::kClear
                           : Nominating::kKeep;
      return out;
    default:
      return absl::InternalError(absl::StrCat(
          "scorer error: Preempt answered ",
          pb::Code_Name(resp.status().code()), ": ", resp.message()));
  }
  if (resp.chosen() < 0 || resp.chosen() >= resp.candidates_size()) {
    return absl::InternalError(
        absl::StrCat("scorer error: Preempt chose candidate ", resp.chosen(),
                     " of ", resp.candidates_size()));
  }
  const pb::PreemptionCandidate& c = resp.candidates(resp.chosen());
  if (c.node() < 0 || c.node() >= req.nodes_size()) {
    return absl::InternalError(absl::StrCat("scorer error: Preempt chose node ",
                                            c.node(), " of ",
                                            req.nodes_size()));
  }
  const pb::PreemptionNode& node = req.nodes(c.node());
  Preemption p;
  p.node = node.node().name();
  for (int32_t v : c.victims()) {
    if (v < 0 || v >= node.pods_size()) {
      return absl::InternalError(
          absl::StrCat("scorer error: Preempt chose pod ", v, " of ",
                       node.pods_size(), " on node ", p.node));
    }
    const pb::VictimPod& pod = node.pods(v);
    p.victims.push_back(
        {pod.namespace_(), pod.name(), pod.uid(), pod.terminating()});
  }
  out.nominating = Nominating::kSet;
  out.preemption = std::move(p);
  return out;
}

namespace {

// Asks the scorer's PostFilter, filling `req` with the request answered.
// When the request names lower-priority pods on the pod's nominated node
// (besides the pod itself, the one input that can make it ineligible), it
// asks first with no nodes: a pod still waiting for its victims is then
// answered without every node's victims built and sent. Then the nodes a
// dry run usually stops within and, while it did not stop within those
// sent, twice as many, up to every one (unless --preemption-max-victim-pods
// cut the call short). The dry run goes through the nodes in order and
// stops at the same node whatever follows it, so an answer that is not
// partial is the answer over every node.
absl::StatusOr<pb::PreemptResponse> AskPreempt(const CycleInput& in,
                                               const CyclePlan& plan,
                                               const CandidateVerdicts& ev,
                                               scorer_client::Scorer& scorer,
                                               pb::PreemptRequest& req) {
  const std::vector<std::string> order = PreemptOrder(in, ev);
  PreemptHeader(in, plan, ev, order, req);
  if (req.nominated_node_pods_size() > 0) {
    absl::StatusOr<pb::PreemptResponse> resp = scorer.Preempt(req);
    if (!resp.ok() || NotEligible(*resp)) return resp;
  }
  const std::string head = req.SerializeAsString();
  std::string encoded;
  const size_t first = FirstPreemptNodes(
      order.size(), in.cache->NominatedNodeCount(), ev.all_nodes);
  size_t asked = first;
  SetPreemptNodes(in, plan, order, asked, head, req, &encoded);
  absl::StatusOr<pb::PreemptResponse> resp = scorer.PreemptEncoded(encoded);
  while (resp.ok() && resp->partial() && asked < order.size() &&
         static_cast<size_t>(req.nodes_size()) == asked) {
    asked = std::min(order.size(), 2 * asked);
    SetPreemptNodes(in, plan, order, asked, head, req, &encoded);
    resp = scorer.PreemptEncoded(encoded);
  }
  return resp;
}

}  // namespace

void PostFilter(const CycleInput& in, const CyclePlan& plan,
                const CandidateVerdicts& ev, scorer_client::Scorer& scorer,
                CycleResult& result) {
  // On an arena: a request carries hundreds of nodes and their pods.
  google::protobuf::Arena arena;
  pb::PreemptRequest& req =
      *google::protobuf::Arena::CreateMessage<pb::PreemptRequest>(&arena);
  absl::StatusOr<pb::PreemptResponse> resp =
      AskPreempt(in, plan, ev, scorer, req);
  if (absl::IsUnimplemented(resp.status())) {
    // A scorer from before the call: as a profile without PostFilter.
    static std::atomic<bool> logged{false};
    if (!logged.exchange(true)) {
      spdlog::warn("the scorer does not answer Preempt ({}); not preempting",
                   std::string(resp.status().message()));
    }
    result.nominating = Nominating::kClear;
    return;
  }
  absl::StatusOr<PostFilterOutcome> outcome =
      resp.ok() ? ReadPreemptResponse(req, *resp) : resp.status();
  if (!outcome.ok()) {
    // Upstream's PostFilter Error: no result, the nomination stays.
    spdlog::error("preemption for pod {}: {}", in.pod->key,
                  std::string(outcome.status().message()));
    result.nominating = Nominating::kKeep;
    return;
  }
  result.nominating = outcome->nominating;
  result.preemption = std::move(outcome->preemption);
  if (!outcome->message.empty()) {
    absl::StrAppend(&result.failure->message, " ", outcome->message);
  }
  spdlog::debug("preemption for pod {}: {} ({} potential nodes, {} sent)",
                in.pod->key, outcome->message, req.num_potential_nodes(),
                req.nodes_size());
}

}  // namespace kscore::scheduler
