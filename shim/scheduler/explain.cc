#include "shim/scheduler/explain.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace kscore::scheduler {
namespace {

// kube-scheduler-simulator's annotation keys and its word for a node a
// Filter plugin let through.
constexpr char kFilterResult[] =
    "kube-scheduler-simulator.sigs.k8s.io/filter-result";
constexpr char kScoreResult[] =
    "kube-scheduler-simulator.sigs.k8s.io/score-result";
constexpr char kFinalScoreResult[] =
    "kube-scheduler-simulator.sigs.k8s.io/finalscore-result";
constexpr char kSelectedNode[] =
    "kube-scheduler-simulator.sigs.k8s.io/selected-node";
constexpr char kTruncated[] = "kscore.io/record-scores-truncated";
constexpr char kPassed[] = "passed";

std::string Key(absl::string_view namespace_, absl::string_view name) {
  return absl::StrCat(namespace_, "/", name);
}

// `s` as a JSON string. Node and plugin names need no escaping; reasons
// may.
std::string Quote(absl::string_view s) {
  for (char c : s) {
    if (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20 ||
        static_cast<unsigned char>(c) >= 0x80) {
      return nlohmann::json(std::string(s))
          .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
  }
  return absl::StrCat("\"", s, "\"");
}

}  // namespace

size_t ExplanationBytes(const Explanation& e) {
  auto str = [](const std::string& s) {
    return s.capacity() > 15 ? s.capacity() + 1 : 0;  // beyond SSO
  };
  size_t n = sizeof(Explanation);
  for (const std::string* s : {&e.namespace_, &e.name, &e.uid, &e.profile,
                               &e.node, &e.message, &e.preemption_node}) {
    n += str(*s);
  }
  n += e.reasons.capacity() * sizeof(e.reasons[0]);
  for (const auto& [r, _] : e.reasons) n += str(r);
  n += e.plugins.capacity() * sizeof(std::string);
  for (const std::string& p : e.plugins) n += str(p);
  n += e.weights.capacity() * sizeof(int32_t);
  n += e.top.capacity() * sizeof(Explanation::NodeScore);
  for (const Explanation::NodeScore& t : e.top) {
    n += str(t.node) + (t.raw.capacity() + t.normalized.capacity()) * 8;
  }
  n += e.replicas.capacity() * sizeof(std::string);
  for (const std::string& r : e.replicas) n += str(r);
  n += e.rejections.capacity() * sizeof(Explanation::Rejection);
  for (const Explanation::Rejection& r : e.rejections) {
    n += str(r.node) + str(r.plugin) + str(r.message);
  }
  n += e.filter_plugins.capacity() * sizeof(std::string);
  for (const std::string& p : e.filter_plugins) n += str(p);
  return n;
}

Explanation Trimmed(const Explanation& e, size_t top) {
  Explanation t;
  t.namespace_ = e.namespace_;
  t.name = e.name;
  t.uid = e.uid;
  t.profile = e.profile;
  t.time = e.time;
  t.attempts = e.attempts;
  t.what_if = e.what_if;
  t.all_nodes = e.all_nodes;
  t.evaluated = e.evaluated;
  t.feasible = e.feasible;
  t.node = e.node;
  t.message = e.message;
  t.error = e.error;
  t.nominated = e.nominated;
  t.batched = e.batched;
  t.reasons = e.reasons;
  t.plugins = e.plugins;
  t.weights = e.weights;
  t.top.assign(e.top.begin(), e.top.begin() + static_cast<std::ptrdiff_t>(
                                                  std::min(top, e.top.size())));
  t.tied_best = e.tied_best;
  t.replicas = e.replicas;
  t.preemption_node = e.preemption_node;
  t.preemption_victims = e.preemption_victims;
  return t;
}

nlohmann::json ExplanationJson(const Explanation& e) {
  nlohmann::json j;
  j["pod"] = {{"namespace", e.namespace_}, {"name", e.name}, {"uid", e.uid}};
  j["profile"] = e.profile;
  j["time"] =
      absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", e.time, absl::UTCTimeZone());
  j["attempts"] = e.attempts;
  j["whatIf"] = e.what_if;
  j["result"] = !e.node.empty() ? "Scheduled"
                : e.error       ? "SchedulerError"
                                : "Unschedulable";
  if (!e.node.empty()) j["node"] = e.node;
  if (!e.message.empty()) j["message"] = e.message;
  if (e.nominated) j["nominatedNodeTaken"] = true;
  if (e.batched) j["batched"] = true;
  j["nodes"] = {{"total", e.all_nodes},
                {"evaluated", e.evaluated},
                {"feasible", e.feasible}};
  nlohmann::json plugins = nlohmann::json::array();
  for (size_t p = 0; p < e.plugins.size(); ++p) {
    plugins.push_back({{"name", e.plugins[p]},
                       {"weight", p < e.weights.size() ? e.weights[p] : 0}});
  }
  j["plugins"] = std::move(plugins);
  nlohmann::json top = nlohmann::json::array();
  for (const Explanation::NodeScore& n : e.top) {
    nlohmann::json scores = nlohmann::json::array();
    for (size_t p = 0; p < e.plugins.size() && p < n.raw.size(); ++p) {
      nlohmann::json s = {{"plugin", e.plugins[p]}, {"raw", n.raw[p]}};
      if (p < n.normalized.size()) {
        s["normalized"] = n.normalized[p];
        s["weighted"] =
            n.normalized[p] * (p < e.weights.size() ? e.weights[p] : 0);
      }
      scores.push_back(std::move(s));
    }
    top.push_back(
        {{"node", n.node}, {"total", n.total}, {"scores", std::move(scores)}});
  }
  j["top"] = std::move(top);
  if (e.tied_best > 0) j["tiedBest"] = e.tied_best;
  nlohmann::json reasons = nlohmann::json::array();
  for (const auto& [reason, nodes] : e.reasons) {
    reasons.push_back({{"reason", reason}, {"nodes", nodes}});
  }
  j["filterReasons"] = std::move(reasons);
  j["scorerReplicas"] = e.replicas;
  if (!e.preemption_node.empty()) {
    j["preemption"] = {{"node", e.preemption_node},
                       {"victims", e.preemption_victims}};
  }
  return j;
}

nlohmann::json SimulatorAnnotations(const Explanation& e, size_t max_bytes) {
  // The three maps are written as text: for every feasible node of a
  // --record-scores cycle this runs on the API client's I/O thread, and
  // building JSON objects node by node cost ten times as much.
  std::string filter = "{", score = "{", final_score = "{";
  size_t recorded = 0;
  const size_t all = e.top.size() + e.rejections.size();
  // What every feasible node's filter-result says: each plugin passed it.
  std::string passed_all = "{";
  for (const std::string& p : e.filter_plugins) {
    absl::StrAppend(&passed_all, passed_all.size() > 1 ? "," : "", Quote(p),
                    ":\"", kPassed, "\"");
  }
  passed_all += "}";
  // Appends one node's entries unless they would pass the budget.
  bool full = false;
  auto add = [&](const std::string& node, const std::string& f,
                 const std::string& sc, const std::string& fs) {
    const std::string key = Quote(node) + ":";
    const size_t size = 3 * (key.size() + 1) + f.size() + sc.size() + fs.size();
    if (full ||
        filter.size() + score.size() + final_score.size() + size > max_bytes) {
      full = true;
      return;
    }
    ++recorded;
    absl::StrAppend(&filter, filter.size() > 1 ? "," : "", key, f);
    if (!sc.empty()) {
      absl::StrAppend(&score, score.size() > 1 ? "," : "", key, sc);
      absl::StrAppend(&final_score, final_score.size() > 1 ? "," : "", key, fs);
    }
  };
  std::vector<std::string> plugins;  // quoted once
  for (const std::string& p : e.plugins) plugins.push_back(Quote(p));
  std::string sc, fs;
  for (const Explanation::NodeScore& n : e.top) {
    sc = "{";
    fs = "{";
    for (size_t p = 0; p < plugins.size() && p < n.raw.size(); ++p) {
      const int64_t w = p < e.weights.size() ? e.weights[p] : 0;
      const int64_t weighted =
          (p < n.normalized.size() ? n.normalized[p] : n.raw[p]) * w;
      const char* comma = p > 0 ? "," : "";
      absl::StrAppend(&sc, comma, plugins[p], ":\"", n.raw[p], "\"");
      absl::StrAppend(&fs, comma, plugins[p], ":\"", weighted, "\"");
    }
    sc += "}";
    fs += "}";
    add(n.node, passed_all, sc, fs);
  }
  std::string f;
  for (const Explanation::Rejection& r : e.rejections) {
    // The plugins before the one that rejected the node passed it; the
    // later ones did not run (as upstream's RunFilterPlugins stops).
    f = "{";
    for (const std::string& p : e.filter_plugins) {
      if (p == r.plugin) break;
      absl::StrAppend(&f, f.size() > 1 ? "," : "", Quote(p), ":\"", kPassed,
                      "\"");
    }
    absl::StrAppend(&f, f.size() > 1 ? "," : "",
                    Quote(r.plugin.empty() ? "PreFilter" : r.plugin), ":",
                    Quote(r.message), "}");
    add(r.node, f, "", "");
  }
  filter += "}";
  score += "}";
  final_score += "}";
  nlohmann::json a = {{kFilterResult, std::move(filter)},
                      {kScoreResult, std::move(score)},
                      {kFinalScoreResult, std::move(final_score)},
                      {kSelectedNode, e.node}};
  if (recorded < all) {
    a[kTruncated] = absl::StrCat("recorded ", recorded, " of ", all,
                                 " nodes (a pod's annotations are limited "
                                 "to 256 KiB)");
  }
  return a;
}

void DecisionLog::Add(std::shared_ptr<const Explanation> e) {
  if (capacity_ == 0) return;
  std::string key = Key(e->namespace_, e->name);
  absl::MutexLock lock(&mu_);
  if (auto it = by_pod_.find(key); it != by_pod_.end()) {
    order_.erase(it->second);
    by_pod_.erase(it);
  }
  order_.push_front(std::move(e));
  by_pod_.emplace(std::move(key), order_.begin());
  while (order_.size() > capacity_) {
    const Explanation& last = *order_.back();
    by_pod_.erase(Key(last.namespace_, last.name));
    order_.pop_back();
  }
}

std::shared_ptr<const Explanation> DecisionLog::Find(
    absl::string_view namespace_, absl::string_view name) const {
  absl::MutexLock lock(&mu_);
  auto it = by_pod_.find(Key(namespace_, name));
  return it == by_pod_.end() ? nullptr : *it->second;
}

size_t DecisionLog::size() const {
  absl::MutexLock lock(&mu_);
  return order_.size();
}

}  // namespace kscore::scheduler
