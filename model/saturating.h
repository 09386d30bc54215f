#ifndef KSCORE_MODEL_SATURATING_H_
#define KSCORE_MODEL_SATURATING_H_

// int64 arithmetic that clamps at the ends of the range instead of wrapping.
// Quantities and counts come from the wire: a sum that wrapped would turn
// "far too much" into "fits" (two containers near INT64_MAX make every node
// feasible). kube-scheduler's Go wraps; clamped, the comparisons that
// follow still say what the exact values would. Equal to plain arithmetic
// whenever that does not overflow, so scores match upstream's there.

#include <cstdint>
#include <limits>

namespace kscore::model {

inline constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
inline constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

// The int64 nearest to v.
constexpr int64_t Clamp128(__int128 v) {
  if (v > kInt64Max) return kInt64Max;
  if (v < kInt64Min) return kInt64Min;
  return static_cast<int64_t>(v);
}

constexpr int64_t SatAdd(int64_t a, int64_t b) {
  int64_t r = 0;
  if (!__builtin_add_overflow(a, b, &r)) return r;
  return b > 0 ? kInt64Max : kInt64Min;
}

constexpr int64_t SatSub(int64_t a, int64_t b) {
  int64_t r = 0;
  if (!__builtin_sub_overflow(a, b, &r)) return r;
  return b < 0 ? kInt64Max : kInt64Min;
}

constexpr int64_t SatMul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (!__builtin_mul_overflow(a, b, &r)) return r;
  return (a < 0) == (b < 0) ? kInt64Max : kInt64Min;
}

// a * b / c with the product in 128 bits (it cannot overflow there), the
// quotient truncated toward zero as C++ and Go divide, then clamped. The
// callers' c is never 0 (they test first, as kube-scheduler does); should
// it be, the answer is 0 rather than a crash on a request's numbers.
constexpr int64_t MulDiv(int64_t a, int64_t b, int64_t c) {
  if (c == 0) return 0;
  return Clamp128(static_cast<__int128>(a) * b / c);
}

// A double truncated toward zero to int64, clamped (NaN gives 0): where a
// plain cast of an out-of-range value is undefined behaviour.
constexpr int64_t SatFromDouble(double v) {
  if (v != v) return 0;  // NaN
  // 2^63 is exact in a double; every double below it converts.
  if (v >= 9223372036854775808.0) return kInt64Max;
  if (v <= -9223372036854775808.0) return kInt64Min;
  return static_cast<int64_t>(v);
}

}  // namespace kscore::model

#endif  // KSCORE_MODEL_SATURATING_H_
