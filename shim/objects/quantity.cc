#include "shim/objects/quantity.h"

#include <cstdint>
#include <limits>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace kscore::objects {
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

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// Past this many integer digits a value is at least 10^19 > INT64_MAX.
constexpr int64_t kMaxIntegerDigits = 19;

// ceil(0.f * 2^bin_exp) for the fraction digits f: from the last digit to
// the first, c <- ceil((digit * 2^bin_exp + c) / 10), since
// ceil((a + x) / 10) = ceil((a + ceil(x)) / 10) for an integer a. The
// `zeros` leading zeros of the fraction come first; c never exceeds
// 2^bin_exp + 1, and past 20 zeros it is 1 or 0 and stays so.
unsigned __int128 FractionCeil(absl::string_view digits, int64_t zeros,
                               int bin_exp) {
  const unsigned __int128 scale = static_cast<unsigned __int128>(1) << bin_exp;
  unsigned __int128 c = 0;
  for (size_t i = digits.size(); i-- > 0;) {
    c = (static_cast<unsigned>(digits[i] - '0') * scale + c + 9) / 10;
  }
  for (int64_t i = 0; i < zeros && i < 20; ++i) c = (c + 9) / 10;
  return c;
}

// The suffix's base and power ("Mi": 2^20, "k": 10^3, "e3": 10^3); false
// for no suffix the API server knows. "E" and "Ei" are suffixes (exa, exbi);
// any other "e..."/"E..." is a decimal exponent.
bool ParseSuffix(absl::string_view suffix, int* base, int* exp) {
  *base = 10;
  *exp = 0;
  if (suffix.empty()) return true;
  for (const Suffix& sf : kSuffixes) {
    if (sf.text == suffix) {
      *base = sf.base;
      *exp = sf.exp;
      return true;
    }
  }
  return (suffix[0] == 'e' || suffix[0] == 'E') &&
         absl::SimpleAtoi(suffix.substr(1), exp);
}

// The unsigned number as 0.<digits> * 10^point, exactly: leading zeros are
// dropped, so the first digit is not 0 (no digits for zero). False for a
// second '.'.
bool SplitDigits(absl::string_view number, std::string* digits,
                 int64_t* point) {
  digits->reserve(number.size());
  *point = 0;
  bool seen_dot = false;
  for (char c : number) {
    if (c == '.') {
      if (seen_dot) return false;
      seen_dot = true;
      continue;
    }
    if (digits->empty() && c == '0') {
      if (seen_dot) --*point;
      continue;
    }
    digits->push_back(c);
    if (!seen_dot) ++*point;
  }
  return true;
}

// ceil(0.<digits> * 10^point * 2^bin_exp), or more than INT64_MAX when the
// value is beyond int64. The integer part has at most 19 digits (padded
// with zeros past the digits given); the fraction adds its ceiling.
unsigned __int128 Magnitude(absl::string_view digits, int64_t point,
                            int bin_exp) {
  if (point > kMaxIntegerDigits)
    return static_cast<unsigned __int128>(kMax) + 1;
  unsigned __int128 integer = 0;
  for (int64_t k = 0; k < point; ++k) {
    const size_t at = static_cast<size_t>(k);
    integer = integer * 10 + (at < digits.size() ? digits[at] - '0' : 0);
  }
  const absl::string_view fraction =
      point >= static_cast<int64_t>(digits.size())
          ? absl::string_view()
          : digits.substr(static_cast<size_t>(point > 0 ? point : 0));
  return (integer << bin_exp) +
         FractionCeil(fraction, point < 0 ? -point : 0, bin_exp);
}

}  // namespace

absl::StatusOr<int64_t> ParseQuantity(absl::string_view s, int scale_exp) {
  auto bad = [&]() {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid quantity \"", s, "\""));
  };
  // Split number and suffix.
  size_t i = 0;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) ++i;
  while (i < s.size() &&
         (absl::ascii_isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.'))
    ++i;
  absl::string_view number = s.substr(0, i);
  int base = 10, exp = 0;
  if (number.empty() || number == "+" || number == "-" ||
      !ParseSuffix(s.substr(i), &base, &exp)) {
    return bad();
  }
  const bool negative = number[0] == '-';
  if (number[0] == '+' || number[0] == '-') number.remove_prefix(1);

  // The value is 0.<digits> * 10^point * 2^bin_exp: the decimal exponent
  // (of the suffix and of the scale asked for) only moves the point.
  std::string digits;
  int64_t point = 0;
  if (!SplitDigits(number, &digits, &point)) return bad();
  if (digits.empty()) return 0;
  point += (base == 10 ? exp : 0) - scale_exp;
  const unsigned __int128 value = Magnitude(digits, point, base == 2 ? exp : 0);

  // Rounded up, as Quantity.ScaledValue does (away from zero; a negative
  // value is the negation of its magnitude's). Beyond int64: INT64_MAX
  // (INT64_MIN + 1 when negative), as the API server caps quantities.
  const int64_t m = value > static_cast<unsigned __int128>(kMax)
                        ? kMax
                        : static_cast<int64_t>(value);
  return negative ? -m : m;
}

}  // namespace kscore::objects
