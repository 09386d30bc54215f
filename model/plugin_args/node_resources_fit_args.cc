#include "model/plugin_args/node_resources_fit_args.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "model/plugin_args/args.h"
#include "model/validation.h"

namespace kscore::model {
namespace {

absl::Status ParseIgnored(const YamlField& args, NodeResourcesFitArgs* out) {
  YamlField ignored = args.Child("ignoredResources");
  KSCORE_RETURN_IF_ERROR(ignored.ExpectSequence());
  for (size_t i = 0; ignored.present() && i < ignored.size(); ++i) {
    std::string name;
    KSCORE_ASSIGN_OR_RETURN(name, ignored.Index(i).String());
    if (std::string why = CheckLabelKey(name); !why.empty()) {
      return ignored.Index(i).Error(
          absl::StrCat("invalid resource name \"", name, "\": ", why));
    }
    out->ignored_resources.push_back(std::move(name));
  }
  YamlField groups = args.Child("ignoredResourceGroups");
  KSCORE_RETURN_IF_ERROR(groups.ExpectSequence());
  for (size_t i = 0; groups.present() && i < groups.size(); ++i) {
    std::string name;
    KSCORE_ASSIGN_OR_RETURN(name, groups.Index(i).String());
    if (name.find('/') != std::string::npos) {
      return groups.Index(i).Error(absl::StrCat("invalid resource group \"",
                                                name, "\": can't contain '/'"));
    }
    if (std::string why = CheckLabelKey(name); !why.empty()) {
      return groups.Index(i).Error(
          absl::StrCat("invalid resource group \"", name, "\": ", why));
    }
    out->ignored_resource_groups.push_back(std::move(name));
  }
  return absl::OkStatus();
}

// A scoringStrategy given without a type has none (kube-scheduler only
// defaults the whole strategy).
absl::StatusOr<ScoringStrategyType> ParseStrategyType(const YamlField& type) {
  std::string name;
  if (type.present()) {
    KSCORE_ASSIGN_OR_RETURN(name, type.String());
  }
  if (name == "LeastAllocated") return ScoringStrategyType::kLeastAllocated;
  if (name == "MostAllocated") return ScoringStrategyType::kMostAllocated;
  if (name == "RequestedToCapacityRatio") {
    return ScoringStrategyType::kRequestedToCapacityRatio;
  }
  return type.Error(absl::StrCat(
      "unknown type \"", name,
      "\" (known: LeastAllocated, MostAllocated, RequestedToCapacityRatio)"));
}

absl::StatusOr<std::vector<ResourceSpec>> ParseScoredResources(
    const YamlField& resources) {
  std::vector<ResourceSpec> specs;
  KSCORE_ASSIGN_OR_RETURN(specs, ParseResourceSpecs(resources));
  for (size_t i = 0; i < specs.size(); ++i) {
    const ResourceSpec& r = specs[i];
    if (r.weight <= 0 || r.weight > 100) {
      return resources.Index(i).Child("weight").Error(
          absl::StrCat("resource weight of ", r.name,
                       " not in valid range (0, 100], got ", r.weight));
    }
  }
  return specs;
}

absl::StatusOr<std::vector<UtilizationShapePoint>> ParseShape(
    const YamlField& ratio) {
  if (!ratio.present()) {
    return ratio.Error(
        "must be specified when type is RequestedToCapacityRatio");
  }
  KSCORE_RETURN_IF_ERROR(ratio.ExpectMap({"shape"}));
  YamlField shape = ratio.Child("shape");
  KSCORE_RETURN_IF_ERROR(shape.ExpectSequence());
  if (!shape.present() || shape.size() == 0) {
    return shape.Error("at least one point must be specified");
  }
  std::vector<UtilizationShapePoint> out;
  for (size_t i = 0; i < shape.size(); ++i) {
    YamlField point = shape.Index(i);
    if (!point.node().IsMap()) return point.Error("expected a mapping");
    KSCORE_RETURN_IF_ERROR(point.ExpectMap({"utilization", "score"}));
    UtilizationShapePoint p;
    if (YamlField u = point.Child("utilization"); u.present()) {
      KSCORE_ASSIGN_OR_RETURN(p.utilization, u.Int(0, 100));
    }
    if (YamlField sc = point.Child("score"); sc.present()) {
      KSCORE_ASSIGN_OR_RETURN(p.score, sc.Int(0, kMaxCustomPriorityScore));
    }
    if (i > 0 && out.back().utilization >= p.utilization) {
      return point.Child("utilization")
          .Error("values must be sorted in increasing order");
    }
    out.push_back(p);
  }
  return out;
}

absl::Status ParseScoringStrategy(const YamlField& strategy,
                                  NodeResourcesFitArgs* out) {
  if (!strategy.present()) return absl::OkStatus();
  KSCORE_RETURN_IF_ERROR(
      strategy.ExpectMap({"type", "resources", "requestedToCapacityRatio"}));
  KSCORE_ASSIGN_OR_RETURN(out->strategy,
                          ParseStrategyType(strategy.Child("type")));
  KSCORE_ASSIGN_OR_RETURN(out->resources,
                          ParseScoredResources(strategy.Child("resources")));
  YamlField ratio = strategy.Child("requestedToCapacityRatio");
  if (out->strategy != ScoringStrategyType::kRequestedToCapacityRatio) {
    if (ratio.present()) {
      return ratio.Error(
          "must be nil when type is not RequestedToCapacityRatio");
    }
    return absl::OkStatus();
  }
  KSCORE_ASSIGN_OR_RETURN(out->shape, ParseShape(ratio));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<NodeResourcesFitArgs> DecodeNodeResourcesFitArgs(
    const YamlField& args) {
  NodeResourcesFitArgs out;
  if (!args.present()) return out;
  KSCORE_RETURN_IF_ERROR(ExpectArgsMap(
      args, "NodeResourcesFit",
      {"ignoredResources", "ignoredResourceGroups", "scoringStrategy"}));
  KSCORE_RETURN_IF_ERROR(ParseIgnored(args, &out));
  KSCORE_RETURN_IF_ERROR(
      ParseScoringStrategy(args.Child("scoringStrategy"), &out));
  return out;
}

}  // namespace kscore::model
