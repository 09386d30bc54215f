#include "model/validation.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace kscore::model {
namespace {

bool IsAlnum(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c));
}

// [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?
bool IsQualifiedNamePart(absl::string_view s) {
  if (s.empty() || !IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

// DNS-1123 subdomain: lower-case labels [a-z0-9]([-a-z0-9]*[a-z0-9])? joined by
// dots.
bool IsDns1123Subdomain(absl::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  for (absl::string_view label : absl::StrSplit(s, '.')) {
    if (label.empty()) return false;
    auto lower_alnum = [](char c) {
      return absl::ascii_isdigit(static_cast<unsigned char>(c)) ||
             (c >= 'a' && c <= 'z');
    };
    if (!lower_alnum(label.front()) || !lower_alnum(label.back())) return false;
    for (char c : label) {
      if (!lower_alnum(c) && c != '-') return false;
    }
  }
  return true;
}

}  // namespace

std::string CheckLabelKey(absl::string_view key) {
  absl::string_view name = key;
  if (size_t slash = key.find('/'); slash != absl::string_view::npos) {
    absl::string_view prefix = key.substr(0, slash);
    name = key.substr(slash + 1);
    if (name.find('/') != absl::string_view::npos) {
      return "a qualified name must consist of an optional prefix and a name "
             "separated by a single '/'";
    }
    if (!IsDns1123Subdomain(prefix)) {
      return "prefix part must be a lowercase DNS-1123 subdomain";
    }
  }
  if (name.empty()) return "name part must be non-empty";
  if (name.size() > 63) return "name part must be no more than 63 characters";
  if (!IsQualifiedNamePart(name)) {
    return "name part must consist of alphanumeric characters, '-', '_' or "
           "'.', and must start and end with an alphanumeric character";
  }
  return "";
}

}  // namespace kscore::model
