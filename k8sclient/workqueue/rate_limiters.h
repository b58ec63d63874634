// Rate limiters for retries (client-go default_rate_limiters.go, lifecycle.md section 5.4).
//
// When(item) returns how long to wait before the item's next retry and records a failure;
// Forget(item) clears the item's history after success; NumRequeues(item) counts failures.
// DefaultControllerRateLimiter() is the max of a per-item exponential limiter (5ms * 2^n, capped
// at 1000s) and a shared 10 qps / burst 100 token bucket.
//
// All limiters are thread-safe and never block.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/clock.h"
#include "base/token_bucket.h"

namespace draco::k8s::workqueue {

class RateLimiter {
 public:
  virtual ~RateLimiter() = default;
  virtual Clock::Duration When(const std::string& item) = 0;
  virtual void Forget(const std::string& item) = 0;
  virtual int NumRequeues(const std::string& item) = 0;
};

// base * 2^failures, capped at max.
class ItemExponentialFailureRateLimiter final : public RateLimiter {
 public:
  ItemExponentialFailureRateLimiter(Clock::Duration base, Clock::Duration max);
  Clock::Duration When(const std::string& item) override;
  void Forget(const std::string& item) override;
  int NumRequeues(const std::string& item) override;

 private:
  const Clock::Duration base_;
  const Clock::Duration max_;
  std::mutex mu_;
  std::unordered_map<std::string, int> failures_;
};

// Overall rate limit shared by all items; keeps no per-item state.
class BucketRateLimiter final : public RateLimiter {
 public:
  // `clock` must outlive the limiter.
  BucketRateLimiter(double qps, int burst, Clock& clock) : bucket_(qps, burst, clock) {}
  Clock::Duration When(const std::string&) override { return bucket_.Reserve(); }
  void Forget(const std::string&) override {}
  int NumRequeues(const std::string&) override { return 0; }

 private:
  TokenBucket bucket_;
};

// The longest delay of its members; NumRequeues is the maximum of theirs.
class MaxOfRateLimiter final : public RateLimiter {
 public:
  explicit MaxOfRateLimiter(std::vector<std::unique_ptr<RateLimiter>> limiters)
      : limiters_(std::move(limiters)) {}
  Clock::Duration When(const std::string& item) override;
  void Forget(const std::string& item) override;
  int NumRequeues(const std::string& item) override;

 private:
  std::vector<std::unique_ptr<RateLimiter>> limiters_;
};

inline constexpr std::chrono::milliseconds kDefaultItemBaseDelay{5};
inline constexpr std::chrono::seconds kDefaultItemMaxDelay{1000};
inline constexpr double kDefaultBucketQps = 10.0;
inline constexpr int kDefaultBucketBurst = 100;

// max(exponential 5ms..1000s per item, bucket 10 qps / burst 100). `clock` must outlive it.
std::unique_ptr<RateLimiter> DefaultControllerRateLimiter(Clock& clock);

}  // namespace draco::k8s::workqueue
