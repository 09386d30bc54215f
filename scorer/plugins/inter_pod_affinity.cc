#include "scorer/plugins/inter_pod_affinity.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "model/saturating.h"
#include "model/selectors.h"

namespace kscore::plugins {

using framework::CycleState;
using framework::PluginStatus;
namespace pb = framework::pb;

namespace {

// Where the plugin's queries for a pod sit, from its first one
// (CycleState::QueryBase): one per term, kind after kind.
struct Layout {
  int affinity = 0;        // required affinity terms
  int anti = 0;            // required anti-affinity terms
  int preferred = 0;       // preferred affinity terms
  int preferred_anti = 0;  // preferred anti-affinity terms

  explicit Layout(const pb::Pod& pod)
      : affinity(pod.pod_affinity().required_size()),
        anti(pod.pod_anti_affinity().required_size()),
        preferred(pod.pod_affinity().preferred_size()),
        preferred_anti(pod.pod_anti_affinity().preferred_size()) {}
  int AntiAt(int i) const { return affinity + i; }
  int PreferredAt(int i) const { return affinity + anti + i; }
  int PreferredAntiAt(int i) const { return affinity + anti + preferred + i; }
  int size() const { return affinity + anti + preferred + preferred_anti; }
};

// "" if the term's selectors are well formed (metav1.LabelSelectorAsSelector
// accepts them; unset ones are fine), otherwise what is wrong.
std::string CheckTerm(const pb::PodAffinityTerm& term) {
  if (term.has_label_selector()) {
    std::string why = model::CheckLabelSelector(term.label_selector());
    if (!why.empty()) return absl::StrCat("labelSelector.", why);
  }
  if (term.has_namespace_selector()) {
    std::string why = model::CheckLabelSelector(term.namespace_selector());
    if (!why.empty()) return absl::StrCat("namespaceSelector.", why);
  }
  return "";
}

// framework.NewPodInfo's errors: per list of terms (in its order) the first
// malformed one; several lists' errors aggregate as "[a, b]".
std::string CheckTerms(const pb::Pod& pod) {
  std::vector<std::string> errors;
  auto check = [&](absl::string_view list, const auto& terms, auto term_of) {
    for (const auto& t : terms) {
      if (std::string why = CheckTerm(term_of(t)); !why.empty()) {
        errors.push_back(absl::StrCat(list, ": ", why));
        return;
      }
    }
  };
  auto plain = [](const pb::PodAffinityTerm& t) -> const pb::PodAffinityTerm& {
    return t;
  };
  auto weighted =
      [](const pb::WeightedPodAffinityTerm& t) -> const pb::PodAffinityTerm& {
    return t.term();
  };
  check("requiredAffinityTerms", pod.pod_affinity().required(), plain);
  check("requiredAntiAffinityTerms", pod.pod_anti_affinity().required(), plain);
  check("preferredAffinityTerms", pod.pod_affinity().preferred(), weighted);
  check("preferredAntiAffinityTerms", pod.pod_anti_affinity().preferred(),
        weighted);
  if (errors.size() <= 1) return errors.empty() ? "" : errors.front();
  return absl::StrCat("[", absl::StrJoin(errors, ", "), "]");
}

// Whether an existing pod's term selects the incoming pod. A malformed
// selector selects nothing (kube-scheduler drops such terms of existing
// pods when it parses them).
bool ExistingTermMatches(const pb::ExistingTerm& e, const pb::Pod& pod) {
  if (!CheckTerm(e.term()).empty()) return false;
  return model::PodAffinityTermMatches(e.term(), e.namespace_(),
                                       pod.namespace_(), pod.labels(),
                                       pod.namespace_labels());
}

// podMatchesAllAffinityTerms for the pod's own required affinity terms
// (namespace selectors read against its namespace's labels, as
// kube-scheduler lists the namespaces they select).
bool MatchesOwnAffinityTerms(const pb::Pod& pod) {
  const auto& terms = pod.pod_affinity().required();
  if (terms.empty()) return false;
  return std::all_of(terms.begin(), terms.end(), [&](const auto& t) {
    return model::PodAffinityTermMatches(t, pod.namespace_(), pod.namespace_(),
                                         pod.labels(), pod.namespace_labels());
  });
}

// A query counting the pods matching all of `matchers`, by `key`'s domain.
// Without a key no node has the domain: the query then matches no pod.
void AddQuery(const std::string& key, const std::vector<pb::PodMatcher>& all_of,
              pb::PlanResponse& plan) {
  pb::PodQuery* q = plan.add_queries();
  q->set_include_terminating(true);
  if (key.empty()) return;
  q->set_topology_key(key);
  for (const pb::PodMatcher& m : all_of) *q->add_all_of() = m;
}

// The index of the plugin's first query, checked against the answers the
// cluster data carries.
absl::StatusOr<int> QueryBase(const CycleState& state, const Layout& layout) {
  const int base = state.QueryBase(InterPodAffinity::kName);
  const int answers = state.cluster().answers_size();
  if (base < 0 || base + layout.size() > answers) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the cluster data does not answer the pod's plan: ", layout.size(),
        " queries of InterPodAffinity from ", base, ", ", answers,
        " answers (ask Plan with the same pod and profile)"));
  }
  return base;
}

std::string NodeQueriesError(const pb::Node& node, int want) {
  return absl::StrCat("node \"", node.name(), "\" has ",
                      node.query_counts_size(), " query_counts, the plan ",
                      want);
}

}  // namespace

std::string InterPodAffinity::PreFilterState::Encode() const {
  std::string out = first_of_group ? "1" : "0";
  for (int32_t i : matching_existing) absl::StrAppend(&out, ",", i);
  return out;
}

absl::StatusOr<InterPodAffinity::PreFilterState>
InterPodAffinity::PreFilterState::Decode(absl::string_view bytes) {
  std::vector<absl::string_view> parts = absl::StrSplit(bytes, ',');
  PreFilterState s;
  if (parts[0] != "0" && parts[0] != "1") {
    return absl::InvalidArgumentError(
        "malformed InterPodAffinity PreFilter state");
  }
  s.first_of_group = parts[0] == "1";
  for (size_t i = 1; i < parts.size(); ++i) {
    int32_t index = 0;
    if (!absl::SimpleAtoi(parts[i], &index) || index < 0 ||
        (!s.matching_existing.empty() && index <= s.matching_existing.back())) {
      return absl::InvalidArgumentError(
          "malformed InterPodAffinity PreFilter state");
    }
    s.matching_existing.push_back(index);
  }
  return s;
}

std::string InterPodAffinity::PreScoreState::Encode() const {
  return absl::StrJoin(existing_weights, ",",
                       [](std::string* out, const auto& w) {
                         absl::StrAppend(out, w.first, ":", w.second);
                       });
}

absl::StatusOr<InterPodAffinity::PreScoreState>
InterPodAffinity::PreScoreState::Decode(absl::string_view bytes) {
  PreScoreState s;
  for (absl::string_view part : absl::StrSplit(bytes, ',', absl::SkipEmpty())) {
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(part, absl::MaxSplits(':', 1));
    int32_t index = 0;
    int64_t weight = 0;
    if (!absl::SimpleAtoi(kv.first, &index) || index < 0 ||
        !absl::SimpleAtoi(kv.second, &weight)) {
      return absl::InvalidArgumentError(
          "malformed InterPodAffinity PreScore state");
    }
    s.existing_weights.emplace_back(index, weight);
  }
  return s;
}

bool InterPodAffinity::SkipsScoring(const pb::Pod& pod) const {
  return args_.ignore_preferred_terms_of_existing_pods &&
         pod.pod_affinity().preferred().empty() &&
         pod.pod_anti_affinity().preferred().empty();
}

void InterPodAffinity::AddToPlan(const pb::Pod& pod,
                                 pb::PlanResponse& plan) const {
  if (!CheckTerms(pod).empty()) return;
  const std::string& ns = pod.namespace_();
  // A pod counts for the required affinity when it matches every term.
  std::vector<pb::PodMatcher> all_affinity;
  for (const pb::PodAffinityTerm& t : pod.pod_affinity().required()) {
    all_affinity.push_back(model::PodAffinityTermMatcher(t, ns));
  }
  for (const pb::PodAffinityTerm& t : pod.pod_affinity().required()) {
    AddQuery(t.topology_key(), all_affinity, plan);
  }
  for (const pb::PodAffinityTerm& t : pod.pod_anti_affinity().required()) {
    AddQuery(t.topology_key(), {model::PodAffinityTermMatcher(t, ns)}, plan);
  }
  for (const auto* terms : {&pod.pod_affinity().preferred(),
                            &pod.pod_anti_affinity().preferred()}) {
    for (const pb::WeightedPodAffinityTerm& t : *terms) {
      AddQuery(t.term().topology_key(),
               {model::PodAffinityTermMatcher(t.term(), ns)}, plan);
    }
  }
  plan.add_existing_terms(pb::TERM_KIND_REQUIRED_ANTI_AFFINITY);
  if (!SkipsScoring(pod)) {
    if (args_.hard_pod_affinity_weight > 0) {
      plan.add_existing_terms(pb::TERM_KIND_REQUIRED_AFFINITY);
    }
    plan.add_existing_terms(pb::TERM_KIND_PREFERRED_AFFINITY);
    plan.add_existing_terms(pb::TERM_KIND_PREFERRED_ANTI_AFFINITY);
  }
  if (!pod.pod_affinity().required().empty()) plan.set_node_labels(true);
}

InterPodAffinity::PlanSize InterPodAffinity::PlanBytes(
    const pb::Pod& pod) const {
  // A term's matcher holds at most the term's bytes and the pod's
  // namespace; a query adds its tag, topology key and flags (64 bytes
  // cover them). Each required affinity query holds every such matcher.
  const int64_t ns = static_cast<int64_t>(pod.namespace_().size()) + 64;
  auto term_bytes = [ns](const pb::PodAffinityTerm& t) {
    return model::SatAdd(static_cast<int64_t>(t.ByteSizeLong()), ns);
  };
  int64_t affinity = 0;
  for (const pb::PodAffinityTerm& t : pod.pod_affinity().required()) {
    affinity = model::SatAdd(affinity, term_bytes(t));
  }
  const int64_t required = pod.pod_affinity().required_size();
  const int64_t quadratic =
      model::SatMul(required, model::SatAdd(affinity, ns));
  int64_t bytes = 64;
  for (const pb::PodAffinityTerm& t : pod.pod_anti_affinity().required()) {
    bytes = model::SatAdd(bytes, term_bytes(t));
  }
  for (const auto* terms : {&pod.pod_affinity().preferred(),
                            &pod.pod_anti_affinity().preferred()}) {
    for (const pb::WeightedPodAffinityTerm& t : *terms) {
      bytes = model::SatAdd(bytes, term_bytes(t.term()));
    }
  }
  return {model::SatAdd(quadratic, bytes), quadratic >= bytes
                                               ? "pod.pod_affinity.required"
                                               : "pod.pod_anti_affinity"};
}

PluginStatus InterPodAffinity::PreFilter(CycleState& state,
                                         const pb::Pod& pod) const {
  if (std::string why = CheckTerms(pod); !why.empty()) {
    return PluginStatus::UnschedulableAndUnresolvable(
        absl::StrCat("parsing pod: ", why));
  }
  const Layout layout(pod);
  const pb::ClusterData& cluster = state.cluster();
  PreFilterState s;
  // Existing pods' required anti-affinity terms that reject the pod
  // somewhere: it matches them and a pod carries them on a node with their
  // topology key.
  for (int i = 0; i < cluster.existing_terms_size(); ++i) {
    const pb::ExistingTerm& e = cluster.existing_terms(i);
    if (e.kind() == pb::TERM_KIND_REQUIRED_ANTI_AFFINITY && e.total() > 0 &&
        ExistingTermMatches(e, pod)) {
      s.matching_existing.push_back(i);
    }
  }
  if (layout.affinity == 0 && layout.anti == 0 && s.matching_existing.empty()) {
    return PluginStatus::Skip();
  }
  if (layout.affinity > 0) {
    absl::StatusOr<int> base = QueryBase(state, layout);
    if (!base.ok())
      return PluginStatus::Error(std::string(base.status().message()));
    int64_t matching = 0;
    for (int i = 0; i < layout.affinity; ++i) {
      matching = model::SatAdd(matching, cluster.answers(*base + i).total());
    }
    s.first_of_group = matching == 0 && MatchesOwnAffinityTerms(pod);
  }
  state.Write(kPreFilterStateKey, std::move(s));
  return PluginStatus::Success();
}

PluginStatus InterPodAffinity::Filter(const CycleState& state,
                                      const pb::Pod& pod,
                                      const pb::Node& node) const {
  absl::StatusOr<const PreFilterState*> read =
      state.Read<PreFilterState>(kPreFilterStateKey);
  if (!read.ok())
    return PluginStatus::Error(std::string(read.status().message()));
  const PreFilterState& s = **read;
  const Layout layout(pod);
  const int base = state.QueryBase(kName);
  if (layout.affinity + layout.anti > 0 &&
      (base < 0 ||
       node.query_counts_size() < base + layout.affinity + layout.anti)) {
    return PluginStatus::Error(
        NodeQueriesError(node, base + layout.affinity + layout.anti));
  }

  // Every topology key on the node, and in each term's domain a pod that
  // matches all the terms, unless the pod may start its group.
  bool pods_exist = true;
  for (int i = 0; i < layout.affinity; ++i) {
    const std::string& key = pod.pod_affinity().required(i).topology_key();
    if (key.empty() || !node.labels().contains(key)) {
      return PluginStatus::UnschedulableAndUnresolvable(
          std::string(kReasonAffinity));
    }
    if (node.query_counts(base + i) <= 0) pods_exist = false;
  }
  if (!pods_exist && !s.first_of_group) {
    return PluginStatus::UnschedulableAndUnresolvable(
        std::string(kReasonAffinity));
  }

  // A node without a term's topology key has no pod in its domain: 0.
  for (int i = 0; i < layout.anti; ++i) {
    if (node.query_counts(base + layout.AntiAt(i)) > 0) {
      return PluginStatus::Unschedulable(std::string(kReasonAntiAffinity));
    }
  }

  for (const pb::TermCount& tc : node.term_counts()) {
    if (tc.count() > 0 &&
        std::binary_search(s.matching_existing.begin(),
                           s.matching_existing.end(), tc.term())) {
      return PluginStatus::Unschedulable(
          std::string(kReasonExistingAntiAffinity));
    }
  }
  return PluginStatus::Success();
}

PluginStatus InterPodAffinity::PreScore(
    CycleState& state, const pb::Pod& pod,
    absl::Span<const pb::Node* const> /*nodes*/) const {
  if (SkipsScoring(pod)) return PluginStatus::Skip();
  if (std::string why = CheckTerms(pod); !why.empty()) {
    return PluginStatus::Error(absl::StrCat("failed to parse pod: ", why));
  }
  const Layout layout(pod);
  const pb::ClusterData& cluster = state.cluster();
  // kube-scheduler skips when no term of either side matched a pod on a
  // node with the term's topology key (its score map stays empty).
  bool any = false;
  if (layout.preferred + layout.preferred_anti > 0) {
    absl::StatusOr<int> base = QueryBase(state, layout);
    if (!base.ok())
      return PluginStatus::Error(std::string(base.status().message()));
    for (int i = layout.PreferredAt(0); i < layout.size(); ++i) {
      any = any || cluster.answers(*base + i).total() > 0;
    }
  }
  PreScoreState s;
  for (int i = 0; i < cluster.existing_terms_size(); ++i) {
    const pb::ExistingTerm& e = cluster.existing_terms(i);
    int64_t weight = 0;
    switch (e.kind()) {
      case pb::TERM_KIND_REQUIRED_AFFINITY:
        if (args_.hard_pod_affinity_weight <= 0) continue;
        weight = args_.hard_pod_affinity_weight;
        break;
      case pb::TERM_KIND_PREFERRED_AFFINITY:
        weight = e.weight();
        break;
      case pb::TERM_KIND_PREFERRED_ANTI_AFFINITY:
        weight = -static_cast<int64_t>(e.weight());
        break;
      default:
        continue;
    }
    if (e.total() <= 0 || !ExistingTermMatches(e, pod)) continue;
    any = true;
    if (weight != 0) s.existing_weights.emplace_back(i, weight);
  }
  if (!any) return PluginStatus::Skip();
  state.Write(kPreScoreStateKey, std::move(s));
  return PluginStatus::Success();
}

PluginStatus InterPodAffinity::Score(const CycleState& state,
                                     const pb::Pod& pod,
                                     absl::Span<const pb::Node* const> nodes,
                                     absl::Span<int64_t> scores) const {
  absl::StatusOr<const PreScoreState*> read =
      state.Read<PreScoreState>(kPreScoreStateKey);
  if (!read.ok())
    return PluginStatus::Error(std::string(read.status().message()));
  const int terms = state.cluster().existing_terms_size();
  std::vector<int64_t> existing(terms, 0);
  for (const auto& [index, weight] : (*read)->existing_weights) {
    if (index >= terms) {
      return PluginStatus::Error(absl::StrCat(
          "cycle_state[\"", kPreScoreStateKey, "\"] names existing term ",
          index, ", the cluster data has ", terms));
    }
    existing[index] = weight;
  }
  const Layout layout(pod);
  const int preferred = layout.preferred + layout.preferred_anti;
  const int base = state.QueryBase(kName);
  std::vector<int64_t> query_weights;
  for (const auto& t : pod.pod_affinity().preferred()) {
    query_weights.push_back(t.weight());
  }
  for (const auto& t : pod.pod_anti_affinity().preferred()) {
    query_weights.push_back(-static_cast<int64_t>(t.weight()));
  }
  for (size_t k = 0; k < nodes.size(); ++k) {
    const pb::Node& node = *nodes[k];
    if (preferred > 0 &&
        (base < 0 || node.query_counts_size() < base + layout.size())) {
      return PluginStatus::Error(NodeQueriesError(node, base + layout.size()));
    }
    // Saturating: counts come from the request, and a product or sum that
    // wrapped would turn the strongest preference into the weakest.
    int64_t sum = 0;
    for (int i = 0; i < preferred; ++i) {
      sum = model::SatAdd(
          sum,
          model::SatMul(query_weights[i],
                        node.query_counts(base + layout.PreferredAt(0) + i)));
    }
    for (const pb::TermCount& tc : node.term_counts()) {
      sum = model::SatAdd(sum, model::SatMul(existing[tc.term()], tc.count()));
    }
    scores[k] = sum;
  }
  return PluginStatus::Success();
}

PluginStatus InterPodAffinity::NormalizeScore(
    const CycleState& /*state*/, const pb::Pod& /*pod*/,
    absl::Span<int64_t> scores) const {
  int64_t min = std::numeric_limits<int64_t>::max();
  int64_t max = std::numeric_limits<int64_t>::min();
  for (int64_t s : scores) {
    min = std::min(min, s);
    max = std::max(max, s);
  }
  // Differences in 128 bits: raw scores may span more than int64 holds
  // (kube-scheduler's would wrap). Where they fit, the same float64
  // arithmetic as kube-scheduler's, truncated.
  const __int128 diff = static_cast<__int128>(max) - min;
  for (int64_t& s : scores) {
    double f = 0;
    if (diff > 0) {
      f = static_cast<double>(model::kMaxNodeScore) *
          (static_cast<double>(static_cast<__int128>(s) - min) /
           static_cast<double>(diff));
    }
    s = static_cast<int64_t>(f);
  }
  return PluginStatus::Success();
}

absl::StatusOr<InterPodAffinity::Args> InterPodAffinity::ParseArgs(
    const model::YamlField& args) {
  return model::DecodeInterPodAffinityArgs(args);
}

absl::StatusOr<std::unique_ptr<framework::Plugin>> InterPodAffinity::New(
    const model::YamlField& args) {
  KSCORE_ASSIGN_OR_RETURN(Args a, ParseArgs(args));
  return std::make_unique<InterPodAffinity>(std::move(a));
}

}  // namespace kscore::plugins
