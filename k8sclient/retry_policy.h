// RetryPolicy: whether a failed attempt of a REST request (or of opening a watch) is tried again,
// and after how long. The one home of k8sclient's retry rules; RestClientImpl runs every request
// and watch through one attempt loop that asks this policy after each failure.
//
// Rules (as client-go's rest.Request retries):
//   - a 401 while a refreshable token source is configured: the token is re-read and the request
//     retried once, at once (the token rotated);
//   - 429 or 5xx carrying Retry-After: retried after min(Retry-After, max_wait) (API priority and
//     fairness, an API server shutting down);
//   - a transport failure (connection refused or reset, TLS, no response: kUnavailable without an
//     HTTP code) of an idempotent request: retried after an exponential backoff (kInitialBackoff,
//     kBackoffFactor, kBackoffJitter, capped at max_wait); a write is never retried on a transport
//     failure, since it may have been applied;
//   - anything else (4xx, 5xx without Retry-After, client-side timeouts): returned to the caller.
// At most `max_retries` retries per request (RestConfig::max_retries).
//
// One RetryPolicy per request (it holds that request's backoff); thread-compatible.
#pragma once

#include <chrono>
#include <functional>

#include "base/backoff.h"
#include "base/clock.h"
#include "base/status.h"

namespace draco::k8s {

class RetryPolicy {
 public:
  static constexpr std::chrono::milliseconds kInitialBackoff{100};
  static constexpr double kBackoffFactor = 2.0;
  static constexpr double kBackoffJitter = 0.5;

  struct Decision {
    enum class Action { kStop, kRetry, kRefreshTokenAndRetry };
    Action action = Action::kStop;
    Clock::Duration wait = Clock::Duration::zero();  // before the retry
    bool retry() const { return action != Action::kStop; }
  };

  // `rand01` (for tests) replaces the backoff's jitter source.
  RetryPolicy(int max_retries, std::chrono::milliseconds max_wait, const Clock& clock,
              std::function<double()> rand01 = nullptr);

  // After attempt number `attempt` (0-based) got HTTP `code` with the given Retry-After seconds
  // (0 = none). `refreshable_token`: a token source that can be re-read is configured.
  Decision OnHttpError(int attempt, int code, int retry_after_seconds, bool refreshable_token);

  // After attempt `attempt` failed below HTTP with `status` (no response).
  Decision OnTransportError(int attempt, const Status& status, bool idempotent);

 private:
  int max_retries_;
  std::chrono::milliseconds max_wait_;
  ExponentialBackoff backoff_;
};

}  // namespace draco::k8s
