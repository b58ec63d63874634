#include "base/token_bucket.h"

#include <algorithm>
#include <chrono>

namespace draco {

TokenBucket::TokenBucket(double qps, int burst, Clock& clock)
    : qps_(qps), burst_(std::max(burst, 1)), clock_(clock), tokens_(burst_), last_(clock.Now()) {}

void TokenBucket::AdvanceLocked(Clock::TimePoint now) {
  if (now <= last_) return;
  const double elapsed = std::chrono::duration<double>(now - last_).count();
  tokens_ = std::min(static_cast<double>(burst_), tokens_ + elapsed * qps_);
  last_ = now;
}

Clock::Duration TokenBucket::Reserve() {
  if (qps_ <= 0) return Clock::Duration::zero();
  std::lock_guard<std::mutex> l(mu_);
  AdvanceLocked(clock_.Now());
  tokens_ -= 1.0;
  if (tokens_ >= 0) return Clock::Duration::zero();
  return std::chrono::duration_cast<Clock::Duration>(
      std::chrono::duration<double>(-tokens_ / qps_));
}

bool TokenBucket::TryAccept() {
  if (qps_ <= 0) return true;
  std::lock_guard<std::mutex> l(mu_);
  AdvanceLocked(clock_.Now());
  if (tokens_ < 1.0) return false;
  tokens_ -= 1.0;
  return true;
}

void TokenBucket::Wait() {
  const Clock::Duration delay = Reserve();
  if (delay <= Clock::Duration::zero()) return;
  // The condition variable is a member, not a local: FakeClock::Step() may still be notifying it
  // just after this waiter returned.
  std::unique_lock<std::mutex> lock(wait_mu_);
  clock_.WaitUntil(wait_cv_, lock, clock_.Now() + delay, [] { return false; });
}

}  // namespace draco
