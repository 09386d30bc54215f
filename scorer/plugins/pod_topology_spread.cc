#include "scorer/plugins/pod_topology_spread.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "model/saturating.h"
#include "model/selectors.h"
#include "model/validation.h"
#include "scorer/framework/go_math.h"

namespace kscore::plugins {

using framework::CycleState;
using framework::PluginStatus;
using model::YamlField;
namespace pb = framework::pb;

namespace {

constexpr absl::string_view kHostnameKey = "kubernetes.io/hostname";
constexpr absl::string_view kZoneKey = "topology.kubernetes.io/zone";
using model::kDoNotSchedule;
using model::kScheduleAnyway;
constexpr absl::string_view kHonor = "Honor";

// The contract's empty whenUnsatisfiable is DoNotSchedule (the API server
// requires one, so a real pod always says).
absl::string_view WhenUnsatisfiable(const pb::TopologySpreadConstraint& c) {
  return c.when_unsatisfiable().empty() ? kDoNotSchedule
                                        : c.when_unsatisfiable();
}

pb::TopologySpreadConstraint SystemDefault(absl::string_view key,
                                           int32_t max_skew) {
  pb::TopologySpreadConstraint c;
  c.set_topology_key(std::string(key));
  c.set_max_skew(max_skew);
  c.set_when_unsatisfiable(std::string(kScheduleAnyway));
  return c;
}

// filterTopologySpreadConstraints' conversion of one constraint, without its
// selector. Unset policies are Honor for node affinity and Ignore for
// taints; anything but "Honor" ignores.
PodTopologySpread::Constraint FromSpec(const pb::TopologySpreadConstraint& c) {
  PodTopologySpread::Constraint out;
  out.max_skew = c.max_skew();
  out.topology_key = c.topology_key();
  out.min_domains = c.has_min_domains() ? c.min_domains() : 1;
  out.honor_node_affinity =
      c.node_affinity_policy().empty() || c.node_affinity_policy() == kHonor;
  out.honor_node_taints = c.node_taints_policy() == kHonor;
  return out;
}

// Appends `from`'s requirements to `to` (ANDed); match_labels become In
// requirements so that equal keys with other values still conflict.
void AddRequirements(const pb::LabelSelector& from, pb::LabelSelector& to) {
  std::vector<std::pair<std::string, std::string>> labels(
      from.match_labels().begin(), from.match_labels().end());
  std::sort(labels.begin(), labels.end());
  for (const auto& [k, v] : labels) {
    pb::LabelSelectorRequirement* r = to.add_match_expressions();
    r->set_key(k);
    r->set_operator_("In");
    r->add_values(v);
  }
  for (const pb::LabelSelectorRequirement& r : from.match_expressions()) {
    *to.add_match_expressions() = r;
  }
}

// The distinct topology keys of the constraints, in order.
std::vector<std::string> Keys(
    const std::vector<PodTopologySpread::Constraint>& cs) {
  std::vector<std::string> keys;
  for (const auto& c : cs) {
    if (std::find(keys.begin(), keys.end(), c.topology_key) == keys.end()) {
      keys.push_back(c.topology_key);
    }
  }
  return keys;
}

bool HasAllKeys(const pb::Node& node, const std::vector<std::string>& keys) {
  return std::all_of(keys.begin(), keys.end(), [&](const std::string& k) {
    return node.labels().contains(k);
  });
}

// A query counting the pods the constraint selects in the pod's namespace,
// not being deleted, on the nodes it spreads over.
pb::PodQuery Query(const PodTopologySpread::Constraint& c, const pb::Pod& pod,
                   std::string topology_key,
                   const std::vector<std::string>& required_keys,
                   bool want_domains) {
  pb::PodQuery q;
  if (c.Counts()) {
    pb::PodMatcher* m = q.add_all_of();
    m->add_namespaces(pod.namespace_());
    *m->mutable_selector() = c.selector;
  }
  q.set_topology_key(std::move(topology_key));
  if (!q.topology_key().empty()) {
    pb::NodeFilter* f = q.mutable_nodes();
    for (const std::string& k : required_keys) f->add_required_keys(k);
    f->set_pod_node_affinity(c.honor_node_affinity);
    f->set_pod_taints(c.honor_node_taints);
  }
  q.set_want_domains(want_domains);
  return q;
}

// How many queries the DoNotSchedule constraints take in the plan: the
// ScheduleAnyway ones come after them.
int NumHardQueries(const PodTopologySpread& pl, const pb::Pod& pod) {
  auto hard = pl.Constraints(pod, /*do_not_schedule=*/true);
  return hard.ok() ? static_cast<int>(hard->size()) : 0;
}

// A topology key or a node name never holds a space or a newline (the API
// server validates them), so the states are lines of space-separated
// fields.
std::vector<absl::string_view> Lines(absl::string_view bytes) {
  if (bytes.empty()) return {};
  return absl::StrSplit(bytes, '\n');
}

absl::Status Malformed(absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("malformed PodTopologySpread ", what, " state"));
}

}  // namespace

bool PodTopologySpread::Constraint::Counts() const {
  return has_selector && !model::IsEmptySelector(selector);
}

bool PodTopologySpread::Constraint::Matches(
    const model::LabelMap& labels) const {
  return has_selector && model::LabelSelectorMatches(selector, labels);
}

pb::LabelSelector DefaultSelector(const pb::WorkloadSelectors& workloads) {
  // Services (and a ReplicationController) contribute label sets, merged
  // with later values winning; a ReplicaSet's or StatefulSet's selector
  // adds its requirements.
  std::map<std::string, std::string> set;
  for (const pb::LabelSelector& s : workloads.services()) {
    for (const auto& [k, v] : s.match_labels()) set[k] = v;
  }
  const std::string& kind = workloads.controller_kind();
  if (kind == "ReplicationController") {
    for (const auto& [k, v] : workloads.controller().match_labels()) {
      set[k] = v;
    }
  }
  pb::LabelSelector out;
  for (const auto& [k, v] : set) (*out.mutable_match_labels())[k] = v;
  if ((kind == "ReplicaSet" || kind == "StatefulSet") &&
      workloads.has_controller() &&
      model::CheckLabelSelector(workloads.controller()).empty()) {
    AddRequirements(workloads.controller(), out);
  }
  return out;
}

PodTopologySpread::PodTopologySpread(Args args) : args_(std::move(args)) {
  if (args_.system_defaulting) {
    defaults_ = {SystemDefault(kHostnameKey, 3), SystemDefault(kZoneKey, 5)};
  } else {
    defaults_ = args_.default_constraints;
  }
}

std::vector<pb::PodData> PodTopologySpread::PodDataNeeded() const {
  if (defaults_.empty()) return {};
  return {pb::POD_DATA_WORKLOAD_SELECTORS};
}

absl::StatusOr<std::vector<PodTopologySpread::Constraint>>
PodTopologySpread::Constraints(const pb::Pod& pod, bool do_not_schedule) const {
  const absl::string_view action =
      do_not_schedule ? kDoNotSchedule : kScheduleAnyway;
  std::vector<Constraint> out;
  if (pod.topology_spread_constraints_size() > 0) {
    for (int i = 0; i < pod.topology_spread_constraints_size(); ++i) {
      const pb::TopologySpreadConstraint& c =
          pod.topology_spread_constraints(i);
      if (WhenUnsatisfiable(c) != action) continue;
      Constraint k = FromSpec(c);
      k.has_selector = c.has_label_selector();
      if (k.has_selector) {
        if (std::string why = model::CheckLabelSelector(c.label_selector());
            !why.empty()) {
          return absl::InvalidArgumentError(absl::StrCat(
              "obtaining pod's ", do_not_schedule ? "hard" : "soft",
              " topology spread constraints: topologySpreadConstraints[", i,
              "].labelSelector.", why));
        }
        // matchLabelKeys: the pod's own values of those keys join the
        // selector (MatchLabelKeysInPodTopologySpread is on by default).
        pb::LabelSelector own;
        for (const std::string& key : c.match_label_keys()) {
          auto it = pod.labels().find(key);
          if (it != pod.labels().end()) {
            (*own.mutable_match_labels())[key] = it->second;
          }
        }
        k.selector = c.label_selector();
        AddRequirements(own, k.selector);
      }
      out.push_back(std::move(k));
    }
    return out;
  }
  for (const pb::TopologySpreadConstraint& c : defaults_) {
    if (WhenUnsatisfiable(c) == action) out.push_back(FromSpec(c));
  }
  if (out.empty()) return out;
  pb::LabelSelector selector = DefaultSelector(pod.workload_selectors());
  // A pod of no Service or controller gets no default constraint.
  if (model::IsEmptySelector(selector)) return std::vector<Constraint>();
  for (Constraint& c : out) {
    c.has_selector = true;
    c.selector = selector;
  }
  return out;
}

void PodTopologySpread::AddToPlan(const pb::Pod& pod,
                                  pb::PlanResponse& plan) const {
  absl::StatusOr<std::vector<Constraint>> hard = Constraints(pod, true);
  if (hard.ok()) {
    // A node counts only if it has every constraint's key.
    const std::vector<std::string> keys = Keys(*hard);
    for (const Constraint& c : *hard) {
      *plan.add_queries() = Query(c, pod, c.topology_key, keys, true);
    }
  }
  absl::StatusOr<std::vector<Constraint>> soft = Constraints(pod, false);
  if (!soft.ok() || soft->empty()) return;
  // System defaults spread over the nodes that have the key at hand; other
  // constraints over the nodes that have all keys. (With system defaults,
  // kube-scheduler also puts the pods of nodes without the key in a ""
  // domain; only a node whose label is set to "" would read it, and the
  // shim counts only labelled nodes: that one case differs.)
  const bool require_all =
      pod.topology_spread_constraints_size() > 0 || !args_.system_defaulting;
  const std::vector<std::string> keys =
      require_all ? Keys(*soft) : std::vector<std::string>();
  for (const Constraint& c : *soft) {
    // Per node for the hostname key: each node is its own domain.
    *plan.add_queries() =
        Query(c, pod, c.topology_key == kHostnameKey ? "" : c.topology_key,
              keys, false);
  }
  plan.set_score_needs_all_feasible(true);
}

namespace {

// What a string or message field costs in a plan at most beside its bytes:
// its tag and length, rounded up generously.
constexpr int64_t kFieldBytes = 16;

int64_t FieldBytes(size_t n) {
  return model::SatAdd(static_cast<int64_t>(n), kFieldBytes);
}

// The bytes matchLabelKeys adds to a constraint's selector: the pod's own
// key and value for each key it has (an In requirement each).
int64_t OwnLabelBytes(const pb::TopologySpreadConstraint& c,
                      const pb::Pod& pod) {
  int64_t bytes = 0;
  for (const std::string& key : c.match_label_keys()) {
    auto it = pod.labels().find(key);
    if (it == pod.labels().end()) continue;
    bytes = model::SatAdd(bytes, FieldBytes(key.size()) +
                                     FieldBytes(it->second.size()) +
                                     4 * kFieldBytes);
  }
  return bytes;
}

}  // namespace

PodTopologySpread::PlanSize PodTopologySpread::PlanBytes(
    const pb::Pod& pod) const {
  const int64_t query = FieldBytes(pod.namespace_().size()) + 8 * kFieldBytes;
  // Per kind (DoNotSchedule, the others): constraints, and their keys.
  int64_t count[2] = {0, 0};
  int64_t keys[2] = {0, 0};
  int64_t bytes = 0;
  if (pod.topology_spread_constraints_size() > 0) {
    for (const pb::TopologySpreadConstraint& c :
         pod.topology_spread_constraints()) {
      const int kind = WhenUnsatisfiable(c) == kDoNotSchedule ? 0 : 1;
      ++count[kind];
      keys[kind] =
          model::SatAdd(keys[kind], FieldBytes(c.topology_key().size()));
      bytes = model::SatAdd(
          bytes, query + FieldBytes(c.topology_key().size()) +
                     static_cast<int64_t>(c.label_selector().ByteSizeLong()) +
                     OwnLabelBytes(c, pod));
    }
  } else {
    // Each default constraint's selector is made of the workload
    // selectors: at most their bytes again for the In requirements that
    // match_labels become.
    const int64_t selector =
        3 * static_cast<int64_t>(pod.workload_selectors().ByteSizeLong());
    for (const pb::TopologySpreadConstraint& c : defaults_) {
      const int kind = WhenUnsatisfiable(c) == kDoNotSchedule ? 0 : 1;
      ++count[kind];
      keys[kind] =
          model::SatAdd(keys[kind], FieldBytes(c.topology_key().size()));
      bytes = model::SatAdd(
          bytes, query + FieldBytes(c.topology_key().size()) + selector);
    }
  }
  // Every query lists the keys of its kind.
  for (int kind = 0; kind < 2; ++kind) {
    bytes = model::SatAdd(bytes, model::SatMul(count[kind], keys[kind]));
  }
  return {bytes, pod.topology_spread_constraints_size() > 0
                     ? "pod.topology_spread_constraints"
                     : "pod.workload_selectors"};
}

// ------------------------------------------------------------ filtering

std::string PodTopologySpread::PreFilterState::Encode() const {
  std::string out;
  for (const Item& c : constraints) {
    absl::StrAppend(&out, out.empty() ? "" : "\n", c.max_skew, " ", c.min_match,
                    " ", c.self_match ? 1 : 0, " ", c.topology_key);
  }
  return out;
}

absl::StatusOr<PodTopologySpread::PreFilterState>
PodTopologySpread::PreFilterState::Decode(absl::string_view bytes) {
  PreFilterState s;
  for (absl::string_view line : Lines(bytes)) {
    std::vector<absl::string_view> f = absl::StrSplit(line, ' ');
    Item c;
    int self = 0;
    if (f.size() != 4 || !absl::SimpleAtoi(f[0], &c.max_skew) ||
        c.max_skew < 1 || !absl::SimpleAtoi(f[1], &c.min_match) ||
        !absl::SimpleAtoi(f[2], &self) || (self != 0 && self != 1)) {
      return Malformed("PreFilter");
    }
    c.self_match = self == 1;
    c.topology_key = std::string(f[3]);
    s.constraints.push_back(std::move(c));
  }
  return s;
}

PluginStatus PodTopologySpread::PreFilter(CycleState& state,
                                          const pb::Pod& pod) const {
  absl::StatusOr<std::vector<Constraint>> hard = Constraints(pod, true);
  if (!hard.ok()) {
    return PluginStatus::Error(
        absl::StrCat("get constraints from pod: ", hard.status().message()));
  }
  if (hard->empty()) return PluginStatus::Skip();
  const int base = state.QueryBase(kName);
  const pb::ClusterData& cluster = state.cluster();
  if (base < 0 ||
      base + static_cast<int>(hard->size()) > cluster.answers_size()) {
    return PluginStatus::Error(
        "the cluster's answers to the pod's plan are missing (ask Plan and "
        "send its answers in cluster)");
  }
  PreFilterState s;
  for (size_t i = 0; i < hard->size(); ++i) {
    const Constraint& c = (*hard)[i];
    const pb::QueryAnswer& a = cluster.answers(base + static_cast<int>(i));
    PreFilterState::Item item;
    item.max_skew = c.max_skew;
    item.topology_key = c.topology_key;
    item.self_match = c.Matches(pod.labels());
    // Fewer domains than minDomains: the global minimum is 0. No domain at
    // all leaves kube-scheduler's critical path at MaxInt32.
    if (a.domains() < c.min_domains) {
      item.min_match = 0;
    } else if (a.domains() == 0) {
      item.min_match = std::numeric_limits<int32_t>::max();
    } else {
      item.min_match = a.min_count();
    }
    s.constraints.push_back(std::move(item));
  }
  state.Write(kPreFilterStateKey, std::move(s));
  return PluginStatus::Success();
}

PluginStatus PodTopologySpread::Filter(const CycleState& state,
                                       const pb::Pod& /*pod*/,
                                       const pb::Node& node) const {
  absl::StatusOr<const PreFilterState*> read =
      state.Read<PreFilterState>(kPreFilterStateKey);
  if (!read.ok()) {
    return PluginStatus::Error(std::string(read.status().message()));
  }
  const PreFilterState& s = **read;
  if (s.constraints.empty()) return PluginStatus::Success();
  const int base = state.QueryBase(kName);
  if (base < 0 || node.query_counts_size() <
                      base + static_cast<int>(s.constraints.size())) {
    return PluginStatus::Error(absl::StrCat(
        "node \"", node.name(), "\" carries no answer to the pod's plan"));
  }
  for (size_t i = 0; i < s.constraints.size(); ++i) {
    const PreFilterState::Item& c = s.constraints[i];
    if (!node.labels().contains(c.topology_key)) {
      return PluginStatus::UnschedulableAndUnresolvable(
          std::string(kReasonNodeLabelNotMatch));
    }
    // existing matching pods in the node's domain + the pod itself if it
    // matches - the global minimum must not exceed maxSkew.
    const int64_t matching = node.query_counts(base + static_cast<int>(i));
    const int64_t skew = model::SatSub(
        model::SatAdd(matching, c.self_match ? 1 : 0), c.min_match);
    if (skew > c.max_skew) {
      return PluginStatus::Unschedulable(
          std::string(kReasonConstraintsNotMatch));
    }
  }
  return PluginStatus::Success();
}

// ------------------------------------------------------------ scoring

std::string PodTopologySpread::PreScoreState::Encode() const {
  std::string out = absl::StrCat(constraints.size());
  for (const Item& c : constraints) {
    absl::StrAppend(&out, "\n", c.max_skew, " ",
                    absl::Hex(std::bit_cast<uint64_t>(c.weight)), " ",
                    c.topology_key);
  }
  // Sorted: the same state encodes to the same bytes.
  std::vector<absl::string_view> names(ignored.begin(), ignored.end());
  std::sort(names.begin(), names.end());
  for (absl::string_view n : names) absl::StrAppend(&out, "\n", n);
  return out;
}

absl::StatusOr<PodTopologySpread::PreScoreState>
PodTopologySpread::PreScoreState::Decode(absl::string_view bytes) {
  std::vector<absl::string_view> lines = Lines(bytes);
  size_t n = 0;
  if (lines.empty() || !absl::SimpleAtoi(lines[0], &n) ||
      lines.size() < n + 1) {
    return Malformed("PreScore");
  }
  PreScoreState s;
  for (size_t i = 1; i <= n; ++i) {
    std::vector<absl::string_view> f = absl::StrSplit(lines[i], ' ');
    Item c;
    uint64_t bits = 0;
    if (f.size() != 3 || !absl::SimpleAtoi(f[0], &c.max_skew) ||
        c.max_skew < 1 || !absl::SimpleHexAtoi(f[1], &bits)) {
      return Malformed("PreScore");
    }
    c.weight = std::bit_cast<double>(bits);
    c.topology_key = std::string(f[2]);
    s.constraints.push_back(std::move(c));
  }
  for (size_t i = n + 1; i < lines.size(); ++i) s.ignored.emplace(lines[i]);
  return s;
}

PluginStatus PodTopologySpread::PreScore(
    CycleState& state, const pb::Pod& pod,
    absl::Span<const pb::Node* const> nodes) const {
  absl::StatusOr<std::vector<Constraint>> soft = Constraints(pod, false);
  if (!soft.ok()) {
    return PluginStatus::Error(
        absl::StrCat("calculating preScoreState: ", soft.status().message()));
  }
  if (soft->empty()) return PluginStatus::Skip();
  // Only the system defaults let a node without every key be scored (by
  // the keys it has): nodes without a zone still spread by hostname.
  const bool require_all =
      pod.topology_spread_constraints_size() > 0 || !args_.system_defaulting;
  const std::vector<std::string> keys = Keys(*soft);
  PreScoreState s;
  // The domains of the scored nodes, per constraint (a node without the key
  // is in the "" domain).
  std::vector<absl::flat_hash_set<std::string>> domains(soft->size());
  for (const pb::Node* node : nodes) {
    if (require_all && !HasAllKeys(*node, keys)) {
      s.ignored.insert(node->name());
      continue;
    }
    for (size_t i = 0; i < soft->size(); ++i) {
      const std::string& key = (*soft)[i].topology_key;
      if (key == kHostnameKey) continue;
      auto it = node->labels().find(key);
      domains[i].insert(it == node->labels().end() ? "" : it->second);
    }
  }
  for (size_t i = 0; i < soft->size(); ++i) {
    const Constraint& c = (*soft)[i];
    const size_t size = c.topology_key == kHostnameKey
                            ? nodes.size() - s.ignored.size()
                            : domains[i].size();
    // Smaller topologies weigh their counts less: log(size + 2).
    s.constraints.push_back(PreScoreState::Item{
        c.max_skew, framework::GoLog(static_cast<double>(size + 2)),
        c.topology_key});
  }
  state.Write(kPreScoreStateKey, std::move(s));
  return PluginStatus::Success();
}

PluginStatus PodTopologySpread::Score(const CycleState& state,
                                      const pb::Pod& pod,
                                      absl::Span<const pb::Node* const> nodes,
                                      absl::Span<int64_t> scores) const {
  absl::StatusOr<const PreScoreState*> read =
      state.Read<PreScoreState>(kPreScoreStateKey);
  if (!read.ok()) {
    return PluginStatus::Error(std::string(read.status().message()));
  }
  const PreScoreState& s = **read;
  const int base = state.QueryBase(kName);
  const int first = base + NumHardQueries(*this, pod);
  const int end = first + static_cast<int>(s.constraints.size());
  for (size_t n = 0; n < nodes.size(); ++n) {
    const pb::Node& node = *nodes[n];
    if (s.ignored.contains(node.name())) {
      scores[n] = 0;
      continue;
    }
    if (base < 0 || node.query_counts_size() < end) {
      return PluginStatus::Error(absl::StrCat(
          "node \"", node.name(), "\" carries no answer to the pod's plan"));
    }
    // Each constraint the node has the key of credits its domain's count,
    // weighted, plus maxSkew - 1 to water down small differences.
    double score = 0;
    for (size_t i = 0; i < s.constraints.size(); ++i) {
      const PreScoreState::Item& c = s.constraints[i];
      if (!node.labels().contains(c.topology_key)) continue;
      const int64_t count = node.query_counts(first + static_cast<int>(i));
      score += static_cast<double>(count) * c.weight +
               static_cast<double>(c.max_skew - 1);
    }
    // Counts near the int64 limit make a score no int64 holds: clamped,
    // where a plain conversion would be undefined.
    scores[n] = model::SatFromDouble(std::round(score));
  }
  return PluginStatus::Success();
}

PluginStatus PodTopologySpread::NormalizeScoreByNode(
    const CycleState& state, const pb::Pod& /*pod*/,
    absl::Span<const absl::string_view> nodes,
    absl::Span<int64_t> scores) const {
  absl::StatusOr<const PreScoreState*> read =
      state.Read<PreScoreState>(kPreScoreStateKey);
  if (!read.ok()) {
    return PluginStatus::Error(std::string(read.status().message()));
  }
  const PreScoreState& s = **read;
  if (!s.ignored.empty() && nodes.size() != scores.size()) {
    return PluginStatus::Error(
        "PreScore ignored nodes missing a topology key: normalising needs "
        "the node names (send scores, not raw)");
  }
  auto ignored = [&](size_t i) {
    return !s.ignored.empty() && s.ignored.contains(nodes[i]);
  };
  int64_t min = std::numeric_limits<int64_t>::max();
  int64_t max = 0;
  for (size_t i = 0; i < scores.size(); ++i) {
    if (ignored(i)) continue;
    min = std::min(min, scores[i]);
    max = std::max(max, scores[i]);
  }
  for (size_t i = 0; i < scores.size(); ++i) {
    if (ignored(i)) {
      scores[i] = 0;
    } else if (max == 0) {
      scores[i] = model::kMaxNodeScore;
    } else {
      // max + min - score, which stays within [min, max] as the scores
      // are not negative; the product in 128 bits.
      scores[i] =
          model::MulDiv(model::kMaxNodeScore,
                        model::SatAdd(model::SatSub(max, scores[i]), min), max);
    }
  }
  return PluginStatus::Success();
}

// ------------------------------------------------------------ args

absl::StatusOr<PodTopologySpread::Args> PodTopologySpread::ParseArgs(
    const model::YamlField& args) {
  return model::DecodePodTopologySpreadArgs(args);
}

absl::StatusOr<std::unique_ptr<framework::Plugin>> PodTopologySpread::New(
    const YamlField& args) {
  KSCORE_ASSIGN_OR_RETURN(Args a, ParseArgs(args));
  return std::make_unique<PodTopologySpread>(std::move(a));
}

}  // namespace kscore::plugins
