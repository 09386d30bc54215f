#include "model/plugin_args/volume_binding_args.h"

#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "model/plugin_args/args.h"

namespace kscore::model {
namespace {

constexpr int64_t kInt32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

// The points as given (int32 fields, as the v1 type has them); an empty or
// absent shape is left empty for the caller to default.
absl::StatusOr<std::vector<UtilizationShapePoint>> ReadShape(
    const YamlField& shape) {
  std::vector<UtilizationShapePoint> out;
  if (!shape.present()) return out;
  KSCORE_RETURN_IF_ERROR(shape.ExpectSequence());
  for (size_t i = 0; i < shape.size(); ++i) {
    YamlField point = shape.Index(i);
    if (!point.node().IsMap()) return point.Error("expected a mapping");
    KSCORE_RETURN_IF_ERROR(point.ExpectMap({"utilization", "score"}));
    UtilizationShapePoint p;
    if (YamlField u = point.Child("utilization"); u.present()) {
      KSCORE_ASSIGN_OR_RETURN(p.utilization, u.Int(kInt32Min, kInt32Max));
    }
    if (YamlField s = point.Child("score"); s.present()) {
      KSCORE_ASSIGN_OR_RETURN(p.score, s.Int(kInt32Min, kInt32Max));
    }
    out.push_back(p);
  }
  return out;
}

// validateFunctionShape: sorted first, then each point's ranges.
absl::Status ValidateShape(const YamlField& field,
                           const std::vector<UtilizationShapePoint>& shape) {
  for (size_t i = 1; i < shape.size(); ++i) {
    if (shape[i - 1].utilization >= shape[i].utilization) {
      return field.Index(i)
          .Child("utilization")
          .Error(absl::StrCat("Invalid value: ", shape[i].utilization,
                              ": values must be sorted in increasing order"));
    }
  }
  for (size_t i = 0; i < shape.size(); ++i) {
    const UtilizationShapePoint& p = shape[i];
    if (p.utilization < 0 || p.utilization > 100) {
      return field.Index(i)
          .Child("utilization")
          .Error(absl::StrCat("Invalid value: ", p.utilization,
                              ": not in valid range [0, 100]"));
    }
    if (p.score < 0 || p.score > kMaxCustomPriorityScore) {
      return field.Index(i).Child("score").Error(
          absl::StrCat("Invalid value: ", p.score, ": not in valid range [0, ",
                       kMaxCustomPriorityScore, "]"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<VolumeBindingArgs> DecodeVolumeBindingArgs(
    const YamlField& args) {
  VolumeBindingArgs out;
  if (!args.present()) return out;
  KSCORE_RETURN_IF_ERROR(
      ExpectArgsMap(args, "VolumeBinding", {"bindTimeoutSeconds", "shape"}));
  const YamlField timeout = args.Child("bindTimeoutSeconds");
  if (timeout.present()) {
    KSCORE_ASSIGN_OR_RETURN(out.bind_timeout_seconds,
                            timeout.Int(std::numeric_limits<int64_t>::min(),
                                        std::numeric_limits<int64_t>::max()));
  }
  const YamlField shape = args.Child("shape");
  KSCORE_ASSIGN_OR_RETURN(std::vector<UtilizationShapePoint> points,
                          ReadShape(shape));
  // SetDefaults_VolumeBindingArgs: an empty shape gets the default.
  if (!points.empty()) out.shape = std::move(points);
  if (out.bind_timeout_seconds < 0) {
    return timeout.Error(absl::StrCat(
        "Invalid value: ", out.bind_timeout_seconds,
        ": invalid BindTimeoutSeconds, should not be a negative value"));
  }
  KSCORE_RETURN_IF_ERROR(ValidateShape(shape, out.shape));
  return out;
}

}  // namespace kscore::model
