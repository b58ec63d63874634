// ExponentialBackoff: the delay schedule used between retries of a failing operation.
//
// Mirrors client-go's wait.Backoff + exponential backoff manager: the delay starts at `initial`,
// grows by `factor` after every step up to `cap`, and each returned delay gets up to
// `jitter * delay` of random extra time. If `reset_after` > 0 and more than that much time passed
// since the previous Next() call, the schedule starts over (a healthy period forgives earlier
// failures).
//
// Thread-compatible: callers serialize access (each retry loop owns its own instance). Never
// blocks; the caller waits on its Clock.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <optional>
#include <random>

#include "base/clock.h"

namespace draco {

class ExponentialBackoff {
 public:
  using Duration = Clock::Duration;

  struct Options {
    Duration initial = std::chrono::milliseconds(800);
    double factor = 2.0;
    // Extra random delay as a fraction of the base delay: 1.0 means up to +100%.
    double jitter = 0.0;
    Duration cap = std::chrono::seconds(30);
    // 0 disables the reset.
    Duration reset_after = Duration::zero();
  };

  // `clock` must outlive this object. `rand01` returns a uniform value in [0, 1); the default is a
  // per-thread Mersenne Twister seeded once per thread (a backoff is built for every REST call, so
  // seeding one per instance cost a random_device read per request; tests inject a sequence).
  ExponentialBackoff(Options options, const Clock& clock, std::function<double()> rand01 = nullptr)
      : options_(options), clock_(clock), rand01_(std::move(rand01)), next_(options.initial) {
    if (!rand01_) rand01_ = &ThreadRand01;
  }

  // Returns the delay to wait now and advances the schedule.
  Duration Next() {
    const Clock::TimePoint now = clock_.Now();
    if (options_.reset_after > Duration::zero() && last_.has_value() &&
        now - *last_ > options_.reset_after) {
      next_ = options_.initial;
    }
    last_ = now;
    Duration base = next_;
    auto grown =
        std::chrono::duration_cast<Duration>(std::chrono::duration<double, Duration::period>(
            static_cast<double>(next_.count()) * options_.factor));
    next_ = std::min(grown, options_.cap);
    base = std::min(base, options_.cap);
    if (options_.jitter > 0) {
      base += std::chrono::duration_cast<Duration>(std::chrono::duration<double, Duration::period>(
          static_cast<double>(base.count()) * options_.jitter * rand01_()));
    }
    return base;
  }

  // Starts the schedule over at `initial`.
  void Reset() {
    next_ = options_.initial;
    last_.reset();
  }

 private:
  static double ThreadRand01() {
    thread_local std::mt19937_64 gen(std::random_device{}());
    return std::uniform_real_distribution<double>(0.0, 1.0)(gen);
  }

  Options options_;
  const Clock& clock_;
  std::function<double()> rand01_;
  Duration next_;
  std::optional<Clock::TimePoint> last_;
};

}  // namespace draco
