#ifndef KSCORE_SHIM_SCHEDULER_EXPLAIN_H_
#define KSCORE_SHIM_SCHEDULER_EXPLAIN_H_

// "Why here, why pending" for a person: what one scheduling cycle saw and
// decided, kept for the last pods in bounded memory (DecisionLog) and
// served as JSON by the status server (kubectl kscore explain).

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"

namespace kscore::scheduler {

// One cycle's outcome and its reasons. Built by RunCycle when asked
// (CycleInput::explain_top), from what the scorer answered anyway plus the
// top nodes' per-plugin breakdown it adds on request.
struct Explanation {
  std::string namespace_ = {};
  std::string name = {};
  std::string uid = {};
  std::string profile = {};  // schedulerName
  absl::Time time = {};      // when the cycle ended
  int attempts = 0;          // scheduling attempts of the pod, this one too
  bool what_if = false;      // a dry cycle: nothing was assumed or bound

  size_t all_nodes = 0;  // in the snapshot
  size_t evaluated = 0;  // candidates the scorer filtered
  size_t feasible = 0;   // of those, the ones Filter passed

  std::string node = {};     // the chosen node; "" when the pod stays pending
  std::string message = {};  // why pending (the FailedScheduling message)
  bool error = false;        // a SchedulerError rather than Unschedulable
  // The pod's nominated node fit and was taken without scoring.
  bool nominated = false;
  // A batched cycle: `evaluated` nodes changed since the last pod of the
  // same template and were evaluated again; the others' verdicts and raw
  // scores were reused, and every feasible node normalised again.
  bool batched = false;

  // The filter reasons and how many nodes gave each (FitError's parts),
  // most nodes first.
  std::vector<std::pair<std::string, int>> reasons = {};

  // The score plugins that ran and their weights.
  std::vector<std::string> plugins = {};
  std::vector<int32_t> weights = {};
  struct NodeScore {
    std::string node;
    int64_t total = 0;
    std::vector<int64_t> raw = {};         // per plugin
    std::vector<int64_t> normalized = {};  // per plugin; empty: not known
  };
  // The chosen node first, then the others by total, highest first.
  std::vector<NodeScore> top = {};
  // More nodes than `top` shows tied for the best total (one was picked at
  // random).
  size_t tied_best = 0;
  std::vector<std::string> replicas = {};  // the scorer replicas that answered

  // PostFilter's decision for a pod no node took: where it would preempt.
  std::string preemption_node = {};
  size_t preemption_victims = 0;

  // With CycleInput::explain_rejections (--record-scores): each rejected
  // node, the plugin that rejected it and its message, and the profile's
  // Filter plugins in order; `top` then holds every feasible node.
  struct Rejection {
    std::string node;
    std::string plugin;
    std::string message;
  };
  std::vector<Rejection> rejections = {};
  std::vector<std::string> filter_plugins = {};
};

// The heap and inline bytes `e` holds (strings' and vectors' capacities):
// what one decision costs the log.
size_t ExplanationBytes(const Explanation& e);

// A copy of `e` with at most `top` nodes and no per-node rejections: what
// the log keeps of a cycle that recorded every node.
Explanation Trimmed(const Explanation& e, size_t top);

// The JSON the status server serves (docs/explain.md describes it).
nlohmann::json ExplanationJson(const Explanation& e);

// kube-scheduler-simulator's result annotations for a scheduled pod
// (filter-result, score-result, finalscore-result, selected-node), with the
// simulator's shapes: node -> plugin -> "passed" or the message, the raw
// score, the normalised score times weight, as strings. Nodes are added
// best first until the values would pass `max_bytes` (the API server
// limits a pod's annotations to 256 KiB in all); then a
// kscore.io/record-scores-truncated annotation says how many were left out.
nlohmann::json SimulatorAnnotations(const Explanation& e,
                                    size_t max_bytes = 200 * 1024);

// The last decisions, one per pod (the latest), at most `capacity`: the
// least recently recorded pod is dropped first. Thread-safe.
class DecisionLog {
 public:
  explicit DecisionLog(size_t capacity) : capacity_(capacity) {}

  void Add(std::shared_ptr<const Explanation> e);
  // The pod's latest decision, or null.
  std::shared_ptr<const Explanation> Find(absl::string_view namespace_,
                                          absl::string_view name) const;
  size_t size() const;
  size_t capacity() const { return capacity_; }

 private:
  using Order = std::list<std::shared_ptr<const Explanation>>;
  const size_t capacity_;
  mutable absl::Mutex mu_;
  Order order_ ABSL_GUARDED_BY(mu_);  // most recent first
  absl::flat_hash_map<std::string, Order::iterator> by_pod_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace kscore::scheduler

#endif  // KSCORE_SHIM_SCHEDULER_EXPLAIN_H_
