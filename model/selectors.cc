#include "model/selectors.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "model/validation.h"

namespace kscore::model {

namespace {

constexpr absl::string_view kNodeNameField = "metadata.name";

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9');
}

template <typename Requirement>
bool HasValue(const Requirement& r, const std::string& v) {
  return std::find(r.values().begin(), r.values().end(), v) != r.values().end();
}

// labels.Requirement.Matches for In, NotIn, Exists and DoesNotExist.
template <typename Requirement>
bool SetRequirementMatches(const Requirement& r, const LabelMap& labels) {
  auto it = labels.find(r.key());
  const bool exists = it != labels.end();
  const std::string& op = r.operator_();
  if (op == "In") return exists && HasValue(r, it->second);
  if (op == "NotIn") return !exists || !HasValue(r, it->second);
  if (op == "Exists") return exists;
  if (op == "DoesNotExist") return !exists;
  return false;
}

}  // namespace

bool IsValidLabelValue(absl::string_view v) {
  if (v.empty()) return true;
  if (v.size() > 63 || !IsAlnum(v.front()) || !IsAlnum(v.back())) return false;
  return std::all_of(v.begin(), v.end(), [](char c) {
    return IsAlnum(c) || c == '-' || c == '_' || c == '.';
  });
}

bool ParseInt64(absl::string_view s, int64_t& out) {
  bool negative = false;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return false;
  uint64_t v = 0;
  const uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    const auto d = static_cast<uint64_t>(c - '0');
    if (v > (limit - d) / 10) return false;
    v = v * 10 + d;
  }
  out = negative ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
  return true;
}

std::string CheckLabelSelector(const pb::LabelSelector& selector) {
  // Map order is unspecified: check keys in sorted order so the first error
  // reported is stable.
  std::vector<std::pair<std::string, std::string>> labels(
      selector.match_labels().begin(), selector.match_labels().end());
  std::sort(labels.begin(), labels.end());
  for (const auto& [k, v] : labels) {
    if (std::string why = CheckLabelKey(k); !why.empty()) {
      return absl::StrCat("matchLabels: key \"", k, "\": ", why);
    }
    if (!IsValidLabelValue(v)) {
      return absl::StrCat("matchLabels[\"", k, "\"]: invalid label value \"", v,
                          "\"");
    }
  }
  for (int i = 0; i < selector.match_expressions_size(); ++i) {
    const pb::LabelSelectorRequirement& r = selector.match_expressions(i);
    const std::string at = absl::StrCat("matchExpressions[", i, "]: ");
    const std::string& op = r.operator_();
    if (op == "In" || op == "NotIn") {
      if (r.values().empty()) {
        return absl::StrCat(
            at, "for 'in', 'notin' operators, values set can't be empty");
      }
    } else if (op == "Exists" || op == "DoesNotExist") {
      if (!r.values().empty()) {
        return absl::StrCat(
            at, "values set must be empty for exists and does not exist");
      }
    } else {
      return absl::StrCat(at, "\"", op,
                          "\" is not a valid label selector operator");
    }
    if (std::string why = CheckLabelKey(r.key()); !why.empty()) {
      return absl::StrCat(at, "key \"", r.key(), "\": ", why);
    }
    for (const std::string& v : r.values()) {
      if (!IsValidLabelValue(v)) {
        return absl::StrCat(at, "invalid label value \"", v, "\"");
      }
    }
  }
  return "";
}

bool LabelSelectorMatches(const pb::LabelSelector& selector,
                          const LabelMap& labels) {
  for (const auto& [k, v] : selector.match_labels()) {
    auto it = labels.find(k);
    if (it == labels.end() || it->second != v) return false;
  }
  for (const pb::LabelSelectorRequirement& r : selector.match_expressions()) {
    if (!SetRequirementMatches(r, labels)) return false;
  }
  return true;
}

bool IsEmptySelector(const pb::LabelSelector& selector) {
  return selector.match_labels().empty() &&
         selector.match_expressions().empty();
}

std::string CheckNodeSelectorRequirement(const pb::NodeSelectorRequirement& r) {
  if (std::string why = CheckLabelKey(r.key()); !why.empty()) {
    return absl::StrCat("key \"", r.key(), "\": ", why);
  }
  const std::string& op = r.operator_();
  if (op == "In" || op == "NotIn") {
    if (r.values().empty()) {
      return "for 'in', 'notin' operators, values set can't be empty";
    }
  } else if (op == "Exists" || op == "DoesNotExist") {
    if (!r.values().empty()) {
      return "values set must be empty for exists and does not exist";
    }
  } else if (op == "Gt" || op == "Lt") {
    int64_t unused = 0;
    if (r.values_size() != 1 || !ParseInt64(r.values(0), unused)) {
      return "for 'Gt', 'Lt' operators, exactly one integer value is required";
    }
  } else {
    return absl::StrCat("unsupported operator \"", op, "\"");
  }
  for (const std::string& v : r.values()) {
    if (!IsValidLabelValue(v)) {
      return absl::StrCat("invalid label value \"", v, "\"");
    }
  }
  return "";
}

std::string CheckFieldRequirement(const pb::NodeSelectorRequirement& r) {
  if (r.operator_() != "In" && r.operator_() != "NotIn") {
    return absl::StrCat("unsupported field operator \"", r.operator_(), "\"");
  }
  if (r.values_size() != 1) return "field values must have one element";
  return "";
}

std::string CheckNodeSelectorTerm(const pb::NodeSelectorTerm& term) {
  if (IsEmptyTerm(term)) return "empty term";
  for (int i = 0; i < term.match_expressions_size(); ++i) {
    std::string why = CheckNodeSelectorRequirement(term.match_expressions(i));
    if (!why.empty()) return absl::StrCat("matchExpressions[", i, "]: ", why);
  }
  for (int i = 0; i < term.match_fields_size(); ++i) {
    std::string why = CheckFieldRequirement(term.match_fields(i));
    if (!why.empty()) return absl::StrCat("matchFields[", i, "]: ", why);
  }
  return "";
}

bool IsEmptyTerm(const pb::NodeSelectorTerm& term) {
  return term.match_expressions().empty() && term.match_fields().empty();
}

bool NodeSelectorTermMatchesLabels(const pb::NodeSelectorTerm& term,
                                   const LabelMap& labels) {
  for (const pb::NodeSelectorRequirement& r : term.match_expressions()) {
    const std::string& op = r.operator_();
    if (op == "Gt" || op == "Lt") {
      auto it = labels.find(r.key());
      int64_t have = 0, want = 0;
      if (it == labels.end() || !ParseInt64(it->second, have) ||
          !ParseInt64(r.values(0), want)) {
        return false;
      }
      if (op == "Gt" ? have <= want : have >= want) return false;
    } else if (!SetRequirementMatches(r, labels)) {
      return false;
    }
  }
  return true;
}

bool NodeSelectorTermMatches(const pb::NodeSelectorTerm& term,
                             const pb::Node& node) {
  if (!NodeSelectorTermMatchesLabels(term, node.labels())) return false;
  if (node.name().empty()) return true;
  for (const pb::NodeSelectorRequirement& r : term.match_fields()) {
    const bool equal =
        (r.key() == kNodeNameField ? node.name() : std::string()) ==
        r.values(0);
    if (equal != (r.operator_() == "In")) return false;
  }
  return true;
}

bool MatchesNodeSelector(const pb::Pod& pod, const pb::Node& node) {
  for (const auto& [key, value] : pod.node_selector()) {
    auto it = node.labels().find(key);
    if (it == node.labels().end() || it->second != value) return false;
  }
  return true;
}

bool HasRequiredNodeAffinity(const pb::Pod& pod) {
  return pod.node_affinity().has_required() ||
         !pod.node_affinity().required().empty();
}

bool MatchesRequiredNodeAffinity(const pb::Pod& pod, const pb::Node& node) {
  if (!MatchesNodeSelector(pod, node)) return false;
  if (!HasRequiredNodeAffinity(pod)) return true;
  for (const pb::NodeSelectorTerm& t : pod.node_affinity().required()) {
    if (CheckNodeSelectorTerm(t).empty() && NodeSelectorTermMatches(t, node)) {
      return true;
    }
  }
  return false;
}

bool ToleratesTaint(const pb::Toleration& toleration, absl::string_view key,
                    absl::string_view value, absl::string_view effect) {
  if (!toleration.effect().empty() && toleration.effect() != effect) {
    return false;
  }
  if (!toleration.key().empty() && toleration.key() != key) return false;
  const std::string& op = toleration.operator_();
  if (op.empty() || op == "Equal") return toleration.value() == value;
  return op == "Exists";
}

bool TolerationsTolerateTaint(
    const google::protobuf::RepeatedPtrField<pb::Toleration>& tolerations,
    absl::string_view key, absl::string_view value, absl::string_view effect) {
  for (const pb::Toleration& t : tolerations) {
    if (ToleratesTaint(t, key, value, effect)) return true;
  }
  return false;
}

bool ToleratesNoScheduleTaints(const pb::Pod& pod, const pb::Node& node) {
  for (const pb::Taint& taint : node.taints()) {
    if (taint.effect() != "NoSchedule" && taint.effect() != "NoExecute") {
      continue;
    }
    if (!TolerationsTolerateTaint(pod.tolerations(), taint.key(), taint.value(),
                                  taint.effect())) {
      return false;
    }
  }
  return true;
}

std::string NormalizedImageName(absl::string_view name) {
  const size_t colon = name.rfind(':');
  const size_t slash = name.rfind('/');
  // strings.LastIndex gives -1 when absent: absent colon is "<=" anything.
  const bool has_tag = colon != absl::string_view::npos &&
                       (slash == absl::string_view::npos || colon > slash);
  return has_tag ? std::string(name) : absl::StrCat(name, ":latest");
}

pb::PodMatcher PodAffinityTermMatcher(const pb::PodAffinityTerm& term,
                                      absl::string_view owner_namespace) {
  pb::PodMatcher m;
  if (term.namespaces().empty() && !term.has_namespace_selector()) {
    m.add_namespaces(std::string(owner_namespace));
  } else {
    *m.mutable_namespaces() = term.namespaces();
  }
  if (term.has_namespace_selector()) {
    *m.mutable_namespace_selector() = term.namespace_selector();
  }
  if (term.has_label_selector()) *m.mutable_selector() = term.label_selector();
  return m;
}

bool PodAffinityTermMatches(const pb::PodAffinityTerm& term,
                            absl::string_view owner_namespace,
                            absl::string_view pod_namespace,
                            const LabelMap& pod_labels,
                            const LabelMap& namespace_labels) {
  // An unset label selector is labels.Nothing().
  if (!term.has_label_selector()) return false;
  bool in_namespace;
  if (term.namespaces().empty() && !term.has_namespace_selector()) {
    in_namespace = pod_namespace == owner_namespace;
  } else {
    in_namespace = std::find(term.namespaces().begin(), term.namespaces().end(),
                             pod_namespace) != term.namespaces().end();
  }
  // An unset namespace selector selects no namespace, an empty one all.
  if (!in_namespace && term.has_namespace_selector()) {
    in_namespace =
        LabelSelectorMatches(term.namespace_selector(), namespace_labels);
  }
  return in_namespace &&
         LabelSelectorMatches(term.label_selector(), pod_labels);
}

}  // namespace kscore::model
