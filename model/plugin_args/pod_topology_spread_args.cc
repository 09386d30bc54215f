#include "model/plugin_args/pod_topology_spread_args.h"

#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "model/plugin_args/args.h"
#include "model/selectors.h"
#include "model/validation.h"

namespace kscore::model {
namespace {

absl::Status ParseString(const YamlField& f, std::string* out) {
  if (!f.present()) return absl::OkStatus();
  KSCORE_ASSIGN_OR_RETURN(*out, f.String());
  return absl::OkStatus();
}

absl::Status ParseInt32(const YamlField& f, int32_t* out) {
  if (!f.present()) return absl::OkStatus();
  int64_t v = 0;
  KSCORE_ASSIGN_OR_RETURN(v, f.Int(std::numeric_limits<int32_t>::min(),
                                   std::numeric_limits<int32_t>::max()));
  *out = static_cast<int32_t>(v);
  return absl::OkStatus();
}

absl::StatusOr<pb::TopologySpreadConstraint> ParseConstraint(
    const YamlField& item) {
  if (!item.node().IsMap()) return item.Error("expected a mapping");
  KSCORE_RETURN_IF_ERROR(
      item.ExpectMap({"maxSkew", "topologyKey", "whenUnsatisfiable",
                      "labelSelector", "minDomains", "nodeAffinityPolicy",
                      "nodeTaintsPolicy", "matchLabelKeys"}));
  pb::TopologySpreadConstraint c;
  int32_t max_skew = 0, min_domains = 0;
  KSCORE_RETURN_IF_ERROR(ParseInt32(item.Child("maxSkew"), &max_skew));
  if (item.Child("maxSkew").present()) c.set_max_skew(max_skew);
  KSCORE_RETURN_IF_ERROR(ParseInt32(item.Child("minDomains"), &min_domains));
  if (item.Child("minDomains").present()) c.set_min_domains(min_domains);
  KSCORE_RETURN_IF_ERROR(
      ParseString(item.Child("topologyKey"), c.mutable_topology_key()));
  // Kept as written: empty is an error here, not DoNotSchedule.
  KSCORE_RETURN_IF_ERROR(ParseString(item.Child("whenUnsatisfiable"),
                                     c.mutable_when_unsatisfiable()));
  KSCORE_RETURN_IF_ERROR(ParseString(item.Child("nodeAffinityPolicy"),
                                     c.mutable_node_affinity_policy()));
  KSCORE_RETURN_IF_ERROR(ParseString(item.Child("nodeTaintsPolicy"),
                                     c.mutable_node_taints_policy()));
  YamlField keys = item.Child("matchLabelKeys");
  KSCORE_RETURN_IF_ERROR(keys.ExpectSequence());
  for (size_t i = 0; keys.present() && i < keys.size(); ++i) {
    KSCORE_ASSIGN_OR_RETURN(*c.add_match_label_keys(), keys.Index(i).String());
  }
  // Any selector is refused below; only whether one is set matters.
  if (item.Child("labelSelector").present()) c.mutable_label_selector();
  return c;
}

// The checks of one default constraint after those before it.
absl::Status ValidateConstraint(const PodTopologySpreadArgs& args, size_t i,
                                const YamlField& item) {
  const pb::TopologySpreadConstraint& c = args.default_constraints[i];
  if (c.max_skew() <= 0) {
    return item.Child("maxSkew").Error(absl::StrCat(
        "Invalid value: ", c.max_skew(), ": not in valid range (0, inf)"));
  }
  if (c.topology_key().empty()) {
    return item.Child("topologyKey").Error("Required value: can not be empty");
  }
  if (std::string why = CheckLabelKey(c.topology_key()); !why.empty()) {
    return item.Child("topologyKey")
        .Error(
            absl::StrCat("Invalid value: \"", c.topology_key(), "\": ", why));
  }
  if (c.when_unsatisfiable().empty()) {
    return item.Child("whenUnsatisfiable")
        .Error("Required value: can not be empty");
  }
  if (c.when_unsatisfiable() != kDoNotSchedule &&
      c.when_unsatisfiable() != kScheduleAnyway) {
    return item.Child("whenUnsatisfiable")
        .Error(absl::StrCat("Unsupported value: \"", c.when_unsatisfiable(),
                            "\": supported values: \"DoNotSchedule\", "
                            "\"ScheduleAnyway\""));
  }
  if (c.has_label_selector()) {
    return item.Child("labelSelector")
        .Error(
            "Forbidden: constraint must not define a selector, as they "
            "deduced for each pod");
  }
  for (size_t j = 0; j < i; ++j) {
    const pb::TopologySpreadConstraint& other = args.default_constraints[j];
    if (c.topology_key() == other.topology_key() &&
        c.when_unsatisfiable() == other.when_unsatisfiable()) {
      return item.Error(absl::StrCat("Duplicate value: \"{", c.topology_key(),
                                     ", ", c.when_unsatisfiable(), "}\""));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<PodTopologySpreadArgs> DecodePodTopologySpreadArgs(
    const YamlField& args) {
  PodTopologySpreadArgs out;
  if (!args.present()) return out;
  KSCORE_RETURN_IF_ERROR(ExpectArgsMap(
      args, "PodTopologySpread", {"defaultingType", "defaultConstraints"}));
  YamlField list = args.Child("defaultConstraints");
  KSCORE_RETURN_IF_ERROR(list.ExpectSequence());
  for (size_t i = 0; list.present() && i < list.size(); ++i) {
    KSCORE_ASSIGN_OR_RETURN(out.default_constraints.emplace_back(),
                            ParseConstraint(list.Index(i)));
  }
  // ValidatePodTopologySpreadArgs, in its order. An unset defaultingType
  // is System (kube-scheduler's defaulting).
  YamlField type = args.Child("defaultingType");
  std::string type_name = "System";
  KSCORE_RETURN_IF_ERROR(ParseString(type, &type_name));
  if (type_name != "System" && type_name != "List") {
    return type.Error(absl::StrCat("Unsupported value: \"", type_name,
                                   "\": supported values: \"System\", "
                                   "\"List\""));
  }
  if (type_name == "System" && !out.default_constraints.empty()) {
    return type.Error(
        "Invalid value: \"System\": when .defaultConstraints are not empty");
  }
  out.system_defaulting = type_name == "System";
  for (size_t i = 0; i < out.default_constraints.size(); ++i) {
    KSCORE_RETURN_IF_ERROR(ValidateConstraint(out, i, list.Index(i)));
  }
  return out;
}

}  // namespace kscore::model
