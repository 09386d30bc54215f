#include "scorer/framework/sessions.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "model/node_key.h"
#include "model/session_cluster.h"

namespace kscore::framework {
namespace {

// Checks `slots` against the session before anything changes: each at most
// the slot count so far (which a new slot raises), none twice.
absl::Status CheckSlots(const Session& s, absl::Span<const int32_t> slots,
                        size_t nodes) {
  if (slots.size() != nodes) {
    return absl::InvalidArgumentError(
        absl::StrCat("update.slots has ", slots.size(), " entries for ", nodes,
                     " nodes: one per node"));
  }
  size_t n = s.slots();
  std::vector<bool> seen(n + slots.size(), false);
  for (size_t i = 0; i < slots.size(); ++i) {
    const int32_t v = slots[i];
    if (v < 0 || static_cast<size_t>(v) > n) {
      return absl::InvalidArgumentError(absl::StrCat(
          "update.slots[", i, "]: ", v, " is not a slot (0..", n, ")"));
    }
    if (seen[static_cast<size_t>(v)]) {
      return absl::InvalidArgumentError(
          absl::StrCat("update.slots[", i, "]: slot ", v, " is listed twice"));
    }
    seen[static_cast<size_t>(v)] = true;
    if (static_cast<size_t>(v) == n) ++n;
  }
  return absl::OkStatus();
}

// The slots to normalise over: every feasible one, or those of `window`
// (checked: slots of the session, none twice), in the window's order.
absl::StatusOr<std::vector<int32_t>> FeasibleSlots(
    const Session& s, std::optional<absl::Span<const int32_t>> window,
    absl::string_view field) {
  std::vector<int32_t> at;
  if (!window.has_value()) {
    at.reserve(s.slots());
    for (size_t i = 0; i < s.slots(); ++i)
      if (s.feasible[i]) at.push_back(static_cast<int32_t>(i));
    return at;
  }
  std::vector<bool> seen(s.slots(), false);
  at.reserve(window->size());
  for (size_t i = 0; i < window->size(); ++i) {
    const int32_t v = (*window)[i];
    if (v < 0 || static_cast<size_t>(v) >= s.slots()) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, "[", i, "]: ", v, " is not a slot (0..", s.slots() - 1, ")"));
    }
    if (seen[static_cast<size_t>(v)]) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, "[", i, "]: slot ", v, " is listed twice"));
    }
    seen[static_cast<size_t>(v)] = true;
    if (s.feasible[static_cast<size_t>(v)]) at.push_back(v);
  }
  return at;
}

bool SamePlugins(const Session& s, const ScoreTable& t) {
  return s.plugins == t.plugins;
}

// Writes the changed nodes into their slots.
void Apply(Session& s, const NodeVerdicts& ev,
           absl::Span<const int32_t> slots) {
  std::vector<int> feasible_at(ev.filter.size(), -1);
  for (size_t j = 0; j < ev.feasible.size(); ++j)
    feasible_at[static_cast<size_t>(ev.feasible[j])] = static_cast<int>(j);
  for (size_t i = 0; i < slots.size(); ++i) {
    const auto slot = static_cast<size_t>(slots[i]);
    if (slot == s.slots()) {
      s.feasible.push_back(false);
      for (std::vector<int64_t>& row : s.raw) row.push_back(0);
    }
    const int j = feasible_at[i];
    s.feasible[slot] = j >= 0;
    if (j < 0) continue;
    for (size_t k = 0; k < s.plugins.size(); ++k)
      s.raw[k][slot] = ev.scores.raw[k][static_cast<size_t>(j)];
  }
}

}  // namespace

size_t Session::Bytes() const {
  size_t b = sizeof(Session) + key.size() + family.size() +
             feasible.size() / 8 +
             raw.size() * feasible.size() * sizeof(int64_t);
  for (const auto& [k, v] : state) b += k.size() + v.size();
  return b;
}

std::string SessionKey(const Profile& profile, const pb::Pod& pod,
                       const pb::ClusterData& cluster) {
  pb::Pod anonymous = pod;
  anonymous.clear_name();
  anonymous.clear_uid();
  std::string key = profile.scheduler_name();
  key.push_back('\0');
  model::AppendDeterministic(anonymous, &key);
  key.push_back('\0');
  model::AppendSessionCluster(cluster, &key);
  return key;
}

std::string FamilyKey(const Profile& profile, const pb::Pod& pod,
                      const pb::ClusterData& cluster) {
  pb::Pod family = pod;
  for (auto& [k, v] : *family.mutable_labels()) v.clear();
  return SessionKey(profile, family, cluster);
}

Session SessionFrom(const Profile& profile, std::string key, std::string family,
                    const ScoreTable& table, const CycleState& state) {
  Session s;
  s.profile = &profile;
  s.key = std::move(key);
  s.family = std::move(family);
  s.plugins = table.plugins;
  s.weights = table.weights;
  s.raw = table.raw;
  const size_t n = table.raw.empty() ? table.total.size() : table.raw[0].size();
  s.feasible.assign(n, true);
  s.state = state.bytes();
  return s;
}

absl::StatusOr<SessionBest> BestOver(
    const Session& s, const pb::Pod& pod, ExtensionPointObserver* observer,
    std::optional<absl::Span<const int32_t>> window, absl::string_view field) {
  SessionBest best;
  KSCORE_ASSIGN_OR_RETURN(best.at, FeasibleSlots(s, window, field));
  ScoreTable& table = best.table;
  table.plugins = s.plugins;
  table.weights = s.weights;
  table.raw.resize(s.plugins.size());
  for (size_t k = 0; k < s.plugins.size(); ++k) {
    // A gather over every slot a pod: no push_back's capacity checks.
    table.raw[k].resize(best.at.size());
    int64_t* to = table.raw[k].data();
    const int64_t* from = s.raw[k].data();
    for (int32_t i : best.at) *to++ = from[static_cast<size_t>(i)];
  }
  best.feasible = static_cast<int32_t>(best.at.size());
  if (best.at.empty()) return best;
  if (!s.plugins.empty()) {
    const CycleState state(s.state);
    KSCORE_RETURN_IF_ERROR(
        s.profile->RunNormalizeScore(state, pod, table, observer));
  } else {
    table.total.assign(best.at.size(), 0);
  }
  best.total = *std::max_element(table.total.begin(), table.total.end());
  for (size_t j = 0; j < best.at.size(); ++j)
    if (table.total[j] == best.total) best.slots.push_back(best.at[j]);
  std::sort(best.slots.begin(), best.slots.end());
  return best;
}

absl::StatusOr<std::optional<SessionBest>> ApplyUpdate(
    Session& s, const NodeVerdicts& ev, absl::Span<const int32_t> slots,
    const pb::Pod& pod, ExtensionPointObserver* observer,
    std::optional<absl::Span<const int32_t>> window) {
  KSCORE_RETURN_IF_ERROR(CheckSlots(s, slots, ev.filter.size()));
  if (!ev.feasible.empty() && !SamePlugins(s, ev.scores)) return std::nullopt;
  Apply(s, ev, slots);
  return BestOver(s, pod, observer, window, "update.window");
}

void SessionStore::Put(uint64_t id, Session s) {
  auto session = std::make_unique<Session>(std::move(s));
  const size_t b = session->Bytes();
  absl::MutexLock lock(&mu_);
  if (auto it = by_id_.find(id); it != by_id_.end()) {
    bytes_ -= it->second->bytes;
    lru_.erase(it->second);
    by_id_.erase(it);
  }
  if (b > max_bytes_) return;  // larger than the whole store: not kept
  lru_.push_front({id, std::move(session), b});
  by_id_[id] = lru_.begin();
  bytes_ += b;
  EvictLocked();
}

std::unique_ptr<Session> SessionStore::Take(uint64_t id, uint32_t generation) {
  absl::MutexLock lock(&mu_);
  auto it = by_id_.find(id);
  if (it == by_id_.end()) return nullptr;
  std::unique_ptr<Session> s = std::move(it->second->session);
  bytes_ -= it->second->bytes;
  lru_.erase(it->second);
  by_id_.erase(it);
  if (s->generation != generation) return nullptr;  // lost or repeated
  return s;
}

void SessionStore::EvictLocked() {
  while (!lru_.empty() &&
         (lru_.size() > max_sessions_ || bytes_ > max_bytes_)) {
    bytes_ -= lru_.back().bytes;
    by_id_.erase(lru_.back().id);
    lru_.pop_back();
  }
}

size_t SessionStore::size() const {
  absl::MutexLock lock(&mu_);
  return lru_.size();
}

size_t SessionStore::bytes() const {
  absl::MutexLock lock(&mu_);
  return bytes_;
}

}  // namespace kscore::framework
