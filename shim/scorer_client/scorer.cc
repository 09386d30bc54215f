#include "shim/scorer_client/scorer.h"

namespace kscore::scorer_client {

CallOutcome ClassifyCall(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk:
      return CallOutcome::kAnswered;
    case absl::StatusCode::kUnavailable:
      return CallOutcome::kUnreachable;
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kCancelled:
      return CallOutcome::kNoAnswer;
    case absl::StatusCode::kResourceExhausted:
      return CallOutcome::kOverloaded;
    case absl::StatusCode::kAborted:
    case absl::StatusCode::kUnknown:
    case absl::StatusCode::kUnimplemented:
    case absl::StatusCode::kUnauthenticated:
    case absl::StatusCode::kPermissionDenied:
      return CallOutcome::kTransport;
    default:
      return CallOutcome::kRefused;
  }
}

bool Retryable(CallOutcome outcome) {
  return outcome == CallOutcome::kUnreachable ||
         outcome == CallOutcome::kNoAnswer ||
         outcome == CallOutcome::kOverloaded;
}

bool TransportFailure(CallOutcome outcome) {
  return outcome != CallOutcome::kAnswered && outcome != CallOutcome::kRefused;
}

}  // namespace kscore::scorer_client
