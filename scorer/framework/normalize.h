#ifndef KSCORE_SCORER_FRAMEWORK_NORMALIZE_H_
#define KSCORE_SCORER_FRAMEWORK_NORMALIZE_H_

#include <cstdint>

#include "absl/types/span.h"

namespace kscore::framework {

// kube-scheduler's helper.DefaultNormalizeScore: scales scores so the highest
// becomes max_priority (score * max_priority / max, integer division). With
// reverse, the result is max_priority - that. All zero stays all zero (or all
// max_priority with reverse).
void DefaultNormalizeScore(int64_t max_priority, bool reverse,
                           absl::Span<int64_t> scores);

}  // namespace kscore::framework

#endif  // KSCORE_SCORER_FRAMEWORK_NORMALIZE_H_
