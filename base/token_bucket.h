// TokenBucket: a qps/burst rate limiter on an injected Clock (golang.org/x/time/rate semantics).
//
// The bucket holds at most `burst` tokens and refills at `qps` tokens per second. Reserve() always
// succeeds: it takes a token, possibly driving the balance negative, and returns how long the
// caller must wait before acting, so concurrent callers queue up fairly. qps <= 0 means unlimited.
//
// Thread-safe. Only Wait() blocks.
#pragma once

#include <condition_variable>
#include <mutex>

#include "base/clock.h"

namespace draco {

class TokenBucket {
 public:
  // `clock` must outlive the bucket. The bucket starts full.
  TokenBucket(double qps, int burst, Clock& clock);

  // Takes one token; returns the delay before it may be used (zero when one was available).
  Clock::Duration Reserve();
  // Takes a token only if one is available right now.
  bool TryAccept();
  // Reserve() then block on the clock for the returned delay.
  void Wait();

  double qps() const { return qps_; }
  int burst() const { return burst_; }

 private:
  void AdvanceLocked(Clock::TimePoint now);

  const double qps_;
  const int burst_;
  Clock& clock_;
  std::mutex mu_;
  double tokens_;
  Clock::TimePoint last_;
  // Parking spot for Wait(); never notified except by a FakeClock step.
  std::mutex wait_mu_;
  std::condition_variable wait_cv_;
};

}  // namespace draco
