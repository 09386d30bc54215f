#ifndef KSCORE_SHIM_KUBE_JSON_PARSE_H_
#define KSCORE_SHIM_KUBE_JSON_PARSE_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace kscore::kube {

// The deepest nesting of arrays and objects the shim reads in JSON: the
// bound Kubernetes itself parses JSON with (maxNestingDepth in
// sigs.k8s.io/json's scanner, internal/golang/encoding/json/scanner.go, and
// maxDepth in k8s.io/apimachinery/pkg/util/json), so the shim reads any
// object the API server can hold. Past it nlohmann's recursive copy and
// dump() would overflow the stack; within it they stay on a few MiB.
inline constexpr int kMaxJsonDepth = 10000;

// Whether arrays and objects in `text` nest deeper than `max_depth`,
// counted outside strings: exact for any text that is JSON.
inline bool NestsDeeperThan(absl::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        break;
      case '[':
      case '{':
        if (++depth > max_depth) return true;
        break;
      case ']':
      case '}':
        --depth;
        break;
      default:
        break;
    }
  }
  return false;
}

// Text from outside the process (a request body, an API server's answer, a
// watch line) as JSON: an error naming the fault for text that is not JSON
// or nests deeper than kMaxJsonDepth. Never throws.
inline absl::StatusOr<nlohmann::json> ParseJson(absl::string_view text) {
  if (NestsDeeperThan(text, kMaxJsonDepth)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "JSON nests arrays and objects deeper than ", kMaxJsonDepth));
  }
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("not JSON: ", e.what()));
  }
}

}  // namespace kscore::kube

#endif  // KSCORE_SHIM_KUBE_JSON_PARSE_H_
