#ifndef KSCORE_MODEL_PLUGIN_ARGS_UTILIZATION_SHAPE_H_
#define KSCORE_MODEL_PLUGIN_ARGS_UTILIZATION_SHAPE_H_

#include <cstdint>

namespace kscore::model {

// A point of a scoring function shape, as configured
// (config.UtilizationShapePoint): utilization in [0, 100], score in
// [0, kMaxCustomPriorityScore]. NodeResourcesFit's RequestedToCapacityRatio
// and VolumeBinding's shape use it.
struct UtilizationShapePoint {
  int64_t utilization = 0;
  int64_t score = 0;
};

// config.MaxCustomPriorityScore: shape scores are in [0, 10].
inline constexpr int64_t kMaxCustomPriorityScore = 10;

}  // namespace kscore::model

#endif  // KSCORE_MODEL_PLUGIN_ARGS_UTILIZATION_SHAPE_H_
