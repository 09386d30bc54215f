#include "scorer/framework/normalize.h"

#include <algorithm>

#include "model/saturating.h"

namespace kscore::framework {

void DefaultNormalizeScore(int64_t max_priority, bool reverse,
                           absl::Span<int64_t> scores) {
  int64_t max_count = 0;
  for (int64_t s : scores) max_count = std::max(max_count, s);
  if (max_count == 0) {
    if (reverse) std::fill(scores.begin(), scores.end(), max_priority);
    return;
  }
  for (int64_t& s : scores) {
    // In 128 bits: score * 100 overflows int64 once a count passes 2^63/100.
    s = model::MulDiv(max_priority, s, max_count);
    if (reverse) s = max_priority - s;
  }
}

}  // namespace kscore::framework
