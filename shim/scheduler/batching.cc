#include "shim/scheduler/batching.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/arena.h"
#include "model/session_cluster.h"
#include "spdlog/spdlog.h"

namespace kscore::scheduler {
namespace {

// What of the cycle's cluster data the session's answers depend on.
std::string ClusterBytes(const CyclePlan& plan) {
  std::string bytes;
  if (plan.prepared != nullptr)
    model::AppendSessionCluster(plan.prepared->cluster, &bytes);
  return bytes;
}

// A round of the window walk: the positions whose verdicts it needs, the
// slots of the fitting nodes it passed, and how many positions it passed.
struct WindowWalk {
  std::vector<int32_t> pending;
  std::vector<int32_t> window;
  size_t scanned = 0;
};

// EvaluateBatches' window over the known verdicts: from `first`, until the
// nodes that fit and those still to ask for make `to_find`.
WindowWalk WalkWindow(const BatchSession& s, size_t first, size_t to_find) {
  WindowWalk wk;
  const size_t n = s.verdict.size();
  size_t found = 0;
  while (wk.scanned < n && found + wk.pending.size() < to_find) {
    const size_t at = (first + wk.scanned) % n;
    ++wk.scanned;
    switch (s.verdict[at]) {
      case BatchSession::kFits:
        ++found;
        wk.window.push_back(s.slot_at[at]);
        break;
      case BatchSession::kRejected:
        break;
      case BatchSession::kUnknown:
        wk.pending.push_back(static_cast<int32_t>(at));
        break;
    }
  }
  return wk;
}

// The most windows a call asks answers for ahead, how far ahead it looks,
// and how many answers a session keeps.
constexpr size_t kMaxAhead = 16;
constexpr size_t kHorizon = 48;
constexpr size_t kMaxKeptAhead = 64;

// A window of a later pod: where it starts and its walk.
struct AheadWalk {
  size_t first = 0;
  WindowWalk walk;
};

// The windows of later pods, each from where the one before ends as their
// cycles would walk them over the verdicts known now: those of the pods
// `upcoming` marks (the i-th after this pod is upcoming[i]) and, with
// `beyond`, of every pod after the last `upcoming` knows. None reaches back
// into a window before it, and each finds w.to_find nodes that fit or are
// still to ask for. At most kMaxAhead, none past kHorizon pods.
std::vector<AheadWalk> AheadWalks(const BatchSession& s, const Window& w,
                                  const WindowWalk& wk,
                                  const std::vector<bool>& upcoming,
                                  bool beyond) {
  std::vector<AheadWalk> out;
  const size_t n = s.verdict.size();
  const size_t horizon = beyond ? kHorizon : upcoming.size();
  size_t passed = wk.scanned;
  for (size_t i = 0; i < horizon && out.size() < kMaxAhead; ++i) {
    const size_t first = (w.first + passed) % n;
    WindowWalk next = WalkWindow(s, first, w.to_find);
    passed += next.scanned;
    if (next.window.size() + next.pending.size() < w.to_find || passed > n)
      break;
    if (i >= upcoming.size() || upcoming[i])
      out.push_back({first, std::move(next)});
  }
  return out;
}

// Counts a pod of `template_key` in the session; true from its second:
// pods of a template seen again are likely to come again, so a call asks
// for the windows past those the queue shows too.
bool SeenAgain(BatchSession& s, const std::string& template_key) {
  if (s.seen.size() >= kMaxKeptAhead && !s.seen.contains(template_key))
    s.seen.clear();
  return ++s.seen[template_key] >= 2;
}

// Adds `slots` to `w`: runs of consecutive slots as ranges (a session's
// slots follow the candidate order, so a window is mostly a few runs), the
// others one by one.
void AddSlots(const std::vector<int32_t>& slots, pb::SlotWindow* w) {
  for (size_t i = 0; i < slots.size();) {
    size_t j = i + 1;
    while (j < slots.size() && slots[j] == slots[j - 1] + 1) ++j;
    if (j - i >= 3) {
      w->add_ranges(slots[i]);
      w->add_ranges(static_cast<int32_t>(j - i));
    } else {
      for (size_t k = i; k < j; ++k) w->add_slots(slots[k]);
    }
    i = j;
  }
}

// The update request of one round: the cycle's head, the nodes at
// wk.pending and then at each ahead walk's pending, and which slot each
// fills (a node new to the session gets the next one). A walk that passed
// every position normalises over every slot that fits, else over the
// window's, and asks for the ahead windows.
struct Round {
  const CycleInput& in;
  const CyclePlan& plan;
  BatchSession& s;
  const WindowWalk& wk;
  std::vector<AheadWalk> ahead;
  std::vector<int32_t> positions;  // every node sent, in order
  std::vector<std::string> nodes;  // at `positions`
  bool rebase = false;
  int replica = -1;

  Round(const CycleInput& in, const CyclePlan& plan, BatchSession& s,
        const WindowWalk& wk, std::vector<AheadWalk> ahead, bool rebase,
        int replica)
      : in(in),
        plan(plan),
        s(s),
        wk(wk),
        ahead(std::move(ahead)),
        positions(wk.pending),
        rebase(rebase),
        replica(replica) {
    for (const AheadWalk& a : this->ahead)
      positions.insert(positions.end(), a.walk.pending.begin(),
                       a.walk.pending.end());
    nodes = in.cache->NamesAt(positions);
  }

  // The request, with the nodes `whole` marks (all, with `all_whole`) whole;
  // false when the cache no longer has them all.
  bool Build(std::string* req, const std::vector<bool>* whole, bool all_whole) {
    std::vector<std::string> names;
    EvaluateRequests(in, plan).Named(
        "", nodes, req, &names,
        all_whole ? std::optional(cache::NodeForm::kFullWithKey) : std::nullopt,
        whole, replica);
    if (names != nodes) return false;
    pb::EvaluateRequest u;
    pb::SessionUpdate* up = u.mutable_update();
    up->set_session(s.id);
    up->set_generation(s.generation);
    up->set_rebase(rebase);
    const bool windowed = wk.scanned < s.verdict.size();
    up->set_windowed(windowed);
    if (windowed) up->mutable_window()->Add(wk.window.begin(), wk.window.end());
    for (size_t i = 0; i < wk.pending.size(); ++i) {
      const int32_t slot = SlotOf(i, up);
      if (windowed) up->add_window(slot);
    }
    size_t i = wk.pending.size();
    for (const AheadWalk& a : ahead) {
      pb::SlotWindow* sw = up->add_ahead();
      AddSlots(a.walk.window, sw);
      for (size_t j = 0; j < a.walk.pending.size(); ++j, ++i)
        sw->add_slots(SlotOf(i, up));
    }
    *req += u.SerializeAsString();
    return true;
  }

 private:
  // The slot of the i-th node sent, into the update.
  int32_t SlotOf(size_t i, pb::SessionUpdate* up) {
    int32_t& slot = s.slot_at[static_cast<size_t>(positions[i])];
    if (slot < 0) {
      slot = static_cast<int32_t>(s.slots.size());
      s.slots.push_back(nodes[i]);
    }
    up->add_slots(slot);
    return slot;
  }
};

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

namespace {

template <typename T>
std::optional<T> TakeFrom(std::list<std::pair<std::string, T>>& lru,
                          const std::string& key) {
  auto it = std::find_if(lru.begin(), lru.end(),
                         [&](const auto& e) { return e.first == key; });
  if (it == lru.end()) return std::nullopt;
  T out = std::move(it->second);
  lru.erase(it);
  return out;
}

template <typename T>
void PutInto(std::list<std::pair<std::string, T>>& lru, const std::string& key,
             T value, size_t capacity) {
  std::erase_if(lru, [&](const auto& e) { return e.first == key; });
  lru.emplace_front(key, std::move(value));
  while (lru.size() > capacity) lru.pop_back();
}

}  // namespace

std::optional<BatchSession> Batches::Take(const std::string& key) {
  absl::MutexLock lock(&mu_);
  return TakeFrom(lru_, key);
}

void Batches::Put(const std::string& key, BatchSession s) {
  absl::MutexLock lock(&mu_);
  PutInto(lru_, key, std::move(s), capacity_);
}

std::optional<RejectedNodes> Batches::TakeRejected(const std::string& key) {
  absl::MutexLock lock(&mu_);
  return TakeFrom(rejected_, key);
}

void Batches::PutRejected(const std::string& key, RejectedNodes r) {
  absl::MutexLock lock(&mu_);
  PutInto(rejected_, key, std::move(r), capacity_);
}

std::string FamilyKey(const ProfileInfo& profile, const pb::Pod& pod) {
  pb::Pod family = pod;
  for (auto& [k, v] : *family.mutable_labels()) v.clear();
  return TemplateKey(profile, family);
}

namespace {

// The pod mounts no volume the storage plugins read.
bool WithoutVolumes(const pb::Pod& pod) {
  return pod.volume_claims().empty() && pod.volumes().claims().empty() &&
         pod.volumes().attachable().empty() && pod.inline_disks().empty() &&
         pod.in_tree_volumes().empty();
}

// The cycle reads counts of the cluster's pods: the plan's queries, or
// existing pods' terms of the kinds it asks for.
bool CountsPods(const CyclePlan& plan) {
  return plan.prepared != nullptr &&
         (plan.prepared->cluster.answers_size() > 0 ||
          plan.prepared->cluster.existing_terms_size() > 0);
}

}  // namespace

std::string SessionFamily(const ProfileInfo& profile, const CyclePlan& plan) {
  return CountsPods(plan) ? plan.template_key : FamilyKey(profile, plan.pod);
}

bool Batchable(const CycleInput& in, const CyclePlan& plan) {
  if (in.batches == nullptr || !in.profile->batches || in.explain_top < 0 ||
      in.explain_rejections) {
    return false;
  }
  if (plan.plan.score_needs_all_feasible()) return false;
  return in.cache->NominatedNode(in.pod->key).empty();
}

namespace {

// The nodes whose messages differ between the session's pod and `pod`: those
// counting either one's value of a key the plugins count.
void CountingNodes(const CycleInput& in, const BatchSession& s,
                   const pb::Pod& pod, std::vector<std::string>* names) {
  for (const std::string& k : in.profile->label_count_keys) {
    auto was = s.labels.find(k);
    auto now = pod.labels().find(k);
    const bool had = was != s.labels.end(), has = now != pod.labels().end();
    if (had && has && was->second == now->second) continue;
    if (had) in.cache->NodesCounting(s.namespace_, k, was->second, names);
    if (has) in.cache->NodesCounting(s.namespace_, k, now->second, names);
  }
}

// The family's session brought up to date: the verdicts of the nodes that
// changed since (and for a pod of other label values, of the nodes whose
// counts differ) forgotten. False when a whole cycle is due.
bool Refresh(const CycleInput& in, const Window& w, const CyclePlan& plan,
             const std::string& template_key, BatchSession& s, bool* rebase) {
  std::vector<std::string> changed;
  // Past half the nodes a whole cycle costs about as much.
  if (s.cluster != ClusterBytes(plan) ||
      !in.cache->ChangedSince(s.seq, &changed) ||
      s.verdict.size() != w.all_nodes || changed.size() > w.all_nodes / 2) {
    return false;
  }
  // A pod on a node changes the counts of every node of its domains.
  if (CountsPods(plan) && (!in.cache->DomainPeers(*plan.prepared, &changed) ||
                           changed.size() > w.all_nodes / 2)) {
    return false;
  }
  *rebase = s.key != template_key;
  if (*rebase) CountingNodes(in, s, plan.pod, &changed);
  std::vector<int32_t> at;
  if (in.cache->PositionsOf(changed, &at) != w.all_nodes) return false;
  for (int32_t p : at)
    if (p >= 0) s.verdict[static_cast<size_t>(p)] = BatchSession::kUnknown;
  if (*rebase) {
    // The replica takes the new pod's PreScore state from a node that fits:
    // the window's first, asked for again.
    const WindowWalk wk = WalkWindow(s, w.first, w.to_find);
    if (wk.window.empty() && wk.pending.empty()) return false;
    if (!wk.window.empty()) {
      auto it = std::find(s.slot_at.begin(), s.slot_at.end(), wk.window[0]);
      s.verdict[static_cast<size_t>(it - s.slot_at.begin())] =
          BatchSession::kUnknown;
    }
  }
  return true;
}

// After a rebase round the session is the pod's: its template and labels.
void Rebased(std::string template_key, const pb::Pod& pod, BatchSession& s) {
  s.key = std::move(template_key);
  s.labels.clear();
  for (const auto& [k, v] : pod.labels()) s.labels.emplace(k, v);
}

// One round's call: the answer, or nullptr when the whole cycle is due.
const pb::EvaluateResponse* SendRound(Round& round,
                                      scorer_client::Scorer& scorer,
                                      google::protobuf::Arena* arena) {
  std::string req;
  // A node goes by key to the replica that was sent it whole, else whole:
  // the changed nodes have new keys, their domain peers the same ones.
  if (!round.Build(&req, nullptr, false)) return nullptr;
  std::vector<absl::StatusOr<pb::EvaluateResponse*>> results =
      EvaluateResolving(
          scorer, {req},
          [&](size_t, const std::vector<bool>* whole, std::string* again) {
            return round.Build(again, whole, whole == nullptr);
          },
          arena, {round.s.id});
  if (!results.front().ok()) {
    spdlog::debug("pod {}: batched cycle failed ({}), running a whole one",
                  round.in.pod->key,
                  std::string(results.front().status().message()));
    return nullptr;
  }
  const pb::EvaluateResponse* resp = *results.front();
  if (resp->session_missing() || resp->status().code() != pb::CODE_SUCCESS)
    return nullptr;
  ++round.s.generation;
  // What Filter said of the round's nodes.
  std::vector<bool> rejected(round.positions.size(), false);
  for (const pb::RejectedNode& r : resp->rejected()) {
    if (r.index() >= 0 && static_cast<size_t>(r.index()) < rejected.size())
      rejected[static_cast<size_t>(r.index())] = true;
  }
  for (size_t i = 0; i < rejected.size(); ++i) {
    round.s.verdict[static_cast<size_t>(round.positions[i])] =
        rejected[i] ? BatchSession::kRejected : BatchSession::kFits;
  }
  return resp;
}

// The node a final round's answer picks, into `r`; false on a bad answer.
bool Pick(const CycleInput& in, const Window& w, const BatchSession& s,
          size_t scanned, const pb::EvaluateResponse& resp, CycleResult& r) {
  const int32_t slot =
      resp.best_slots(static_cast<int>(std::uniform_int_distribution<size_t>(
          0, static_cast<size_t>(resp.best_slots_size()) - 1)(*in.rng)));
  if (slot < 0 || static_cast<size_t>(slot) >= s.slots.size()) {
    spdlog::warn("pod {}: the scorer answered slot {} of {}", in.pod->key, slot,
                 s.slots.size());
    return false;
  }
  r.node = s.slots[static_cast<size_t>(slot)];
  r.batched = true;
  r.next_start = (w.first + scanned) % w.all_nodes;
  return true;
}

// What the batched cycle says of its choice: the -v=4 line and, when asked
// for, the explanation.
void Finish(const CycleInput& in, const Window& w, const BatchSession& s,
            const pb::EvaluateResponse& resp, size_t evaluated,
            CycleResult& r) {
  if (spdlog::should_log(spdlog::level::debug)) {
    spdlog::debug(
        "pod {} -> node {} among {} feasible of {} nodes (batched: {} "
        "evaluated again); top: {}",
        in.pod->key, r.node, resp.feasible_slots(), w.all_nodes, evaluated,
        WhyBatched(s, resp, r.node));
  }
  if (in.explain_top != 0) {
    r.explanation = ExplainBatched(in, w, s, resp, evaluated, r.node);
  }
}

// Whether Filter rejected one of the first `count` nodes of the request.
bool RejectedIn(const pb::EvaluateResponse& resp, size_t count) {
  return std::any_of(resp.rejected().begin(), resp.rejected().end(),
                     [count](const pb::RejectedNode& r) {
                       return r.index() >= 0 &&
                              static_cast<size_t>(r.index()) < count;
                     });
}

// Whether the cycle asks for the windows of later pods: not when a binding
// changes the counts of a whole domain (the plan counts pods), which puts
// a changed node in every later window, nor for a pod with volumes.
bool AsksAhead(const CyclePlan& plan) {
  return !CountsPods(plan) && WithoutVolumes(plan.pod);
}

// The answers the final round got ahead, for the pod's template as of
// `seq` (each replacing the template's older ones), in order while every
// node their windows asked about fits: a rejected one would have moved the
// window, and those after it.
void KeepAhead(uint64_t seq, const Window& w,
               const std::vector<AheadWalk>& walks,
               const pb::EvaluateResponse& resp, BatchSession& s) {
  std::erase_if(s.ahead,
                [&s](const BatchSession::Ahead& a) { return a.key == s.key; });
  const size_t n =
      std::min(walks.size(), static_cast<size_t>(resp.ahead_size()));
  for (size_t i = 0; i < n; ++i) {
    const pb::WindowBest& b = resp.ahead(static_cast<int>(i));
    for (int32_t at : walks[i].walk.pending)
      if (s.verdict[static_cast<size_t>(at)] != BatchSession::kFits) return;
    if (b.best_slots().empty()) return;
    BatchSession::Ahead& a = s.ahead.emplace_back();
    a.key = s.key;
    a.seq = seq;
    a.first = walks[i].first;
    a.scanned = walks[i].walk.scanned;
    a.to_find = w.to_find;
    a.answer.set_best_total(b.best_total());
    *a.answer.mutable_best_slots() = b.best_slots();
    a.answer.set_feasible_slots(b.feasible_slots());
    *a.answer.mutable_scores() = b.scores();
    *a.answer.mutable_plugins() = resp.plugins();
    *a.answer.mutable_weights() = resp.weights();
    a.answer.set_replica(resp.replica());
    if (s.ahead.size() > kMaxKeptAhead) s.ahead.pop_front();
  }
}

// Whether no node in the `scanned` positions from `first` changed since
// `seq`, and the nodes are the same.
bool UnchangedSince(const CycleInput& in, uint64_t seq, size_t first,
                    size_t scanned, size_t all_nodes) {
  std::vector<std::string> changed;
  if (!in.cache->ChangedSince(seq, &changed)) return false;
  std::vector<int32_t> at;
  if (in.cache->PositionsOf(changed, &at) != all_nodes) return false;
  return std::none_of(at.begin(), at.end(), [&](int32_t p) {
    return p >= 0 &&
           (static_cast<size_t>(p) + all_nodes - first) % all_nodes < scanned;
  });
}

// The answer given ahead for this pod's template and window, when no node
// its window walks past changed since its call: the same template over the
// same raw scores and window, so what a call would answer now. It is used
// once; one found stale goes.
std::optional<CycleResult> FromAhead(const CycleInput& in, const Window& w,
                                     const CyclePlan& plan,
                                     const std::string& template_key,
                                     BatchSession& s) {
  auto it = std::find_if(s.ahead.begin(), s.ahead.end(),
                         [&](const BatchSession::Ahead& a) {
                           return a.key == template_key && a.first == w.first &&
                                  a.to_find == w.to_find;
                         });
  if (it == s.ahead.end()) return std::nullopt;
  const BatchSession::Ahead a = std::move(*it);
  s.ahead.erase(it);
  CycleResult r;
  if (s.verdict.size() != w.all_nodes || s.cluster != ClusterBytes(plan) ||
      !UnchangedSince(in, a.seq, a.first, a.scanned, w.all_nodes) ||
      !Pick(in, w, s, a.scanned, a.answer, r)) {
    return std::nullopt;
  }
  r.ahead = true;
  Finish(in, w, s, a.answer, 0, r);
  return r;
}

}  // namespace

std::optional<CycleResult> RunBatched(const CycleInput& in, const Window& w,
                                      const CyclePlan& plan,
                                      const std::string& key, uint64_t seq,
                                      scorer_client::Scorer& scorer) {
  std::optional<BatchSession> s = in.batches->Take(key);
  if (!s.has_value()) return std::nullopt;
  const std::string& template_key = plan.template_key;
  if (std::optional<CycleResult> r = FromAhead(in, w, plan, template_key, *s)) {
    in.batches->Put(key, *std::move(s));
    return r;
  }
  bool rebase = false;
  if (!Refresh(in, w, plan, template_key, *s, &rebase)) return std::nullopt;
  const bool beyond = SeenAgain(*s, template_key);
  // Windows ahead only when a share of the nodes is scored.
  const bool asks = AsksAhead(plan) && w.to_find < w.all_nodes;
  const std::vector<bool> upcoming =
      asks && in.upcoming ? in.upcoming() : std::vector<bool>{};
  google::protobuf::Arena arena;
  size_t evaluated = 0;
  for (;;) {
    const WindowWalk wk = WalkWindow(*s, w.first, w.to_find);
    Round round(in, plan, *s, wk,
                asks && wk.scanned < w.all_nodes
                    ? AheadWalks(*s, w, wk, upcoming, beyond)
                    : std::vector<AheadWalk>{},
                rebase, scorer.ReplicaOf(s->id));
    const pb::EvaluateResponse* resp = SendRound(round, scorer, &arena);
    if (resp == nullptr) return std::nullopt;
    if (rebase) Rebased(template_key, plan.pod, *s);
    rebase = false;
    evaluated += round.positions.size();
    // Not final while a node of its window was rejected and nodes remain:
    // the window reaches further, as EvaluateBatches' next round would.
    if (RejectedIn(*resp, wk.pending.size()) && wk.scanned < w.all_nodes)
      continue;
    // No node fits: the whole cycle says why.
    if (resp->best_slots().empty()) return std::nullopt;
    CycleResult r;
    if (!Pick(in, w, *s, wk.scanned, *resp, r)) return std::nullopt;
    Finish(in, w, *s, *resp, evaluated, r);
    KeepAhead(seq, w, round.ahead, *resp, *s);
    s->seq = seq;
    in.batches->Put(key, *std::move(s));
    return r;
  }
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
  s.key = plan.template_key;
  s.namespace_ = plan.pod.namespace_();
  for (const auto& [k, v] : plan.pod.labels()) s.labels.emplace(k, v);
  std::vector<int32_t> at;
  const size_t n = in.cache->PositionsOf(ev.names, &at);
  s.slot_at.assign(n, -1);
  s.verdict.assign(n, BatchSession::kUnknown);
  for (size_t i = 0; i < at.size(); ++i)
    if (at[i] >= 0)
      s.verdict[static_cast<size_t>(at[i])] = BatchSession::kRejected;
  s.slots.reserve(ev.feasible.size());
  for (size_t i : ev.feasible) {
    if (at[i] < 0) return;  // gone meanwhile: the next cycle is whole
    s.slot_at[static_cast<size_t>(at[i])] =
        static_cast<int32_t>(s.slots.size());
    s.verdict[static_cast<size_t>(at[i])] = BatchSession::kFits;
    s.slots.push_back(ev.names[i]);
  }
  in.batches->Put(key, std::move(s));
}

bool RemembersRejections(const CycleInput& in, const CyclePlan& plan) {
  if (in.batches == nullptr || in.explain_top < 0 || in.explain_rejections) {
    return false;
  }
  return WithoutVolumes(plan.pod);
}

namespace {

// The positions to ask about again: the nodes changed since the memo (and
// their domain peers when the plan counts pods), the memo's pod's
// nominated node and this pod's (`nominated`), and the window's first node
// (so that there is a call, which carries PreFilter's plugins). False when
// a whole cycle is due.
bool ChangedPositions(const CycleInput& in, const Window& w,
                      const CyclePlan& plan, const RejectedNodes& m,
                      const std::string& nominated, std::vector<int32_t>* out) {
  std::vector<std::string> changed;
  if (m.cluster != ClusterBytes(plan) || m.kind_at.size() != w.all_nodes ||
      !in.cache->ChangedSince(m.seq, &changed)) {
    return false;
  }
  if (CountsPods(plan) && !in.cache->DomainPeers(*plan.prepared, &changed)) {
    return false;
  }
  if (!m.nominated.empty()) changed.push_back(m.nominated);
  if (!nominated.empty()) changed.push_back(nominated);
  std::vector<int32_t> at;
  if (in.cache->PositionsOf(changed, &at) != w.all_nodes) return false;
  at.push_back(static_cast<int32_t>(w.first % w.all_nodes));
  std::erase_if(at, [](int32_t p) { return p < 0; });
  std::sort(at.begin(), at.end());
  at.erase(std::unique(at.begin(), at.end()), at.end());
  // Past half the nodes a whole cycle costs about as much.
  if (at.size() > w.all_nodes / 2) return false;
  *out = std::move(at);
  return true;
}

// `ev` as a whole cycle's calls fill it when every node is rejected: the
// candidates from w.first (`order` is the cache's candidate order), the
// reasons, the plugins (`resp`'s carry PreFilter's) and the nodes PostFilter
// may try.
void FillRejected(const Window& w, const RejectedNodes& m,
                  const pb::EvaluateResponse& resp,
                  std::vector<std::string> order, CandidateVerdicts& ev) {
  const size_t n = w.all_nodes;
  std::vector<int> count(m.kinds.size(), 0);
  ev.names.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const size_t at = (w.first + i) % n;
    ev.names.push_back(std::move(order[at]));
    const auto k = static_cast<size_t>(m.kind_at[at]);
    ++count[k];
    if (m.kinds[k].code == pb::CODE_UNSCHEDULABLE) ev.potential.push_back(i);
  }
  ev.unschedulable_plugins.insert(resp.unschedulable_plugins().begin(),
                                  resp.unschedulable_plugins().end());
  for (size_t k = 0; k < m.kinds.size(); ++k) {
    if (count[k] == 0) continue;
    const CandidateVerdicts::Kind& kind = m.kinds[k];
    if (!kind.plugin.empty()) ev.unschedulable_plugins.insert(kind.plugin);
    for (const std::string& r : kind.reasons) {
      ev.fit_error.AddReason(r, count[k]);
    }
  }
  ev.processed = n;
  ev.calls = 1;
}

// The memo with the answer for the nodes at `at` in; false when one of
// them fits (or the answer is not one a whole cycle would take).
bool Update(const pb::EvaluateResponse& resp, const std::vector<int32_t>& at,
            RejectedNodes& m) {
  if (resp.status().code() != pb::CODE_SUCCESS ||
      static_cast<size_t>(resp.rejected_size()) != at.size()) {
    return false;
  }
  for (const pb::RejectedNode& r : resp.rejected()) {
    if (r.index() < 0 || static_cast<size_t>(r.index()) >= at.size() ||
        r.status().code() == pb::CODE_ERROR) {
      return false;
    }
    m.kind_at[static_cast<size_t>(at[static_cast<size_t>(r.index())])] =
        KindIndex(r.status(), m.kinds);
  }
  return true;
}

}  // namespace

bool RunRejected(const CycleInput& in, const Window& w, const CyclePlan& plan,
                 uint64_t seq, scorer_client::Scorer& scorer,
                 CandidateVerdicts& ev) {
  if (!RemembersRejections(in, plan) || w.all_nodes == 0) return false;
  const std::string& key = plan.template_key;
  std::optional<RejectedNodes> m = in.batches->TakeRejected(key);
  if (!m.has_value()) return false;
  const std::string nominated = in.cache->NominatedNode(in.pod->key);
  std::vector<int32_t> at;
  if (!ChangedPositions(in, w, plan, *m, nominated, &at)) return false;
  google::protobuf::Arena arena;
  absl::StatusOr<const pb::EvaluateResponse*> answer =
      FilterNamed(in, plan, in.cache->NamesAt(at), scorer, &arena);
  if (!answer.ok() || !Update(**answer, at, *m)) return false;
  const pb::EvaluateResponse* resp = *answer;
  // The candidate order the positions are of: unchanged since the cycle
  // began (a node that came or went makes the next cycle whole).
  std::vector<std::string> order = in.cache->NodeNames();
  std::vector<std::string> since;
  if (order.size() != w.all_nodes || !in.cache->ChangedSince(seq, &since)) {
    return false;
  }
  FillRejected(w, *m, *resp, std::move(order), ev);
  spdlog::debug("pod {}: no node fits ({} of {} nodes evaluated again)",
                in.pod->key, at.size(), w.all_nodes);
  m->seq = seq;
  m->nominated = nominated;
  in.batches->PutRejected(key, *std::move(m));
  return true;
}

void RememberRejected(const CycleInput& in, const CyclePlan& plan, uint64_t seq,
                      const CandidateVerdicts& ev) {
  if (!RemembersRejections(in, plan) || !ev.keep_kinds ||
      !ev.feasible.empty() || ev.pre_filter_code != pb::CODE_SUCCESS ||
      !ev.potential_before.empty() || ev.kind_of.size() != ev.names.size()) {
    return;
  }
  std::vector<int32_t> at;
  const size_t n = in.cache->PositionsOf(ev.names, &at);
  if (n != ev.names.size()) return;  // not every node, once each
  RejectedNodes m;
  m.seq = seq;
  m.cluster = ClusterBytes(plan);
  m.nominated = in.cache->NominatedNode(in.pod->key);
  m.kinds = ev.kinds;
  m.kind_at.assign(n, -1);
  for (size_t i = 0; i < n; ++i) {
    if (at[i] < 0 || ev.kind_of[i] < 0) return;
    m.kind_at[static_cast<size_t>(at[i])] = ev.kind_of[i];
  }
  if (std::find(m.kind_at.begin(), m.kind_at.end(), -1) != m.kind_at.end()) {
    return;
  }
  in.batches->PutRejected(plan.template_key, std::move(m));
}

}  // namespace kscore::scheduler
