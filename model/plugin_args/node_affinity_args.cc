#include "model/plugin_args/node_affinity_args.h"

#include <limits>
#include <string>

#include "common/status_macros.h"
#include "model/plugin_args/args.h"
#include "model/selectors.h"

namespace kscore::model {
namespace {

absl::Status ParseStrings(
    const YamlField& field,
    google::protobuf::RepeatedPtrField<std::string>* out) {
  KSCORE_RETURN_IF_ERROR(field.ExpectSequence());
  for (size_t i = 0; field.present() && i < field.size(); ++i) {
    std::string v;
    KSCORE_ASSIGN_OR_RETURN(v, field.Index(i).String());
    out->Add(std::move(v));
  }
  return absl::OkStatus();
}

absl::Status ParseRequirements(
    const YamlField& field,
    google::protobuf::RepeatedPtrField<pb::NodeSelectorRequirement>* out) {
  KSCORE_RETURN_IF_ERROR(field.ExpectSequence());
  for (size_t i = 0; field.present() && i < field.size(); ++i) {
    YamlField item = field.Index(i);
    if (!item.node().IsMap()) return item.Error("expected a mapping");
    KSCORE_RETURN_IF_ERROR(item.ExpectMap({"key", "operator", "values"}));
    pb::NodeSelectorRequirement* r = out->Add();
    if (YamlField key = item.Child("key"); key.present()) {
      KSCORE_ASSIGN_OR_RETURN(*r->mutable_key(), key.String());
    }
    if (YamlField op = item.Child("operator"); op.present()) {
      KSCORE_ASSIGN_OR_RETURN(*r->mutable_operator_(), op.String());
    }
    KSCORE_RETURN_IF_ERROR(
        ParseStrings(item.Child("values"), r->mutable_values()));
  }
  return absl::OkStatus();
}

// A nodeSelectorTerm. If `check`, malformed requirements are errors naming
// the term (kube-scheduler does not look into empty terms, nor into preferred
// terms of weight 0).
absl::Status ParseTerm(const YamlField& field, pb::NodeSelectorTerm* term,
                       bool check) {
  if (field.present() && !field.node().IsMap()) {
    return field.Error("expected a mapping");
  }
  KSCORE_RETURN_IF_ERROR(field.ExpectMap({"matchExpressions", "matchFields"}));
  KSCORE_RETURN_IF_ERROR(ParseRequirements(field.Child("matchExpressions"),
                                           term->mutable_match_expressions()));
  KSCORE_RETURN_IF_ERROR(ParseRequirements(field.Child("matchFields"),
                                           term->mutable_match_fields()));
  if (!check || IsEmptyTerm(*term)) return absl::OkStatus();
  if (std::string why = CheckNodeSelectorTerm(*term); !why.empty()) {
    return field.Error(why);
  }
  return absl::OkStatus();
}

absl::Status ParseRequired(const YamlField& required,
                           pb::NodeAffinity* affinity) {
  if (!required.present()) return absl::OkStatus();
  KSCORE_RETURN_IF_ERROR(required.ExpectMap({"nodeSelectorTerms"}));
  affinity->set_has_required(true);
  YamlField terms = required.Child("nodeSelectorTerms");
  KSCORE_RETURN_IF_ERROR(terms.ExpectSequence());
  for (size_t i = 0; terms.present() && i < terms.size(); ++i) {
    KSCORE_RETURN_IF_ERROR(
        ParseTerm(terms.Index(i), affinity->add_required(), /*check=*/true));
  }
  return absl::OkStatus();
}

absl::Status ParsePreferred(const YamlField& preferred,
                            pb::NodeAffinity* affinity) {
  KSCORE_RETURN_IF_ERROR(preferred.ExpectSequence());
  for (size_t i = 0; preferred.present() && i < preferred.size(); ++i) {
    YamlField item = preferred.Index(i);
    if (!item.node().IsMap()) return item.Error("expected a mapping");
    KSCORE_RETURN_IF_ERROR(item.ExpectMap({"weight", "preference"}));
    pb::PreferredSchedulingTerm* t = affinity->add_preferred();
    if (YamlField w = item.Child("weight"); w.present()) {
      int64_t v = 0;
      KSCORE_ASSIGN_OR_RETURN(v, w.Int(std::numeric_limits<int32_t>::min(),
                                       std::numeric_limits<int32_t>::max()));
      t->set_weight(static_cast<int32_t>(v));
    }
    KSCORE_RETURN_IF_ERROR(ParseTerm(item.Child("preference"),
                                     t->mutable_preference(),
                                     /*check=*/t->weight() != 0));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<NodeAffinityArgs> DecodeNodeAffinityArgs(const YamlField& args) {
  NodeAffinityArgs out;
  if (!args.present()) return out;
  KSCORE_RETURN_IF_ERROR(
      ExpectArgsMap(args, "NodeAffinity", {"addedAffinity"}));
  YamlField added = args.Child("addedAffinity");
  if (!added.present()) return out;
  KSCORE_RETURN_IF_ERROR(
      added.ExpectMap({"requiredDuringSchedulingIgnoredDuringExecution",
                       "preferredDuringSchedulingIgnoredDuringExecution"}));
  KSCORE_RETURN_IF_ERROR(ParseRequired(
      added.Child("requiredDuringSchedulingIgnoredDuringExecution"),
      &out.added_affinity));
  KSCORE_RETURN_IF_ERROR(ParsePreferred(
      added.Child("preferredDuringSchedulingIgnoredDuringExecution"),
      &out.added_affinity));
  return out;
}

}  // namespace kscore::model
