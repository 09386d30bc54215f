#include "shim/scheduler/batching.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/arena.h"
#include "spdlog/spdlog.h"

namespace kscore::scheduler {
namespace {

std::string ClusterBytes(const CyclePlan& plan) {
  return plan.prepared != nullptr ? plan.prepared->cluster.SerializeAsString()
                                  : std::string();
}

// The update request: the cycle's head, the changed nodes, and which slot
// each fills (a node new to the session gets the next one).
std::string UpdateRequest(const CycleInput& in, const CyclePlan& plan,
                          const std::vector<std::string>& changed,
                          BatchSession& s, std::vector<std::string>* names,
                          const std::vector<bool>* whole = nullptr,
                          bool all_whole = false, int replica = -1) {
  std::string req;
  EvaluateRequests(in, plan).Named(
      "", changed, &req, names,
      all_whole ? std::optional(cache::NodeForm::kFullWithKey) : std::nullopt,
      whole, replica);
  pb::EvaluateRequest u;
  pb::SessionUpdate* up = u.mutable_update();
  up->set_session(s.id);
  up->set_generation(s.generation);
  for (const std::string& n : *names) {
    auto [it, added] =
        s.slot_of.emplace(n, static_cast<int32_t>(s.slots.size()));
    if (added) s.slots.push_back(n);
    up->add_slots(it->second);
  }
  req += u.SerializeAsString();
  return req;
}

// What `kubectl kscore explain` shows of a batched cycle: the scorer's
// breakdown of the best slots, named.
std::shared_ptr<Explanation> ExplainBatched(const CycleInput& in,
                                            const Window& w,
                                            const BatchSession& s,
                                            const pb::EvaluateResponse& resp,
                                            size_t evaluated,
                                            const std::string& node) {
  std::shared_ptr<Explanation> e = PodExplanation(*in.pod);
  e->batched = true;
  e->all_nodes = w.all_nodes;
  e->evaluated = evaluated;
  e->feasible = static_cast<size_t>(resp.feasible_slots());
  e->node = node;
  e->plugins.assign(resp.plugins().begin(), resp.plugins().end());
  e->weights.assign(resp.weights().begin(), resp.weights().end());
  if (!resp.replica().empty()) e->replicas.push_back(resp.replica());
  for (const pb::NodeScore& ns : resp.scores()) {
    if (ns.index() < 0 || static_cast<size_t>(ns.index()) >= s.slots.size())
      continue;
    e->top.push_back({s.slots[static_cast<size_t>(ns.index())],
                      ns.total(),
                      {ns.raw().begin(), ns.raw().end()},
                      {ns.normalized().begin(), ns.normalized().end()}});
  }
  auto chosen = std::find_if(
      e->top.begin(), e->top.end(),
      [&](const Explanation::NodeScore& n) { return n.node == node; });
  if (chosen != e->top.end()) {
    std::rotate(e->top.begin(), chosen, chosen + 1);
  } else {
    e->top.insert(e->top.begin(), {node, resp.best_total(), {}, {}});
  }
  if (resp.best_slots_size() > 1)
    e->tied_best = static_cast<size_t>(resp.best_slots_size());
  return e;
}

// The -v=4 "why" of a batched cycle, as ExplainChoice words a whole one: the
// best slots the scorer broke down (with explain_top), else the choice's
// total.
std::string WhyBatched(const BatchSession& s, const pb::EvaluateResponse& resp,
                       const std::string& node) {
  std::string why;
  int shown = 0;
  for (const pb::NodeScore& ns : resp.scores()) {
    if (shown == 3) break;
    if (ns.index() < 0 || static_cast<size_t>(ns.index()) >= s.slots.size())
      continue;
    std::vector<std::string> parts;
    for (int p = 0; p < ns.raw_size() && p < resp.plugins_size(); ++p)
      parts.push_back(absl::StrCat(resp.plugins(p), "=", ns.raw(p)));
    absl::StrAppend(
        &why, shown++ ? "; " : "", s.slots[static_cast<size_t>(ns.index())],
        " total=", ns.total(), " (raw ", absl::StrJoin(parts, " "), ")");
  }
  return why.empty() ? absl::StrCat(node, " total=", resp.best_total()) : why;
}

}  // namespace

Batches::Batches(size_t capacity)
    : capacity_(capacity), ids_(std::random_device{}()) {}

uint64_t Batches::NewId() {
  absl::MutexLock lock(&mu_);
  uint64_t id = 0;
  while (id == 0) id = ids_();  // 0 means none on the wire
  return id;
}

std::optional<BatchSession> Batches::Take(const std::string& key) {
  absl::MutexLock lock(&mu_);
  auto it = std::find_if(lru_.begin(), lru_.end(),
                         [&](const auto& e) { return e.first == key; });
  if (it == lru_.end()) return std::nullopt;
  BatchSession s = std::move(it->second);
  lru_.erase(it);
  return s;
}

void Batches::Put(const std::string& key, BatchSession s) {
  absl::MutexLock lock(&mu_);
  std::erase_if(lru_, [&](const auto& e) { return e.first == key; });
  lru_.emplace_front(key, std::move(s));
  while (lru_.size() > capacity_) lru_.pop_back();
}

bool Batchable(const CycleInput& in, const Window& w, const CyclePlan& plan) {
  if (in.batches == nullptr || !in.profile->batches || in.explain_top < 0 ||
      in.explain_rejections || w.to_find < w.all_nodes) {
    return false;
  }
  if (!plan.plan.queries().empty() || plan.plan.score_needs_all_feasible())
    return false;
  if (plan.prepared != nullptr &&
      (plan.prepared->cluster.answers_size() > 0 ||
       plan.prepared->cluster.existing_terms_size() > 0)) {
    return false;
  }
  return in.cache->NominatedNode(in.pod->key).empty();
}

std::optional<CycleResult> RunBatched(const CycleInput& in, const Window& w,
                                      const CyclePlan& plan,
                                      const std::string& key, uint64_t seq,
                                      scorer_client::Scorer& scorer) {
  std::optional<BatchSession> s = in.batches->Take(key);
  if (!s.has_value()) return std::nullopt;
  std::vector<std::string> changed;
  // Past half the nodes a whole cycle costs about as much.
  if (s->cluster != ClusterBytes(plan) ||
      !in.cache->ChangedSince(s->seq, &changed) ||
      changed.size() > w.all_nodes / 2) {
    return std::nullopt;
  }
  std::vector<std::string> names;
  // The changed nodes go whole: they are new to every replica.
  const int replica = scorer.ReplicaOf(s->id);
  const std::string req =
      UpdateRequest(in, plan, changed, *s, &names, nullptr, true, replica);
  google::protobuf::Arena arena;
  std::vector<absl::StatusOr<pb::EvaluateResponse*>> results =
      EvaluateResolving(
          scorer, {req},
          [&](size_t, const std::vector<bool>* whole, std::string* again) {
            std::vector<std::string> named;
            *again = UpdateRequest(in, plan, changed, *s, &named, whole,
                                   whole == nullptr, replica);
            return named == names;
          },
          &arena, {s->id});
  if (!results.front().ok()) {
    spdlog::debug("pod {}: batched cycle failed ({}), running a whole one",
                  in.pod->key, std::string(results.front().status().message()));
    return std::nullopt;
  }
  const pb::EvaluateResponse& resp = **results.front();
  // No node fits, or PreFilter said no: the whole cycle says why.
  if (resp.session_missing() || resp.status().code() != pb::CODE_SUCCESS ||
      resp.best_slots().empty()) {
    return std::nullopt;
  }
  const int32_t slot =
      resp.best_slots(static_cast<int>(std::uniform_int_distribution<size_t>(
          0, static_cast<size_t>(resp.best_slots_size()) - 1)(*in.rng)));
  if (slot < 0 || static_cast<size_t>(slot) >= s->slots.size()) {
    spdlog::warn("pod {}: the scorer answered slot {} of {}", in.pod->key, slot,
                 s->slots.size());
    return std::nullopt;
  }
  CycleResult r;
  r.node = s->slots[static_cast<size_t>(slot)];
  r.batched = true;
  if (spdlog::should_log(spdlog::level::debug)) {
    spdlog::debug(
        "pod {} -> node {} among {} feasible of {} nodes (batched: {} "
        "evaluated again); top: {}",
        in.pod->key, r.node, resp.feasible_slots(), w.all_nodes, names.size(),
        WhyBatched(*s, resp, r.node));
  }
  if (in.explain_top != 0) {
    r.explanation = ExplainBatched(in, w, *s, resp, names.size(), r.node);
  }
  ++s->generation;
  s->seq = seq;
  in.batches->Put(key, *std::move(s));
  return r;
}

void RememberSession(const CycleInput& in, const CyclePlan& plan,
                     const std::string& key, uint64_t seq,
                     const CandidateVerdicts& ev) {
  // Without a score plugin nothing was normalised, so nothing was kept.
  if (plan.keep_session == 0 || ev.plugins.empty() || ev.feasible.empty())
    return;
  BatchSession s;
  s.id = plan.keep_session;
  s.seq = seq;
  s.cluster = ClusterBytes(plan);
  s.slots.reserve(ev.feasible.size());
  for (size_t i : ev.feasible) {
    s.slot_of.emplace(ev.names[i], static_cast<int32_t>(s.slots.size()));
    s.slots.push_back(ev.names[i]);
  }
  in.batches->Put(key, std::move(s));
}

}  // namespace kscore::scheduler
