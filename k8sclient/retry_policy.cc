#include "k8sclient/retry_policy.h"

#include <algorithm>

namespace draco::k8s {

RetryPolicy::RetryPolicy(int max_retries, std::chrono::milliseconds max_wait, const Clock& clock,
                         std::function<double()> rand01)
    : max_retries_(max_retries),
      max_wait_(max_wait),
      backoff_({std::chrono::duration_cast<Clock::Duration>(kInitialBackoff), kBackoffFactor,
                kBackoffJitter, std::chrono::duration_cast<Clock::Duration>(max_wait),
                Clock::Duration::zero()},
               clock, std::move(rand01)) {}

RetryPolicy::Decision RetryPolicy::OnHttpError(int attempt, int code, int retry_after_seconds,
                                               bool refreshable_token) {
  Decision d;
  if (attempt >= max_retries_) return d;
  if (code == 401 && refreshable_token && attempt == 0) {
    d.action = Decision::Action::kRefreshTokenAndRetry;
    return d;
  }
  if ((code == 429 || code >= 500) && retry_after_seconds > 0) {
    d.action = Decision::Action::kRetry;
    d.wait = std::chrono::duration_cast<Clock::Duration>(
        std::min<std::chrono::milliseconds>(std::chrono::seconds(retry_after_seconds), max_wait_));
  }
  return d;
}

RetryPolicy::Decision RetryPolicy::OnTransportError(int attempt, const Status& status,
                                                    bool idempotent) {
  Decision d;
  if (attempt >= max_retries_ || !idempotent || status.code() != StatusCode::kUnavailable) {
    return d;
  }
  d.action = Decision::Action::kRetry;
  d.wait = backoff_.Next();
  return d;
}

}  // namespace draco::k8s
