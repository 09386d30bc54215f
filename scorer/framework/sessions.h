#ifndef KSCORE_SCORER_FRAMEWORK_SESSIONS_H_
#define KSCORE_SCORER_FRAMEWORK_SESSIONS_H_

// Batching of equivalent pods (pb::SessionUpdate): the raw scores of a cycle
// a replica normalised, kept so that the next pod of the same template
// re-evaluates only the nodes that changed. Upstream's OpportunisticBatch
// (framework/runtime/batch.go) keeps the previous pod's sorted nodes; here
// the raw scores are kept, so every node's score stays exact, not only the
// hinted node's.

#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "scorer/framework/cycle_state.h"
#include "scorer/framework/profile.h"

namespace kscore::framework {

// One kept cycle. Slot i holds a node's raw scores (one per plugin) while
// Filter accepts it; `feasible[i]` is false once Filter rejects it.
struct Session {
  const Profile* profile = nullptr;
  // What the session's answers depend on besides the nodes: the profile,
  // the pod message without its name and uid, and the cluster data with its
  // totals only as zero or not (model::SessionCluster), as deterministic
  // bytes. An update for anything else is refused.
  std::string key;
  // The same with the pod's label values left out (FamilyKey): an update
  // with `rebase` may change the pod within it.
  std::string family;
  std::vector<const ScorePlugin*> plugins;  // not skipped, in run order
  std::vector<int32_t> weights;             // per plugin
  std::vector<std::vector<int64_t>> raw;    // [plugin][slot]
  std::vector<bool> feasible;               // per slot
  CycleState::Bytes state;  // for NormalizeScore: PreScore's state
  uint32_t generation = 0;

  size_t slots() const { return feasible.size(); }
  // The memory it holds, roughly, for the store's bound.
  size_t Bytes() const;
};

// The key of a session (Session::key) for `pod` and `cluster`.
std::string SessionKey(const Profile& profile, const pb::Pod& pod,
                       const pb::ClusterData& cluster);
// The same without the pod's label values (Session::family).
std::string FamilyKey(const Profile& profile, const pb::Pod& pod,
                      const pb::ClusterData& cluster);

// A session made from a normalised table: slot i is the table's node i.
Session SessionFrom(const Profile& profile, std::string key, std::string family,
                    const ScoreTable& table, const CycleState& state);

// What an update decided over every slot.
struct SessionBest {
  int64_t total = 0;
  std::vector<int32_t> slots;  // those with `total`, ascending
  int32_t feasible = 0;        // slots Filter accepts
  // Every feasible slot normalised (for explanations): table node j is
  // slot at[j].
  ScoreTable table;
  std::vector<int32_t> at;
};

// The update itself: `ev` is Profile::Evaluate (kRawScores) of the changed
// nodes, `slots` each one's slot. Applies them to `s` and normalises every
// feasible slot, or with `window` those of its slots. nullopt when the
// plugins that scored differ from the session's (the pod is not the
// session's after all); InvalidArgument when `slots` or `window` does not
// fit the session.
absl::StatusOr<std::optional<SessionBest>> ApplyUpdate(
    Session& s, const NodeVerdicts& ev, absl::Span<const int32_t> slots,
    const pb::Pod& pod, ExtensionPointObserver* observer,
    std::optional<absl::Span<const int32_t>> window = std::nullopt);

// Normalises the session's feasible slots, or with `window` those of its
// slots (InvalidArgument naming `field` when one is not a slot of the
// session or is listed twice), and picks the best, as an update does.
absl::StatusOr<SessionBest> BestOver(
    const Session& s, const pb::Pod& pod, ExtensionPointObserver* observer,
    std::optional<absl::Span<const int32_t>> window, absl::string_view field);

// The sessions of one replica, bounded by count and bytes (the least
// recently used go first). Thread-safe. An update takes its session out
// while it works, so a concurrent update of the same session finds none.
class SessionStore {
 public:
  SessionStore(size_t max_sessions, size_t max_bytes)
      : max_sessions_(max_sessions), max_bytes_(max_bytes) {}
  void Put(uint64_t id, Session s);
  // The session `id` at `generation`, removed from the store (Put it back
  // after the update); nullptr when there is none.
  std::unique_ptr<Session> Take(uint64_t id, uint32_t generation);
  size_t size() const;
  size_t bytes() const;

 private:
  struct Entry {
    uint64_t id;
    std::unique_ptr<Session> session;
    size_t bytes;
  };
  void EvictLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const size_t max_sessions_;
  const size_t max_bytes_;
  mutable absl::Mutex mu_;
  std::list<Entry> lru_ ABSL_GUARDED_BY(mu_);  // most recent first
  absl::flat_hash_map<uint64_t, std::list<Entry>::iterator> by_id_
      ABSL_GUARDED_BY(mu_);
  size_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace kscore::framework

#endif  // KSCORE_SCORER_FRAMEWORK_SESSIONS_H_
