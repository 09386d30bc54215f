#ifndef KSCORE_MODEL_SELECTORS_H_
#define KSCORE_MODEL_SELECTORS_H_

// Kubernetes' selector semantics over the contract's messages: label
// selectors (metav1.LabelSelector), node selector terms, a pod's required
// node affinity and its tolerations. Plugins judge with them; the shim uses
// them to answer a plan's PodQuery (which pods match, which nodes count),
// the way the API server answers a list with a selector.

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "google/protobuf/map.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "kscore/scorer/v1/scorer.pb.h"

namespace kscore::model {

namespace pb = ::kscore::scorer::v1;

using LabelMap = google::protobuf::Map<std::string, std::string>;

// validation.IsValidLabelValue.
bool IsValidLabelValue(absl::string_view v);
// strconv.ParseInt(s, 10, 64).
bool ParseInt64(absl::string_view s, int64_t& out);

// metav1.LabelSelectorAsSelector's checks: "" when the selector is well
// formed, otherwise what is wrong, naming the requirement
// ("matchExpressions[0]: key \"a b\": ...").
std::string CheckLabelSelector(const pb::LabelSelector& selector);
// Whether labels match a well-formed selector (requirements ANDed; an empty
// selector matches everything).
bool LabelSelectorMatches(const pb::LabelSelector& selector,
                          const LabelMap& labels);
// No requirement at all (labels.Selector.Empty()).
bool IsEmptySelector(const pb::LabelSelector& selector);

// labels.NewRequirement's checks for a node selector requirement, and the
// field requirement checks (only metadata.name, In/NotIn, one value).
std::string CheckNodeSelectorRequirement(const pb::NodeSelectorRequirement& r);
std::string CheckFieldRequirement(const pb::NodeSelectorRequirement& r);
// "" if a node selector term can match nodes, otherwise why not (an empty
// term matches no node).
std::string CheckNodeSelectorTerm(const pb::NodeSelectorTerm& term);
bool IsEmptyTerm(const pb::NodeSelectorTerm& term);
// A well-formed term against a node: requirements ANDed; field requirements
// only know metadata.name, and are ignored for a node without a name.
bool NodeSelectorTermMatches(const pb::NodeSelectorTerm& term,
                             const pb::Node& node);
// The same against labels alone (a node known only by its labels: field
// requirements are ignored), as CheckNodeAffinity matches a
// PersistentVolume's node affinity.
bool NodeSelectorTermMatchesLabels(const pb::NodeSelectorTerm& term,
                                   const LabelMap& labels);
// spec.nodeSelector against the node's labels.
bool MatchesNodeSelector(const pb::Pod& pod, const pb::Node& node);
// Whether the pod has required node affinity (even with no terms).
bool HasRequiredNodeAffinity(const pb::Pod& pod);
// nodeaffinity.RequiredNodeAffinity.Match: nodeSelector and, when set, one
// of the well-formed required terms (malformed ones match nothing).
bool MatchesRequiredNodeAffinity(const pb::Pod& pod, const pb::Node& node);

// Toleration.ToleratesTaint: an empty effect or key in the toleration matches
// any; operator Exists matches any value, Equal (or empty) the same value.
// Gt/Lt never match: kube-scheduler's TaintTolerationComparisonOperators
// feature gate is alpha and off by default.
bool ToleratesTaint(const pb::Toleration& toleration, absl::string_view key,
                    absl::string_view value, absl::string_view effect);
bool TolerationsTolerateTaint(
    const google::protobuf::RepeatedPtrField<pb::Toleration>& tolerations,
    absl::string_view key, absl::string_view value, absl::string_view effect);
// The pod tolerates every NoSchedule and NoExecute taint of the node.
bool ToleratesNoScheduleTaints(const pb::Pod& pod, const pb::Node& node);

// ImageLocality's normalizedImageName: a name without a tag after its last
// "/" gets ":latest".
std::string NormalizedImageName(absl::string_view name);

// A pod (anti-)affinity term of a pod in `owner_namespace`, as
// kube-scheduler reads it (fwk.AffinityTerm): the pods it selects, as a
// PodMatcher. Its namespaces are the term's, or the owner's when the term
// names none and has no namespace selector; its selectors are the term's
// (unset stays unset: selects nothing).
pb::PodMatcher PodAffinityTermMatcher(const pb::PodAffinityTerm& term,
                                      absl::string_view owner_namespace);
// fwk.AffinityTerm.Matches for a term with well-formed selectors: whether a
// pod in `pod_namespace` with `pod_labels`, whose namespace has
// `namespace_labels`, is selected by the term of a pod in
// `owner_namespace`.
bool PodAffinityTermMatches(const pb::PodAffinityTerm& term,
                            absl::string_view owner_namespace,
                            absl::string_view pod_namespace,
                            const LabelMap& pod_labels,
                            const LabelMap& namespace_labels);

}  // namespace kscore::model

#endif  // KSCORE_MODEL_SELECTORS_H_
