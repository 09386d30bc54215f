#ifndef KSCORE_SCORER_FRAMEWORK_SHAPE_SCORE_H_
#define KSCORE_SCORER_FRAMEWORK_SHAPE_SCORE_H_

#include <cstdint>

#include "absl/types/span.h"
#include "model/plugin_args/utilization_shape.h"

namespace kscore::framework {

// kube-scheduler's helper.BuildBrokenLinearFunction over `shape` (sorted by
// utilization, non-empty, scores already scaled to [0, kMaxNodeScore]): the
// first point's score below it, the last's above it, linear in between
// (integer division, as Go).
inline int64_t BrokenLinear(
    absl::Span<const model::UtilizationShapePoint> shape, int64_t p) {
  for (size_t i = 0; i < shape.size(); ++i) {
    if (p <= shape[i].utilization) {
      if (i == 0) return shape[0].score;
      return shape[i - 1].score +
             (shape[i].score - shape[i - 1].score) *
                 (p - shape[i - 1].utilization) /
                 (shape[i].utilization - shape[i - 1].utilization);
    }
  }
  return shape.back().score;
}

}  // namespace kscore::framework

#endif  // KSCORE_SCORER_FRAMEWORK_SHAPE_SCORE_H_
