#include "shim/cache/quantity.h"

#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace kscore::cache {
namespace {

struct Suffix {
  absl::string_view text;
  int base;  // 2 or 10
  int exp;   // power of base
};

constexpr Suffix kSuffixes[] = {
    {"Ki", 2, 10}, {"Mi", 2, 20}, {"Gi", 2, 30}, {"Ti", 2, 40}, {"Pi", 2, 50},
    {"Ei", 2, 60}, {"n", 10, -9}, {"u", 10, -6}, {"m", 10, -3}, {"k", 10, 3},
    {"M", 10, 6},  {"G", 10, 9},  {"T", 10, 12}, {"P", 10, 15}, {"E", 10, 18},
};

}  // namespace

absl::StatusOr<int64_t> ParseQuantity(absl::string_view s, int scale_exp) {
  auto bad = [&]() {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid quantity \"", s, "\""));
  };
  if (s.empty()) return bad();
  // Split number and suffix.
  size_t i = 0;
  if (s[i] == '+' || s[i] == '-') ++i;
  while (i < s.size() &&
         (absl::ascii_isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.'))
    ++i;
  absl::string_view number = s.substr(0, i);
  absl::string_view suffix = s.substr(i);
  if (number.empty() || number == "+" || number == "-") return bad();
  int base = 10, exp = 0;
  if (!suffix.empty()) {
    if (suffix[0] == 'e' || suffix[0] == 'E') {
      int e = 0;
      if (!absl::SimpleAtoi(suffix.substr(1), &e) || e > 18 || e < -18) {
        return bad();
      }
      exp = e;
    } else {
      bool found = false;
      for (const Suffix& sf : kSuffixes) {
        if (sf.text == suffix) {
          base = sf.base;
          exp = sf.exp;
          found = true;
          break;
        }
      }
      if (!found) return bad();
    }
  }
  // Exact arithmetic on the decimal digits: value = digits * 10^-frac.
  bool negative = number[0] == '-';
  if (number[0] == '+' || number[0] == '-') number.remove_prefix(1);
  __int128 digits = 0;
  int frac = 0;
  bool seen_dot = false;
  for (char c : number) {
    if (c == '.') {
      if (seen_dot) return bad();
      seen_dot = true;
      continue;
    }
    if (digits > (static_cast<__int128>(1) << 50)) return bad();
    digits = digits * 10 + (c - '0');
    if (seen_dot) ++frac;
  }
  // Multiply by base^exp and by 10^-scale_exp, then divide by 10^frac,
  // rounding up (away from zero for positives, as ScaledValue).
  __int128 num = digits;
  __int128 den = 1;
  auto mul_pow = [](__int128& v, int b, int e) {
    for (int k = 0; k < e; ++k) v *= b;
  };
  if (base == 2) {
    mul_pow(num, 2, exp);
  } else if (exp >= 0) {
    mul_pow(num, 10, exp);
  } else {
    mul_pow(den, 10, -exp);
  }
  if (scale_exp <= 0) {
    mul_pow(num, 10, -scale_exp);
  } else {
    mul_pow(den, 10, scale_exp);
  }
  mul_pow(den, 10, frac);
  __int128 q = num / den;
  if (num % den != 0) ++q;
  if (q > INT64_MAX) return bad();
  return negative ? -static_cast<int64_t>(q) : static_cast<int64_t>(q);
}

}  // namespace kscore::cache
