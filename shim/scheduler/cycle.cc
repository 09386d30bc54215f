#include "shim/scheduler/cycle.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "google/protobuf/arena.h"
#include "model/node_key.h"
#include "shim/scheduler/batching.h"
#include "shim/scheduler/preemption.h"
#include "spdlog/spdlog.h"

namespace kscore::scheduler {
namespace {

// A plugin's Error status carried in an answer, in kube-scheduler's wording.
Failure PreFilterError(const pb::Status& s) {
  return Failure::Error(absl::StrCat("running PreFilter plugin \"", s.plugin(),
                                     "\": ", absl::StrJoin(s.reasons(), ", ")));
}
Failure FilterError(const pb::Status& s) {
  return Failure::Error(
      absl::StrCat("running \"", s.plugin(),
                   "\" filter plugin: ", absl::StrJoin(s.reasons(), ", ")));
}

// The scorer's plan for a pod template (pb::Profile::plans).
absl::StatusOr<pb::PlanResponse> AskPlan(const ProfileInfo& profile,
                                         const pb::Pod& pod,
                                         scorer_client::Scorer& scorer) {
  pb::PlanRequest req;
  req.set_profile(profile.scheduler_name);
  *req.mutable_pod() = pod;
  req.set_config_hash(profile.config_hash);
  return scorer.Plan(req);
}

}  // namespace

std::string TemplateKey(const ProfileInfo& profile, const pb::Pod& pod) {
  pb::Pod anonymous = pod;
  anonymous.clear_name();
  anonymous.clear_uid();
  std::string key =
      absl::StrCat(profile.scheduler_name, "/", profile.config_hash, "/");
  model::AppendDeterministic(anonymous, &key);
  return key;
}

std::string RequestHead(const objects::PodInfo& pod, const ProfileInfo& profile,
                        const CyclePlan& plan) {
  pb::EvaluateRequest h;
  h.set_profile(pod.scheduler_name);
  *h.mutable_pod() = plan.pod;
  h.set_detail(pb::DETAIL_TOTALS);
  h.set_config_hash(profile.config_hash);
  if (plan.prepared != nullptr) *h.mutable_cluster() = plan.prepared->cluster;
  h.set_explain_top(plan.explain_top);
  h.set_keep_session(plan.keep_session);
  return h.SerializeAsString();
}

std::string EvaluateOverrides(bool skip_normalize, bool filter_only) {
  pb::EvaluateRequest o;
  if (skip_normalize) o.set_skip_normalize(true);
  if (filter_only) o.set_filter_only(true);
  return o.SerializeAsString();
}

EvaluateRequests::EvaluateRequests(const CycleInput& in, const CyclePlan& plan)
    : in_(in), plan_(plan), head_(RequestHead(*in.pod, *in.profile, plan)) {}

size_t EvaluateRequests::Window(absl::string_view overrides, size_t first,
                                size_t count, std::string* out,
                                std::vector<std::string>* names,
                                std::optional<cache::NodeForm> form,
                                int replica) const {
  *out = head_;
  out->append(overrides.data(), overrides.size());
  return in_.cache->AppendCandidates(
      *in_.pod, in_.profile->label_count_keys, first, count, plan_.node_labels,
      pb::EvaluateRequest::kNodesFieldNumber, out, names, plan_.prepared.get(),
      form.value_or(plan_.node_form), replica);
}

size_t EvaluateRequests::Named(absl::string_view overrides,
                               const std::vector<std::string>& nodes,
                               std::string* out,
                               std::vector<std::string>* names,
                               std::optional<cache::NodeForm> form,
                               const std::vector<bool>* whole,
                               int replica) const {
  *out = head_;
  out->append(overrides.data(), overrides.size());
  return in_.cache->AppendNamed(
      *in_.pod, in_.profile->label_count_keys, nodes, plan_.node_labels,
      pb::EvaluateRequest::kNodesFieldNumber, out, names, plan_.prepared.get(),
      form.value_or(plan_.node_form), whole, replica);
}

namespace {

// The nodes an answer says the replica lacks, by position.
std::vector<bool> MissingOf(const pb::EvaluateResponse& resp) {
  std::vector<bool> whole;
  for (int32_t m : resp.missing_nodes()) {
    if (m < 0) continue;
    const auto at = static_cast<size_t>(m);
    if (at >= whole.size()) whole.resize(at + 1, false);
    whole[at] = true;
  }
  return whole;
}

}  // namespace

std::vector<absl::StatusOr<pb::EvaluateResponse*>> EvaluateResolving(
    scorer_client::Scorer& scorer, const std::vector<std::string>& requests,
    const Rebuild& rebuild, google::protobuf::Arena* arena,
    const std::vector<uint64_t>& pins) {
  // A request sent again goes where it went (the replica that answered
  // missing_nodes, unless it is down).
  auto send = [&](const std::vector<std::string>& r,
                  const std::vector<uint64_t>& p) {
    return p.empty() ? scorer.EvaluateAll(r, arena)
                     : scorer.EvaluatePinned(p, r, arena);
  };
  std::vector<absl::StatusOr<pb::EvaluateResponse*>> results =
      send(requests, pins);
  // The missing nodes whole; then, should another replica answer and lack
  // others, every node whole.
  for (int round = 0; round < 2; ++round) {
    std::vector<size_t> again;
    std::vector<std::string> resend;
    std::vector<uint64_t> resend_pins;
    for (size_t i = 0; i < results.size(); ++i) {
      if (!results[i].ok() || (*results[i])->missing_nodes().empty()) continue;
      const std::vector<bool> missing = MissingOf(**results[i]);
      std::string req;
      if (!rebuild(i, round == 0 ? &missing : nullptr, &req)) {
        results[i] = absl::AbortedError(
            "the nodes changed while a scorer replica was sent them whole; "
            "the pod is tried again");
        continue;
      }
      again.push_back(i);
      resend.push_back(std::move(req));
      if (!pins.empty()) resend_pins.push_back(pins[i]);
    }
    if (again.empty()) return results;
    std::vector<absl::StatusOr<pb::EvaluateResponse*>> answers =
        send(resend, resend_pins);
    for (size_t k = 0; k < again.size(); ++k)
      results[again[k]] = std::move(answers[k]);
  }
  for (auto& r : results) {
    if (r.ok() && !(*r)->missing_nodes().empty()) {
      r = absl::InternalError(
          "scorer error: missing_nodes for nodes sent whole");
    }
  }
  return results;
}

absl::StatusOr<pb::PlanResponse> PlanCache::Get(const ProfileInfo& profile,
                                                const std::string& key,
                                                const pb::Pod& pod,
                                                scorer_client::Scorer& scorer) {
  {
    absl::MutexLock lock(&mu_);
    if (auto it = plans_.find(key); it != plans_.end()) return it->second;
  }
  KSCORE_ASSIGN_OR_RETURN(pb::PlanResponse plan, AskPlan(profile, pod, scorer));
  absl::MutexLock lock(&mu_);
  if (plans_.size() >= capacity_) plans_.clear();  // templates churned
  plans_.emplace(key, plan);
  return plan;
}

size_t PlanCache::size() const {
  absl::MutexLock lock(&mu_);
  return plans_.size();
}

absl::StatusOr<CyclePlan> PrepareCycle(const CycleInput& in,
                                       scorer_client::Scorer& scorer) {
  CyclePlan out;
  out.pod = in.cache->PodFor(*in.pod, in.profile->pod_data);
  out.template_key = TemplateKey(*in.profile, out.pod);
  out.node_labels = in.profile->NeedsNodeLabels(out.pod);
  out.explain_top = in.explain_top;
  if (in.profile->content_keys) out.node_form = cache::NodeForm::kKey;
  if (!in.profile->plans) return out;
  KSCORE_ASSIGN_OR_RETURN(
      out.plan,
      in.plans != nullptr
          ? in.plans->Get(*in.profile, out.template_key, out.pod, scorer)
          : AskPlan(*in.profile, out.pod, scorer));
  out.prepared = in.cache->Prepare(out.pod, out.plan);
  out.node_labels = out.node_labels || out.plan.node_labels();
  return out;
}

size_t NumFeasibleNodesToFind(int32_t percentage, size_t all_nodes) {
  constexpr size_t kMinFeasibleNodesToFind = 100;
  constexpr int32_t kMinFeasibleNodesPercentageToFind = 5;
  if (all_nodes < kMinFeasibleNodesToFind) return all_nodes;
  int32_t pct = percentage;
  if (pct == 0) {
    pct = 50 - static_cast<int32_t>(all_nodes / 125);
    if (pct < kMinFeasibleNodesPercentageToFind)
      pct = kMinFeasibleNodesPercentageToFind;
  }
  size_t n = all_nodes * static_cast<size_t>(pct) / 100;
  if (n < kMinFeasibleNodesToFind) return kMinFeasibleNodesToFind;
  return n;
}

Window PlanWindow(int32_t percentage, size_t all_nodes, size_t start) {
  if (all_nodes == 0) return {};
  return {all_nodes, NumFeasibleNodesToFind(percentage, all_nodes),
          start % all_nodes};
}

Failure ScorerFailure(const absl::Status& s) {
  const scorer_client::CallOutcome outcome =
      scorer_client::ClassifyCall(s.code());
  if (scorer_client::TransportFailure(outcome)) {
    Failure f =
        Failure::Error(absl::StrCat("scorer unavailable: ", s.message()));
    // No answer at all (no connection, or it broke): the pod waits for the
    // scorer to answer again, not for its backoff (SchedulingQueue's
    // RequeueUnreachable). A timeout may be a slow scorer: it backs off.
    f.unreachable = outcome == scorer_client::CallOutcome::kUnreachable;
    return f;
  }
  Failure f = Failure::Error(std::string(s.message()));
  f.stale_profiles = absl::IsFailedPrecondition(s);
  return f;
}

int32_t KindIndex(const pb::Status& status,
                  std::vector<CandidateVerdicts::Kind>& kinds) {
  CandidateVerdicts::Kind k{status.code(),
                            status.plugin(),
                            {status.reasons().begin(), status.reasons().end()}};
  auto it = std::find(kinds.begin(), kinds.end(), k);
  if (it != kinds.end()) return static_cast<int32_t>(it - kinds.begin());
  kinds.push_back(std::move(k));
  return static_cast<int32_t>(kinds.size() - 1);
}

std::optional<Failure> CollectResponse(const pb::EvaluateResponse& resp,
                                       size_t base, size_t end, bool single,
                                       CandidateVerdicts& ev) {
  if (resp.status().code() == pb::CODE_ERROR) {
    return PreFilterError(resp.status());
  }
  ev.unschedulable_plugins.insert(resp.unschedulable_plugins().begin(),
                                  resp.unschedulable_plugins().end());
  if (resp.status().code() != pb::CODE_SUCCESS) {
    ev.pre_filter_code = resp.status().code();
    ev.fit_error.SetPreFilterMessage(
        absl::StrJoin(resp.status().reasons(), ", "));
    return Failure::Unschedulable(
        ev.fit_error.Message(),
        {ev.unschedulable_plugins.begin(), ev.unschedulable_plugins.end()});
  }
  if (ev.plugins.empty() && !resp.plugins().empty()) {
    ev.plugins.assign(resp.plugins().begin(), resp.plugins().end());
    ev.weights.assign(resp.weights().begin(), resp.weights().end());
  }
  if (!resp.replica().empty() &&
      std::find(ev.replicas.begin(), ev.replicas.end(), resp.replica()) ==
          ev.replicas.end()) {
    ev.replicas.push_back(resp.replica());
  }
  if (ev.cycle_state.empty()) ev.cycle_state = resp.cycle_state();
  const size_t before = ev.feasible.size();
  size_t next = base;
  if (ev.keep_kinds) ev.kind_of.resize(end, -1);
  for (const pb::RejectedNode& r : resp.rejected()) {
    const size_t at = base + static_cast<size_t>(r.index());
    if (r.index() < 0 || at < next || at >= end) {
      return Failure::Error(absl::StrCat("scorer error: rejected node index ",
                                         r.index(), " out of order or range"));
    }
    // Upstream: a Filter plugin's Error aborts the cycle, it does not make
    // the node unschedulable.
    if (r.status().code() == pb::CODE_ERROR) {
      return FilterError(r.status());
    }
    for (; next < at; ++next) ev.feasible.push_back(next);
    next = at + 1;
    if (r.status().code() == pb::CODE_UNSCHEDULABLE) ev.potential.push_back(at);
    for (const std::string& why : r.status().reasons()) {
      ev.fit_error.AddReason(why);
    }
    if (ev.keep_rejections) {
      ev.rejections.push_back({ev.names[at], r.status().plugin(),
                               absl::StrJoin(r.status().reasons(), ", ")});
    }
    if (ev.keep_kinds) ev.kind_of[at] = KindIndex(r.status(), ev.kinds);
  }
  for (; next < end; ++next) ev.feasible.push_back(next);
  const size_t got = ev.feasible.size() - before;
  if (static_cast<size_t>(resp.raw_size()) != got * ev.plugins.size() ||
      (single && static_cast<size_t>(resp.totals_size()) != got)) {
    return Failure::Error(
        absl::StrCat("scorer error: ", resp.raw_size(), " raw scores and ",
                     resp.totals_size(), " totals for ", got,
                     " feasible nodes and ", ev.plugins.size(), " plugins"));
  }
  ev.raw.insert(ev.raw.end(), resp.raw().begin(), resp.raw().end());
  if (single) ev.totals.assign(resp.totals().begin(), resp.totals().end());
  if (single) {
    for (const pb::NodeScore& ns : resp.scores()) {
      const size_t at = base + static_cast<size_t>(ns.index());
      if (ns.index() < 0 || at >= end) continue;  // not ours to explain
      ev.explained.push_back(
          {at,
           ns.total(),
           {ns.raw().begin(), ns.raw().end()},
           {ns.normalized().begin(), ns.normalized().end()}});
    }
  }
  return std::nullopt;
}

std::optional<Failure> EvaluateBatches(const CycleInput& in, const Window& w,
                                       const CyclePlan& plan,
                                       scorer_client::Scorer& scorer,
                                       CandidateVerdicts& ev) {
  const size_t batch = std::max<size_t>(1, in.batch_size);
  const EvaluateRequests build(in, plan);
  const std::string skip_normalize =
      EvaluateOverrides(true, plan.plan.score_needs_all_feasible());
  while (ev.processed < w.all_nodes && ev.feasible.size() < w.to_find) {
    // As many nodes as feasible ones are still to find (kube-scheduler's
    // window), in batches of at most `batch`.
    const size_t want =
        std::min(w.all_nodes - ev.processed, w.to_find - ev.feasible.size());
    // Normalised in the call only when it is the cycle's only call: the
    // first, one batch, and enough nodes that no second round is possible
    // unless some are rejected (then Normalize runs over the raw scores).
    const bool single = ev.calls == 0 && want <= batch;
    if (!single) ev.filtered_only = plan.plan.score_needs_all_feasible();
    std::vector<std::string> requests;
    std::vector<uint64_t> pins;  // batch k to replica k: it keeps its nodes
    std::vector<size_t> bases;   // index in ev.names of each request's first
    for (size_t off = 0; off < want; off += batch) {
      ++ev.calls;
      // The call that keeps a session goes to the replica that will hold it.
      pins.push_back(single && plan.keep_session != 0 ? plan.keep_session
                                                      : off / batch);
      bases.push_back(ev.names.size());
      build.Window(single ? "" : skip_normalize, w.first + ev.processed + off,
                   std::min(batch, want - off), &requests.emplace_back(),
                   &ev.names, std::nullopt, scorer.ReplicaOf(pins.back()));
    }
    ev.processed += want;
    google::protobuf::Arena arena;
    // Built again with every node whole for a replica that lacks some.
    auto rebuild = [&](size_t i, const std::vector<bool>* whole,
                       std::string* req) {
      const size_t end = i + 1 < bases.size() ? bases[i + 1] : ev.names.size();
      const std::vector<std::string> sent(
          ev.names.begin() + static_cast<std::ptrdiff_t>(bases[i]),
          ev.names.begin() + static_cast<std::ptrdiff_t>(end));
      std::vector<std::string> names;
      build.Named(single ? "" : skip_normalize, sent, req, &names,
                  WholeForm(whole), whole, scorer.ReplicaOf(pins[i]));
      return names == sent;
    };
    std::vector<absl::StatusOr<pb::EvaluateResponse*>> results =
        EvaluateResolving(scorer, requests, rebuild, &arena, pins);
    for (size_t i = 0; i < results.size(); ++i) {
      if (!results[i].ok()) return ScorerFailure(results[i].status());
      const size_t end = i + 1 < bases.size() ? bases[i + 1] : ev.names.size();
      if (std::optional<Failure> f =
              CollectResponse(**results[i], bases[i], end, single, ev)) {
        return f;
      }
    }
  }
  return std::nullopt;
}

std::optional<Failure> FinishWithAllFeasible(const CycleInput& in,
                                             const CyclePlan& plan,
                                             scorer_client::Scorer& scorer,
                                             CandidateVerdicts& ev) {
  if (!ev.filtered_only || ev.feasible.empty()) return std::nullopt;
  std::vector<std::string> feasible;
  feasible.reserve(ev.feasible.size());
  for (size_t i : ev.feasible) feasible.push_back(ev.names[i]);
  std::string req;
  std::vector<std::string> names;
  const EvaluateRequests build(in, plan);
  build.Named("", feasible, &req, &names);
  ++ev.calls;
  google::protobuf::Arena arena;
  std::vector<absl::StatusOr<pb::EvaluateResponse*>> results =
      EvaluateResolving(
          scorer, {req},
          [&](size_t, const std::vector<bool>* whole, std::string* again) {
            std::vector<std::string> named;
            build.Named("", feasible, again, &named, WholeForm(whole), whole);
            return named == names;
          },
          &arena);
  if (!results.front().ok()) return ScorerFailure(results.front().status());
  // From here the cycle is this call's: the nodes still feasible, their
  // scores and totals. Nodes it rejects (the cluster moved meanwhile) add
  // their reasons to the ones already counted.
  for (size_t i : ev.potential) ev.potential_before.push_back(ev.names[i]);
  ev.potential.clear();
  ev.names = std::move(names);
  ev.feasible.clear();
  ev.plugins.clear();
  ev.raw.clear();
  ev.totals.clear();
  ev.cycle_state.clear();
  ev.explained.clear();
  ev.filtered_only = false;
  return CollectResponse(**results.front(), 0, ev.names.size(), true, ev);
}

std::optional<Failure> Normalize(const CycleInput& in, const CyclePlan& plan,
                                 scorer_client::Scorer& scorer,
                                 CandidateVerdicts& ev) {
  if (ev.totals.size() == ev.feasible.size()) return std::nullopt;
  if (ev.plugins.empty()) {  // no score plugin ran: every node totals 0
    ev.totals.assign(ev.feasible.size(), 0);
    return std::nullopt;
  }
  pb::NormalizeScoreRequest req;
  req.set_profile(in.pod->scheduler_name);
  *req.mutable_pod() = plan.pod;
  if (plan.prepared != nullptr) *req.mutable_cluster() = plan.prepared->cluster;
  *req.mutable_cycle_state() = ev.cycle_state;
  req.set_config_hash(in.profile->config_hash);
  req.set_explain_top(in.explain_top);
  req.set_keep_session(plan.keep_session);
  for (const std::string& p : ev.plugins) req.add_plugins(p);
  req.mutable_raw()->Add(ev.raw.begin(), ev.raw.end());
  absl::StatusOr<pb::NormalizeScoreResponse> norm =
      plan.keep_session != 0
          ? scorer.NormalizeScorePinned(plan.keep_session, req)
          : scorer.NormalizeScore(req);
  if (!norm.ok()) return ScorerFailure(norm.status());
  if (static_cast<size_t>(norm->totals_size()) != ev.feasible.size()) {
    return Failure::Error(absl::StrCat("scorer error: NormalizeScore returned ",
                                       norm->totals_size(), " totals for ",
                                       ev.feasible.size(), " nodes"));
  }
  ev.totals.assign(norm->totals().begin(), norm->totals().end());
  // The breakdown of a single call normalised its batch alone: this one is
  // the cycle's.
  ev.explained.clear();
  for (const pb::NodeScore& ns : norm->scores()) {
    const auto at = static_cast<size_t>(ns.index());
    if (ns.index() < 0 || at >= ev.feasible.size()) continue;
    ev.explained.push_back({ev.feasible[at],
                            ns.total(),
                            {ns.raw().begin(), ns.raw().end()},
                            {ns.normalized().begin(), ns.normalized().end()}});
  }
  if (!norm->replica().empty() &&
      std::find(ev.replicas.begin(), ev.replicas.end(), norm->replica()) ==
          ev.replicas.end()) {
    ev.replicas.push_back(norm->replica());
  }
  return std::nullopt;
}

size_t SelectHost(absl::Span<const int64_t> totals, std::mt19937_64& rng) {
  // Reservoir sampling over the ties of the best total so far.
  size_t best = 0, ties = 1;
  for (size_t i = 1; i < totals.size(); ++i) {
    if (totals[i] > totals[best]) {
      best = i;
      ties = 1;
    } else if (totals[i] == totals[best] &&
               std::uniform_int_distribution<size_t>(0, ties++)(rng) == 0) {
      best = i;
    }
  }
  return best;
}

std::string ExplainChoice(const CandidateVerdicts& ev) {
  std::vector<size_t> order(ev.feasible.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  const auto top =
      static_cast<std::ptrdiff_t>(std::min<size_t>(3, order.size()));
  std::partial_sort(
      order.begin(), order.begin() + top, order.end(),
      [&](size_t a, size_t b) { return ev.totals[a] > ev.totals[b]; });
  const size_t k_plugins = ev.plugins.size();
  std::string why;
  for (std::ptrdiff_t k = 0; k < top; ++k) {
    const size_t i = order[k];
    std::vector<std::string> parts;
    for (size_t p = 0; p < k_plugins; ++p) {
      parts.push_back(
          absl::StrCat(ev.plugins[p], "=", ev.raw[i * k_plugins + p]));
    }
    absl::StrAppend(&why, k ? "; " : "", ev.names[ev.feasible[i]],
                    " total=", ev.totals[i], " (raw ",
                    absl::StrJoin(parts, " "), ")");
  }
  return why;
}

absl::StatusOr<const pb::EvaluateResponse*> FilterNamed(
    const CycleInput& in, const CyclePlan& plan,
    const std::vector<std::string>& names, scorer_client::Scorer& scorer,
    google::protobuf::Arena* arena) {
  const EvaluateRequests build(in, plan);
  const std::string filter_only = EvaluateOverrides(false, true);
  std::string req;
  std::vector<std::string> sent;
  build.Named(filter_only, names, &req, &sent);
  if (sent != names) {
    return absl::NotFoundError("a node is gone from the snapshot");
  }
  std::vector<absl::StatusOr<pb::EvaluateResponse*>> results =
      EvaluateResolving(
          scorer, {req},
          [&](size_t, const std::vector<bool>* whole, std::string* again) {
            std::vector<std::string> named;
            build.Named(filter_only, names, again, &named, WholeForm(whole),
                        whole);
            return named == names;
          },
          arena);
  if (!results.front().ok()) return results.front().status();
  return *results.front();
}

bool EvaluateNominatedNode(const CycleInput& in, const CyclePlan& plan,
                           const std::string& node,
                           scorer_client::Scorer& scorer) {
  google::protobuf::Arena arena;
  absl::StatusOr<const pb::EvaluateResponse*> resp =
      FilterNamed(in, plan, {node}, scorer, &arena);
  if (absl::IsNotFound(resp.status())) return false;
  if (!resp.ok()) {
    spdlog::warn("evaluating pod {}'s nominated node {}: {}", in.pod->key, node,
                 std::string(resp.status().message()));
    return false;
  }
  return (*resp)->status().code() == pb::CODE_SUCCESS &&
         (*resp)->rejected().empty();
}

bool NeedsVolumeDecisions(const pb::Pod& pod) {
  for (const pb::ClaimState& c : pod.volumes().claims()) {
    if (c.volume_name().empty() || !c.bind_completed()) return true;
  }
  return false;
}

absl::StatusOr<pb::NodeVolumes> AskVolumeDecisions(
    const CycleInput& in, const CyclePlan& cycle, const std::string& node,
    scorer_client::Scorer& scorer) {
  CyclePlan plan = cycle;
  plan.keep_session = 0;  // a one-node cycle keeps no session
  pb::EvaluateRequest o;
  o.set_skip_normalize(true);
  o.set_volume_decisions(true);
  const std::string overrides = o.SerializeAsString();
  const EvaluateRequests build(in, plan);
  std::string req;
  std::vector<std::string> names;
  if (build.Named(overrides, {node}, &req, &names) == 0)
    return absl::AbortedError(absl::StrCat("node ", node, " is gone"));
  google::protobuf::Arena arena;
  std::vector<absl::StatusOr<pb::EvaluateResponse*>> results =
      EvaluateResolving(
          scorer, {req},
          [&](size_t, const std::vector<bool>* whole, std::string* again) {
            std::vector<std::string> named;
            build.Named(overrides, {node}, again, &named, WholeForm(whole),
                        whole);
            return named == names;
          },
          &arena);
  if (!results.front().ok()) return results.front().status();
  const pb::EvaluateResponse& resp = **results.front();
  if (resp.status().code() != pb::CODE_SUCCESS || !resp.rejected().empty()) {
    return absl::AbortedError(absl::StrCat(
        "node ", node, " no longer fits the pod's volumes; it is tried again"));
  }
  for (const pb::NodeVolumes& v : resp.node_volumes()) {
    if (v.node_name() == node) return v;
  }
  pb::NodeVolumes none;
  none.set_node_name(node);
  return none;
}

namespace {

// schedulePod from the plan on: the nominated node, a batched cycle, or a
// whole one, and PostFilter for a pod no node took.
CycleResult ChooseNode(const CycleInput& in, CyclePlan& plan_ref,
                       const Window& w, scorer_client::Scorer& scorer,
                       std::optional<CandidateVerdicts>& verdicts);

// Upstream's schedulingCycle up to the assume: schedulePod, PostFilter for
// a pod no node took, and for a pod with claims to bind VolumeBinding's
// decisions on the chosen node (Reserve's input). `verdicts` holds what the
// scorer said of the candidates once the cycle gets that far.
CycleResult SchedulingCycle(const CycleInput& in, scorer_client::Scorer& scorer,
                            std::optional<CandidateVerdicts>& verdicts) {
  const objects::PodInfo& pod = *in.pod;
  // A quantity the shim could not read (malformed, negative) leaves the pod
  // pending with a message its owner can act on: placing it by the other
  // quantities would be a guess, and the scorer would refuse a negative one.
  if (!pod.invalid.empty()) {
    return {.failure = Failure::Unschedulable(
                absl::StrCat("invalid pod: ", pod.invalid))};
  }
  const Window w = PlanWindow(in.profile->percentage_of_nodes_to_score,
                              in.cache->NodeCount(), in.start);
  if (w.all_nodes == 0) {  // upstream's ErrNoNodesAvailable, as its event says
    return {.failure =
                Failure::Unschedulable("no nodes available to schedule pods")};
  }
  absl::StatusOr<CyclePlan> plan = PrepareCycle(in, scorer);
  if (!plan.ok()) return {.failure = ScorerFailure(plan.status())};
  CycleResult result = ChooseNode(in, *plan, w, scorer, verdicts);
  if (!result.ok() || !NeedsVolumeDecisions(plan->pod)) return result;
  absl::StatusOr<pb::NodeVolumes> volumes =
      AskVolumeDecisions(in, *plan, result.node, scorer);
  if (!volumes.ok()) {
    result.failure =
        absl::IsAborted(volumes.status())
            ? Failure::Error(std::string(volumes.status().message()))
            : ScorerFailure(volumes.status());
    return result;
  }
  result.volumes = *std::move(volumes);
  return result;
}

// The candidates' verdicts into `ev` (and the next start into `result`):
// when no node fit the template's last cycle, from its RejectedNodes and
// the nodes changed since while none fits still; else the whole cycle's
// calls, remembered when no node fits. The failure, if any. A batchable
// pod's (a session `key`) whole cycle keeps a session.
std::optional<Failure> EvaluateCandidates(const CycleInput& in, const Window& w,
                                          CyclePlan& plan,
                                          const std::string& key, uint64_t seq,
                                          scorer_client::Scorer& scorer,
                                          CandidateVerdicts& ev,
                                          CycleResult& result) {
  result.reused_rejections = RunRejected(in, w, plan, seq, scorer, ev);
  std::optional<Failure> f;
  if (!result.reused_rejections) {
    if (!key.empty()) plan.keep_session = in.batches->NewId();
    ev.keep_kinds = RemembersRejections(in, plan);
    f = EvaluateBatches(in, w, plan, scorer, ev);
  }
  if (!f.has_value()) {
    result.next_start = (w.first + ev.processed) % w.all_nodes;
    f = FinishWithAllFeasible(in, plan, scorer, ev);
  }
  if (!f.has_value() && ev.feasible.empty()) {
    if (!result.reused_rejections) RememberRejected(in, plan, seq, ev);
    f = Failure::Unschedulable(
        ev.fit_error.Message(),
        {ev.unschedulable_plugins.begin(), ev.unschedulable_plugins.end()});
  }
  return f;
}

CycleResult ChooseNode(const CycleInput& in, CyclePlan& plan_ref,
                       const Window& w, scorer_client::Scorer& scorer,
                       std::optional<CandidateVerdicts>& verdicts) {
  const objects::PodInfo& pod = *in.pod;
  CyclePlan* plan = &plan_ref;
  // A preemption nominated a node for this pod: it is likely the only one
  // with room, so it is tried first, alone.
  if (std::string nominated = in.cache->NominatedNode(pod.key);
      !nominated.empty() &&
      EvaluateNominatedNode(in, *plan, nominated, scorer)) {
    return {.node = std::move(nominated)};
  }
  // Batching: the cache's changes are read from here on.
  const uint64_t seq = in.cache->ChangeSeq();
  std::string key;
  if (Batchable(in, *plan)) {
    key = SessionFamily(*in.profile, *plan);
    if (std::optional<CycleResult> r =
            RunBatched(in, w, *plan, key, seq, scorer)) {
      return *std::move(r);
    }
  }
  CandidateVerdicts& ev = verdicts.emplace(w.all_nodes);
  ev.keep_rejections = in.explain_top != 0 && in.explain_rejections;
  CycleResult result;
  std::optional<Failure> f =
      EvaluateCandidates(in, w, *plan, key, seq, scorer, ev, result);
  if (f.has_value()) {
    result.failure = std::move(f);
    if (result.failure->kind == Failure::Kind::kUnschedulable &&
        in.profile->post_filter) {
      PostFilter(in, *plan, ev, scorer, result);
    }
    return result;
  }
  if (std::optional<Failure> f = Normalize(in, *plan, scorer, ev)) {
    result.failure = std::move(f);
    return result;
  }
  const size_t best = SelectHost(ev.totals, *in.rng);
  result.node = ev.names[ev.feasible[best]];
  if (!key.empty()) RememberSession(in, *plan, key, seq, ev);
  if (spdlog::should_log(spdlog::level::debug)) {
    spdlog::debug("pod {} -> node {} among {} feasible of {} nodes; top: {}",
                  pod.key, result.node, ev.feasible.size(), w.all_nodes,
                  ExplainChoice(ev));
  }
  return result;
}

// The feasible node `f`'s raw scores (ev.raw is node after node).
std::vector<int64_t> RawOf(const CandidateVerdicts& ev, size_t f) {
  const size_t k_plugins = ev.plugins.size();
  if (ev.raw.size() < (f + 1) * k_plugins) return {};
  return std::vector<int64_t>(
      ev.raw.begin() + static_cast<std::ptrdiff_t>(f * k_plugins),
      ev.raw.begin() + static_cast<std::ptrdiff_t>((f + 1) * k_plugins));
}

// The best nodes: the scorer's breakdown, or from a scorer that does not
// explain, the `explain_top` best totals with their raw scores.
std::vector<Explanation::NodeScore> TopNodes(const CandidateVerdicts& ev,
                                             int32_t explain_top) {
  std::vector<Explanation::NodeScore> top;
  if (!ev.explained.empty()) {
    for (const CandidateVerdicts::Explained& x : ev.explained) {
      top.push_back({ev.names[x.node], x.total, x.raw, x.normalized});
    }
    return top;
  }
  if (ev.totals.size() != ev.feasible.size()) return top;
  std::vector<size_t> order(ev.feasible.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  const size_t k =
      explain_top < 0
          ? order.size()
          : std::min<size_t>(order.size(), static_cast<size_t>(explain_top));
  std::partial_sort(
      order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k),
      order.end(), [&](size_t a, size_t b) {
        return ev.totals[a] != ev.totals[b] ? ev.totals[a] > ev.totals[b]
                                            : a < b;
      });
  for (size_t j = 0; j < k; ++j) {
    const size_t f = order[j];
    top.push_back({ev.names[ev.feasible[f]], ev.totals[f], RawOf(ev, f), {}});
  }
  return top;
}

// The chosen node first in `top`: it may tie with better-ranked ones, or
// (more ties than the top shows) be missing, its breakdown then unknown.
void ChosenFirst(const CandidateVerdicts& ev, const std::string& node,
                 std::vector<Explanation::NodeScore>& top) {
  auto it = std::find_if(
      top.begin(), top.end(),
      [&](const Explanation::NodeScore& n) { return n.node == node; });
  if (it != top.end()) {
    std::rotate(top.begin(), it, it + 1);
    return;
  }
  for (size_t f = 0; f < ev.feasible.size(); ++f) {
    if (ev.names[ev.feasible[f]] != node) continue;
    top.insert(
        top.begin(),
        {node, f < ev.totals.size() ? ev.totals[f] : 0, RawOf(ev, f), {}});
    return;
  }
}

}  // namespace

std::shared_ptr<Explanation> PodExplanation(const objects::PodInfo& pod) {
  auto e = std::make_shared<Explanation>();
  e->namespace_ = pod.namespace_;
  e->name = pod.name;
  e->uid = pod.uid;
  e->profile = pod.scheduler_name;
  e->time = absl::Now();
  return e;
}

std::shared_ptr<Explanation> Explain(const CycleInput& in,
                                     const CandidateVerdicts* ev,
                                     const CycleResult& result) {
  std::shared_ptr<Explanation> e = PodExplanation(*in.pod);
  e->all_nodes = ev != nullptr ? ev->all_nodes : in.cache->NodeCount();
  e->node = result.node;
  if (result.failure.has_value()) {
    e->message = result.failure->message;
    e->error = result.failure->kind == Failure::Kind::kError;
  }
  if (result.preemption.has_value()) {
    e->preemption_node = result.preemption->node;
    e->preemption_victims = result.preemption->victims.size();
  }
  if (in.profile != nullptr && in.explain_rejections) {
    e->filter_plugins = in.profile->filter_plugins;
  }
  if (ev == nullptr) {  // the nominated node fit, or the cycle never ran
    e->nominated = !result.node.empty();
    return e;
  }
  e->evaluated = ev->processed;
  e->feasible = ev->feasible.size();
  e->reasons.assign(ev->fit_error.reasons().begin(),
                    ev->fit_error.reasons().end());
  std::sort(
      e->reasons.begin(), e->reasons.end(), [](const auto& a, const auto& b) {
        return a.second != b.second ? a.second > b.second : a.first < b.first;
      });
  e->plugins = ev->plugins;
  e->weights = ev->weights;
  e->replicas = ev->replicas;
  e->rejections = ev->rejections;
  e->top = TopNodes(*ev, in.explain_top);
  if (!ev->totals.empty()) {
    const int64_t best =
        *std::max_element(ev->totals.begin(), ev->totals.end());
    const auto tied = static_cast<size_t>(
        std::count(ev->totals.begin(), ev->totals.end(), best));
    if (tied > 1) e->tied_best = tied;
  }
  if (!result.node.empty()) ChosenFirst(*ev, result.node, e->top);
  return e;
}

CycleResult RunCycle(const CycleInput& in, scorer_client::Scorer& scorer) {
  std::optional<CandidateVerdicts> ev;
  CycleResult result = SchedulingCycle(in, scorer, ev);
  if (in.explain_top != 0 && result.explanation == nullptr) {
    result.explanation = Explain(in, ev.has_value() ? &*ev : nullptr, result);
  }
  return result;
}

}  // namespace kscore::scheduler
