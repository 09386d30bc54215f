#include "scorer/framework/go_math.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace kscore::framework {
namespace {

constexpr double Bits(uint64_t b) { return std::bit_cast<double>(b); }

// ln(2) split in a high part with trailing zero bits (k * kLn2Hi is exact)
// and the rest.
constexpr double kLn2Hi = Bits(0x3fe62e42fee00000);
constexpr double kLn2Lo = Bits(0x3dea39ef35793c76);
// The minimax polynomial in s^2 approximating (log(1+f) - f + f^2/2) / s.
constexpr double kL1 = Bits(0x3FE5555555555593);
constexpr double kL2 = Bits(0x3FD999999997FA04);
constexpr double kL3 = Bits(0x3FD2492494229359);
constexpr double kL4 = Bits(0x3FCC71C51D8E78AF);
constexpr double kL5 = Bits(0x3FC7466496CB03DE);
constexpr double kL6 = Bits(0x3FC39A09D078C69F);
constexpr double kL7 = Bits(0x3FC2F112DF3E5244);
// math.Sqrt2 / 2 rounded to double.
constexpr double kHalfSqrt2 = 0.70710678118654752440;

}  // namespace

double GoLog(double x) {
  if (std::isnan(x) || x == std::numeric_limits<double>::infinity()) return x;
  if (x < 0) return std::numeric_limits<double>::quiet_NaN();
  if (x == 0) return -std::numeric_limits<double>::infinity();
  // x = 2^k * (1 + f) with sqrt(2)/2 <= 1 + f < sqrt(2).
  int exp = 0;
  double m = std::frexp(x, &exp);
  if (m < kHalfSqrt2) {
    m *= 2;
    --exp;
  }
  // Each operation is rounded on its own, in Go's order: the build compiles
  // this file with -ffp-contract=off so that no multiply-add is fused (Go on
  // amd64 fuses none).
  const double f = m - 1;
  const double k = exp;
  const double s = f / (2 + f);
  const double s2 = s * s;
  const double s4 = s2 * s2;
  const double t1 = s2 * (kL1 + s4 * (kL3 + s4 * (kL5 + s4 * kL7)));
  const double t2 = s4 * (kL2 + s4 * (kL4 + s4 * kL6));
  const double r = t1 + t2;
  const double hfsq = 0.5 * f * f;
  return k * kLn2Hi - ((hfsq - (s * (hfsq + r) + k * kLn2Lo)) - f);
}

}  // namespace kscore::framework
