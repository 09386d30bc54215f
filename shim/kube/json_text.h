#ifndef KSCORE_SHIM_KUBE_JSON_TEXT_H_
#define KSCORE_SHIM_KUBE_JSON_TEXT_H_

#include <string>

#include "nlohmann/json.hpp"

namespace kscore::kube {

// The JSON text of a document that may hold strings off the wire: strings
// decoded from protobuf (proto2) or from a YAML file are not checked for
// UTF-8, and nlohmann's plain dump() throws on invalid UTF-8. As Go's
// encoding/json does, each invalid byte becomes U+FFFD instead.
inline std::string JsonText(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace kscore::kube

#endif  // KSCORE_SHIM_KUBE_JSON_TEXT_H_
