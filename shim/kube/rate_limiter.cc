#include "shim/kube/rate_limiter.h"

#include <algorithm>

namespace kscore::kube {

TokenBucket::TokenBucket(double qps, int burst, Clock clock)
    : qps_(qps),
      burst_(std::max(burst, 1)),
      clock_(std::move(clock)),
      tokens_(burst_),
      last_(clock_()) {}

absl::Duration TokenBucket::Reserve() {
  if (qps_ <= 0) return absl::ZeroDuration();
  absl::MutexLock lock(&mu_);
  const absl::Time now = clock_();
  if (now > last_) {
    tokens_ =
        std::min(burst_, tokens_ + absl::ToDoubleSeconds(now - last_) * qps_);
    last_ = now;
  }
  tokens_ -= 1;  // may go negative: that debt is the queue of waiters
  if (tokens_ >= 0) return absl::ZeroDuration();
  return absl::Seconds(-tokens_ / qps_);
}

void TokenBucket::Wait() {
  const absl::Duration d = Reserve();
  if (d > absl::ZeroDuration()) absl::SleepFor(d);
}

}  // namespace kscore::kube
