#include "shim/scheduler/cycle.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/arena.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "shim/scheduler/preemption.h"
#include "spdlog/spdlog.h"

namespace kscore::scheduler {
namespace {

// Codes of a call that got no answer from the scorer (gRPC's own failures).
bool TransportFailure(absl::StatusCode c) {
  switch (c) {
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kCancelled:
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kAborted:
    case absl::StatusCode::kUnknown:
    case absl::StatusCode::kUnimplemented:
    case absl::StatusCode::kUnauthenticated:
    case absl::StatusCode::kPermissionDenied:
      return true;
    default:
      return false;
  }
}

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

}  // namespace

std::string TemplateKey(const ProfileInfo& profile, const pb::Pod& pod) {
  pb::Pod anonymous = pod;
  anonymous.clear_name();
  anonymous.clear_uid();
  std::string key =
      absl::StrCat(profile.scheduler_name, "/", profile.config_hash, "/");
  google::protobuf::io::StringOutputStream stream(&key);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  anonymous.SerializeToCodedStream(&coded);
  coded.Trim();
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
  return h.SerializeAsString();
}

absl::StatusOr<pb::PlanResponse> PlanCache::Get(const ProfileInfo& profile,
                                                const pb::Pod& pod,
                                                scorer_client::Scorer& scorer) {
  const std::string key = TemplateKey(profile, pod);
  {
    absl::MutexLock lock(&mu_);
    if (auto it = plans_.find(key); it != plans_.end()) return it->second;
  }
  pb::PlanRequest req;
  req.set_profile(profile.scheduler_name);
  *req.mutable_pod() = pod;
  req.set_config_hash(profile.config_hash);
  absl::StatusOr<pb::PlanResponse> plan = scorer.Plan(req);
  if (!plan.ok()) return plan.status();
  absl::MutexLock lock(&mu_);
  if (plans_.size() >= capacity_) plans_.clear();  // templates churned
  plans_.emplace(key, *plan);
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
  out.node_labels = in.profile->NeedsNodeLabels(out.pod);
  out.explain_top = in.explain_top;
  if (!in.profile->plans) return out;
  absl::StatusOr<pb::PlanResponse> plan;
  if (in.plans != nullptr) {
    plan = in.plans->Get(*in.profile, out.pod, scorer);
  } else {
    pb::PlanRequest req;
    req.set_profile(in.profile->scheduler_name);
    *req.mutable_pod() = out.pod;
    req.set_config_hash(in.profile->config_hash);
    plan = scorer.Plan(req);
  }
  if (!plan.ok()) return plan.status();
  out.plan = *std::move(plan);
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
  if (TransportFailure(s.code())) {
    Failure f =
        Failure::Error(absl::StrCat("scorer unavailable: ", s.message()));
    // No answer at all (no connection, or it broke): the pod waits for the
    // scorer to answer again, not for its backoff (SchedulingQueue's
    // RequeueUnreachable). A timeout may be a slow scorer: it backs off.
    f.unreachable = absl::IsUnavailable(s);
    return f;
  }
  Failure f = Failure::Error(std::string(s.message()));
  f.stale_profiles = absl::IsFailedPrecondition(s);
  return f;
}

std::optional<Failure> CollectResponse(const pb::EvaluateResponse& resp,
                                       size_t base, size_t end, bool single,
                                       Evaluation& ev) {
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
                                       Evaluation& ev) {
  const objects::PodInfo& pod = *in.pod;
  const size_t batch = std::max<size_t>(1, in.batch_size);
  const std::string head = RequestHead(pod, *in.profile, plan);
  pb::EvaluateRequest skip;
  skip.set_skip_normalize(true);
  if (plan.plan.score_needs_all_feasible()) skip.set_filter_only(true);
  const std::string skip_normalize = skip.SerializeAsString();
  const cache::ClusterIndex::Prepared* prepared = plan.prepared.get();
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
    std::vector<size_t> bases;  // index in ev.names of each request's first
    for (size_t off = 0; off < want; off += batch) {
      std::string& req = requests.emplace_back(head);
      if (!single) req.append(skip_normalize);
      ++ev.calls;
      bases.push_back(ev.names.size());
      in.cache->AppendCandidates(
          pod, in.profile->label_count_keys, w.first + ev.processed + off,
          std::min(batch, want - off), plan.node_labels,
          pb::EvaluateRequest::kNodesFieldNumber, &req, &ev.names, prepared);
    }
    ev.processed += want;
    google::protobuf::Arena arena;
    std::vector<absl::StatusOr<pb::EvaluateResponse*>> results =
        scorer.EvaluateAll(requests, &arena);
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
                                             Evaluation& ev) {
  if (!ev.filtered_only || ev.feasible.empty()) return std::nullopt;
  std::vector<std::string> feasible;
  feasible.reserve(ev.feasible.size());
  for (size_t i : ev.feasible) feasible.push_back(ev.names[i]);
  std::string req = RequestHead(*in.pod, *in.profile, plan);
  std::vector<std::string> names;
  in.cache->AppendNamed(*in.pod, in.profile->label_count_keys, feasible,
                        plan.node_labels,
                        pb::EvaluateRequest::kNodesFieldNumber, &req, &names,
                        plan.prepared.get());
  ++ev.calls;
  google::protobuf::Arena arena;
  std::vector<absl::StatusOr<pb::EvaluateResponse*>> results =
      scorer.EvaluateAll({req}, &arena);
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
                                 Evaluation& ev) {
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
  for (const std::string& p : ev.plugins) req.add_plugins(p);
  req.mutable_raw()->Add(ev.raw.begin(), ev.raw.end());
  absl::StatusOr<pb::NormalizeScoreResponse> norm = scorer.NormalizeScore(req);
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

std::string ExplainChoice(const Evaluation& ev) {
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

bool EvaluateNominatedNode(const CycleInput& in, const CyclePlan& plan,
                           const std::string& node,
                           scorer_client::Scorer& scorer) {
  std::string req = RequestHead(*in.pod, *in.profile, plan);
  pb::EvaluateRequest filter_only;
  filter_only.set_filter_only(true);
  req.append(filter_only.SerializeAsString());
  std::vector<std::string> names;
  if (in.cache->AppendNamed(*in.pod, in.profile->label_count_keys, {node},
                            plan.node_labels,
                            pb::EvaluateRequest::kNodesFieldNumber, &req,
                            &names, plan.prepared.get()) == 0) {
    return false;  // gone from the snapshot
  }
  google::protobuf::Arena arena;
  std::vector<absl::StatusOr<pb::EvaluateResponse*>> results =
      scorer.EvaluateAll({req}, &arena);
  if (!results.front().ok()) {
    spdlog::warn("evaluating pod {}'s nominated node {}: {}", in.pod->key, node,
                 std::string(results.front().status().message()));
    return false;
  }
  const pb::EvaluateResponse& resp = **results.front();
  return resp.status().code() == pb::CODE_SUCCESS && resp.rejected().empty();
}

namespace {

// RunCycle's work; `ev` holds the evaluation once the cycle gets that far.
CycleResult RunCycleWith(const CycleInput& in, scorer_client::Scorer& scorer,
                         std::optional<Evaluation>& evaluation) {
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
  // A preemption nominated a node for this pod: it is likely the only one
  // with room, so it is tried first, alone.
  if (std::string nominated = in.cache->NominatedNode(pod.key);
      !nominated.empty() &&
      EvaluateNominatedNode(in, *plan, nominated, scorer)) {
    return {.node = std::move(nominated)};
  }
  Evaluation& ev = evaluation.emplace(w.all_nodes);
  ev.keep_rejections = in.explain_top != 0 && in.explain_rejections;
  CycleResult result;
  std::optional<Failure> f = EvaluateBatches(in, w, *plan, scorer, ev);
  if (!f.has_value()) {
    result.next_start = (w.first + ev.processed) % w.all_nodes;
    f = FinishWithAllFeasible(in, *plan, scorer, ev);
  }
  if (!f.has_value() && ev.feasible.empty()) {
    f = Failure::Unschedulable(
        ev.fit_error.Message(),
        {ev.unschedulable_plugins.begin(), ev.unschedulable_plugins.end()});
  }
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
  if (spdlog::should_log(spdlog::level::debug)) {
    spdlog::debug("pod {} -> node {} among {} feasible of {} nodes; top: {}",
                  pod.key, result.node, ev.feasible.size(), w.all_nodes,
                  ExplainChoice(ev));
  }
  return result;
}

}  // namespace

std::shared_ptr<Explanation> Explain(const CycleInput& in, const Evaluation* ev,
                                     const CycleResult& result) {
  auto e = std::make_shared<Explanation>();
  const objects::PodInfo& pod = *in.pod;
  e->namespace_ = pod.namespace_;
  e->name = pod.name;
  e->uid = pod.uid;
  e->profile = pod.scheduler_name;
  e->time = absl::Now();
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
  const size_t k_plugins = ev->plugins.size();
  // The feasible node `f`'s raw scores (ev->raw is node after node).
  auto raw_of = [&](size_t f) {
    if (ev->raw.size() < (f + 1) * k_plugins) return std::vector<int64_t>();
    return std::vector<int64_t>(
        ev->raw.begin() + static_cast<std::ptrdiff_t>(f * k_plugins),
        ev->raw.begin() + static_cast<std::ptrdiff_t>((f + 1) * k_plugins));
  };
  if (!ev->explained.empty()) {
    for (const Evaluation::Explained& x : ev->explained) {
      e->top.push_back({ev->names[x.node], x.total, x.raw, x.normalized});
    }
  } else if (ev->totals.size() == ev->feasible.size()) {
    // A scorer that does not explain: totals and raw scores only.
    std::vector<size_t> order(ev->feasible.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    const size_t k =
        in.explain_top < 0
            ? order.size()
            : std::min<size_t>(order.size(),
                               static_cast<size_t>(in.explain_top));
    std::partial_sort(
        order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k),
        order.end(), [&](size_t a, size_t b) {
          return ev->totals[a] != ev->totals[b] ? ev->totals[a] > ev->totals[b]
                                                : a < b;
        });
    for (size_t j = 0; j < k; ++j) {
      const size_t f = order[j];
      e->top.push_back(
          {ev->names[ev->feasible[f]], ev->totals[f], raw_of(f), {}});
    }
  }
  if (!ev->totals.empty()) {
    const int64_t best =
        *std::max_element(ev->totals.begin(), ev->totals.end());
    const auto tied = static_cast<size_t>(
        std::count(ev->totals.begin(), ev->totals.end(), best));
    if (tied > 1) e->tied_best = tied;
  }
  // The chosen node first: it may tie with better-ranked ones, or (more
  // ties than the top shows) be missing, its breakdown then unknown.
  if (!result.node.empty()) {
    auto it = std::find_if(
        e->top.begin(), e->top.end(),
        [&](const Explanation::NodeScore& n) { return n.node == result.node; });
    if (it != e->top.end()) {
      std::rotate(e->top.begin(), it, it + 1);
    } else {
      for (size_t f = 0; f < ev->feasible.size(); ++f) {
        if (ev->names[ev->feasible[f]] != result.node) continue;
        e->top.insert(e->top.begin(),
                      {result.node,
                       f < ev->totals.size() ? ev->totals[f] : 0,
                       raw_of(f),
                       {}});
        break;
      }
    }
  }
  return e;
}

CycleResult RunCycle(const CycleInput& in, scorer_client::Scorer& scorer) {
  std::optional<Evaluation> ev;
  CycleResult result = RunCycleWith(in, scorer, ev);
  if (in.explain_top != 0) {
    result.explanation = Explain(in, ev.has_value() ? &*ev : nullptr, result);
  }
  return result;
}

}  // namespace kscore::scheduler
