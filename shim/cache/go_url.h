#ifndef KSCORE_SHIM_CACHE_GO_URL_H_
#define KSCORE_SHIM_CACHE_GO_URL_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

// The parts of Go's net/url (go1.26) and strconv that CSI migration's AWS
// volume IDs go through (csi_translation.h): upstream parses an
// "aws://<zone>/<id>" volume ID with url.Parse and keeps its Path, and its
// errors' words reach a Filter status.
namespace kscore::cache::go_url {

// url.Parse(raw).Path for a `raw` that starts with "<scheme>://" (the only
// URLs translated here); an InvalidArgument error whose message is the
// *url.Error's Error() where Parse fails. Exact but for a bracketed IP
// literal host, whose address is checked with inet_pton and whose
// netip.ParseAddr error is not reproduced word for word.
absl::StatusOr<std::string> ParsePath(absl::string_view raw);

// strconv.Quote(s). Non-ASCII characters count as printable except the
// C1 controls, the Unicode spaces and format characters and the private
// use areas (Go's unicode.IsPrint also excludes unassigned code points).
std::string Quote(absl::string_view s);

}  // namespace kscore::cache::go_url

#endif  // KSCORE_SHIM_CACHE_GO_URL_H_
