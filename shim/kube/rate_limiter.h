#ifndef KSCORE_SHIM_KUBE_RATE_LIMITER_H_
#define KSCORE_SHIM_KUBE_RATE_LIMITER_H_

#include <functional>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace kscore::kube {

// client-go's token bucket (flowcontrol.NewTokenBucketRateLimiter): holds up
// to `burst` tokens, refilled at `qps` per second. qps <= 0 means unlimited.
class TokenBucket {
 public:
  using Clock = std::function<absl::Time()>;

  TokenBucket(double qps, int burst, Clock clock = absl::Now);

  // Takes a token and returns how long the caller must wait before using it
  // (zero when one was available). Callers queue up: each reservation pushes
  // the next one further out.
  absl::Duration Reserve();

  // Reserve(), then sleep that long.
  void Wait();

 private:
  const double qps_;
  const double burst_;
  const Clock clock_;
  absl::Mutex mu_;
  double tokens_ ABSL_GUARDED_BY(mu_);
  absl::Time last_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kscore::kube

#endif  // KSCORE_SHIM_KUBE_RATE_LIMITER_H_
