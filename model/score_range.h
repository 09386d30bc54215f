#ifndef KSCORE_MODEL_SCORE_RANGE_H_
#define KSCORE_MODEL_SCORE_RANGE_H_

#include <cstdint>
#include <limits>

namespace kscore::model {

// A normalised score's bounds, as kube-scheduler's framework.MaxNodeScore
// and MinNodeScore.
inline constexpr int64_t kMaxNodeScore = 100;
inline constexpr int64_t kMinNodeScore = 0;

// The raw scores a score plugin can give, bounds included.
struct ScoreRange {
  int64_t min = 0;
  int64_t max = std::numeric_limits<int64_t>::max();
};

}  // namespace kscore::model

#endif  // KSCORE_MODEL_SCORE_RANGE_H_
