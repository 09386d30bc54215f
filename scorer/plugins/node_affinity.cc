#include "scorer/plugins/node_affinity.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "model/selectors.h"
#include "model/validation.h"
#include "scorer/framework/normalize.h"

namespace kscore::plugins {

using framework::CycleState;
using framework::PluginStatus;
namespace pb = framework::pb;

namespace {

constexpr absl::string_view kNodeNameField = "metadata.name";

using model::IsEmptyTerm;
using model::MatchesNodeSelector;

std::string CheckTerm(const pb::NodeSelectorTerm& term) {
  return model::CheckNodeSelectorTerm(term);
}

bool TermMatches(const pb::NodeSelectorTerm& term, const pb::Node& node) {
  return model::NodeSelectorTermMatches(term, node);
}

// Whether a preferred term counts: kube-scheduler drops zero weights and
// empty terms.
bool Counts(const pb::PreferredSchedulingTerm& t) {
  return t.weight() != 0 && !IsEmptyTerm(t.preference());
}

bool HasRequired(const pb::Pod& pod) {
  return model::HasRequiredNodeAffinity(pod);
}

}  // namespace

std::string NodeAffinity::PreFilterState::Encode() const {
  std::vector<absl::string_view> names(node_names.begin(), node_names.end());
  std::sort(names.begin(), names.end());
  std::string out = valid_terms + (restricted ? "\nR" : "\nA");
  for (absl::string_view n : names) absl::StrAppend(&out, "\n", n);
  return out;
}

absl::StatusOr<NodeAffinity::PreFilterState>
NodeAffinity::PreFilterState::Decode(absl::string_view bytes) {
  std::vector<absl::string_view> parts;
  for (size_t start = 0;;) {
    size_t end = bytes.find('\n', start);
    parts.push_back(bytes.substr(start, end - start));
    if (end == absl::string_view::npos) break;
    start = end + 1;
  }
  if (parts.size() < 2 || (parts[1] != "R" && parts[1] != "A") ||
      parts[0].find_first_not_of("01") != absl::string_view::npos) {
    return absl::InvalidArgumentError("malformed NodeAffinity PreFilter state");
  }
  PreFilterState s;
  s.valid_terms = std::string(parts[0]);
  s.restricted = parts[1] == "R";
  for (size_t i = 2; i < parts.size(); ++i) s.node_names.emplace(parts[i]);
  return s;
}

NodeAffinity::PreFilterState NodeAffinity::Prepare(const pb::Pod& pod) {
  PreFilterState s;
  const auto& terms = pod.node_affinity().required();
  s.valid_terms.reserve(terms.size());
  for (const pb::NodeSelectorTerm& t : terms) {
    s.valid_terms.push_back(CheckTerm(t).empty() ? '1' : '0');
  }
  // Terms are ORed: the pod is pinned to named nodes only if every term
  // carries a metadata.name In requirement; within a term they intersect.
  if (terms.empty()) return s;
  absl::flat_hash_set<std::string> names;
  for (const pb::NodeSelectorTerm& t : terms) {
    bool pinned = false;
    absl::flat_hash_set<std::string> term_names;
    for (const pb::NodeSelectorRequirement& r : t.match_fields()) {
      if (r.key() != kNodeNameField || r.operator_() != "In") continue;
      absl::flat_hash_set<std::string> values(r.values().begin(),
                                              r.values().end());
      if (!pinned) {
        term_names = std::move(values);
        pinned = true;
      } else {
        absl::erase_if(term_names, [&values](const std::string& n) {
          return !values.contains(n);
        });
      }
    }
    if (!pinned) return s;
    names.insert(term_names.begin(), term_names.end());
  }
  s.restricted = true;
  s.node_names = std::move(names);
  return s;
}

PluginStatus NodeAffinity::PreFilter(CycleState& state,
                                     const pb::Pod& pod) const {
  if (!HasRequired(pod) && pod.node_selector().empty() && !HasAddedRequired()) {
    return PluginStatus::Skip();
  }
  PreFilterState s = Prepare(pod);
  const bool conflict = s.restricted && s.node_names.empty();
  state.Write(kPreFilterStateKey, std::move(s));
  if (conflict) {
    return PluginStatus::UnschedulableAndUnresolvable(
        std::string(kReasonConflict));
  }
  return PluginStatus::Success();
}

std::optional<std::vector<std::string>> NodeAffinity::PreFilterNodeNames(
    const CycleState& state, const pb::Pod& /*pod*/) const {
  absl::StatusOr<const PreFilterState*> s =
      state.Read<PreFilterState>(kPreFilterStateKey);
  if (!s.ok() || !(*s)->restricted) return std::nullopt;
  return std::vector<std::string>((*s)->node_names.begin(),
                                  (*s)->node_names.end());
}

PluginStatus NodeAffinity::Filter(const CycleState& state, const pb::Pod& pod,
                                  const pb::Node& node) const {
  const PreFilterState* s = nullptr;
  PreFilterState computed;
  absl::StatusOr<const PreFilterState*> read =
      state.Read<PreFilterState>(kPreFilterStateKey);
  if (read.ok()) {
    s = *read;
  } else if (absl::IsNotFound(read.status())) {
    // PreFilter did not run (e.g. a bare Filter call): work it out here.
    computed = Prepare(pod);
    s = &computed;
  } else {
    return PluginStatus::Error(std::string(read.status().message()));
  }
  const auto& terms = pod.node_affinity().required();
  if (s->valid_terms.size() != static_cast<size_t>(terms.size())) {
    return PluginStatus::Error(
        absl::StrCat("cycle_state[\"", kPreFilterStateKey, "\"] has ",
                     s->valid_terms.size(), " terms, the pod ", terms.size()));
  }
  if (s->restricted && !s->node_names.contains(node.name())) {
    return PluginStatus::UnschedulableAndUnresolvable(
        std::string(kReasonNotInPreFilterResult));
  }
  if (!MatchesAdded(node)) {
    return PluginStatus::UnschedulableAndUnresolvable(
        std::string(kReasonEnforced));
  }
  if (MatchPod(*s, pod, node) != PodMatch::kMatch) {
    return PluginStatus::UnschedulableAndUnresolvable(std::string(kReasonPod));
  }
  return PluginStatus::Success();
}

bool NodeAffinity::MatchesAdded(const pb::Node& node) const {
  if (!HasAddedRequired()) return true;
  // Checked when parsed: every non-empty term is well formed.
  for (const pb::NodeSelectorTerm& t : args_.added_affinity.required()) {
    if (!IsEmptyTerm(t) && TermMatches(t, node)) return true;
  }
  return false;
}

NodeAffinity::PodMatch NodeAffinity::MatchPod(const PreFilterState& s,
                                              const pb::Pod& pod,
                                              const pb::Node& node) {
  if (!MatchesNodeSelector(pod, node)) return PodMatch::kNoMatch;
  if (!HasRequired(pod)) return PodMatch::kMatch;
  const auto& terms = pod.node_affinity().required();
  bool malformed = false;
  for (int i = 0; i < terms.size(); ++i) {
    if (s.valid_terms[i] == '1') {
      if (TermMatches(terms[i], node)) return PodMatch::kMatch;
    } else if (!IsEmptyTerm(terms[i])) {
      malformed = true;
    }
  }
  return malformed ? PodMatch::kMalformed : PodMatch::kNoMatch;
}

model::QueueingHint NodeAffinity::Hint(const pb::Pod& pod,
                                       const model::EventObjects& e) const {
  using model::QueueingHint;
  if (e.new_node == nullptr) return QueueingHint::kQueue;
  if (!MatchesAdded(*e.new_node)) return QueueingHint::kQueueSkip;
  const PreFilterState s = Prepare(pod);
  switch (MatchPod(s, pod, *e.new_node)) {
    case PodMatch::kMalformed:  // upstream's error: Queue
      return QueueingHint::kQueue;
    case PodMatch::kNoMatch:
      return QueueingHint::kQueueSkip;
    case PodMatch::kMatch:
      break;
  }
  if (e.old_node == nullptr) return QueueingHint::kQueue;
  // An update queues only when the pod's own terms went from unmatched to
  // matched (addedAffinity is not consulted for the node before).
  return MatchPod(s, pod, *e.old_node) == PodMatch::kMatch
             ? QueueingHint::kQueueSkip
             : QueueingHint::kQueue;
}

namespace {

// Preferred terms that count: non-zero weight and non-empty. "" if all of
// them are well formed, otherwise what is wrong with the first bad one.
std::string CheckPreferred(const pb::Pod& pod) {
  const auto& preferred = pod.node_affinity().preferred();
  for (int i = 0; i < preferred.size(); ++i) {
    if (!Counts(preferred[i])) continue;
    if (std::string why = CheckTerm(preferred[i].preference()); !why.empty()) {
      return absl::StrCat("preferredDuringSchedulingIgnoredDuringExecution[", i,
                          "].preference.", why);
    }
  }
  return "";
}

}  // namespace

PluginStatus NodeAffinity::PreScore(
    CycleState& /*state*/, const pb::Pod& pod,
    absl::Span<const pb::Node* const> /*nodes*/) const {
  if (pod.node_affinity().preferred().empty() &&
      args_.added_affinity.preferred().empty()) {
    return PluginStatus::Skip();
  }
  if (std::string why = CheckPreferred(pod); !why.empty()) {
    return PluginStatus::Error(why);
  }
  return PluginStatus::Success();
}

PluginStatus NodeAffinity::Score(const CycleState& /*state*/,
                                 const pb::Pod& pod,
                                 absl::Span<const pb::Node* const> nodes,
                                 absl::Span<int64_t> scores) const {
  if (std::string why = CheckPreferred(pod); !why.empty()) {
    return PluginStatus::Error(why);
  }
  const auto& preferred = pod.node_affinity().preferred();
  for (size_t i = 0; i < nodes.size(); ++i) {
    int64_t sum = 0;
    for (const auto* terms : {&args_.added_affinity.preferred(), &preferred}) {
      for (const pb::PreferredSchedulingTerm& t : *terms) {
        if (Counts(t) && TermMatches(t.preference(), *nodes[i])) {
          sum += t.weight();
        }
      }
    }
    scores[i] = sum;
  }
  return PluginStatus::Success();
}

PluginStatus NodeAffinity::NormalizeScore(const CycleState& /*state*/,
                                          const pb::Pod& /*pod*/,
                                          absl::Span<int64_t> scores) const {
  framework::DefaultNormalizeScore(model::kMaxNodeScore, /*reverse=*/false,
                                   scores);
  return PluginStatus::Success();
}

absl::StatusOr<NodeAffinity::Args> NodeAffinity::ParseArgs(
    const model::YamlField& args) {
  return model::DecodeNodeAffinityArgs(args);
}

absl::StatusOr<std::unique_ptr<framework::Plugin>> NodeAffinity::New(
    const model::YamlField& args) {
  KSCORE_ASSIGN_OR_RETURN(Args a, ParseArgs(args));
  return std::make_unique<NodeAffinity>(std::move(a));
}

}  // namespace kscore::plugins
