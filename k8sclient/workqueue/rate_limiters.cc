#include "k8sclient/workqueue/rate_limiters.h"

#include <algorithm>
#include <cmath>

namespace draco::k8s::workqueue {

ItemExponentialFailureRateLimiter::ItemExponentialFailureRateLimiter(Clock::Duration base,
                                                                     Clock::Duration max)
    : base_(base), max_(max) {}

Clock::Duration ItemExponentialFailureRateLimiter::When(const std::string& item) {
  std::lock_guard<std::mutex> l(mu_);
  const int exp = failures_[item]++;
  // Compute in double so large exponents saturate instead of overflowing.
  const double backoff = static_cast<double>(base_.count()) * std::pow(2.0, exp);
  if (backoff >= static_cast<double>(max_.count())) return max_;
  return Clock::Duration(static_cast<Clock::Duration::rep>(backoff));
}

void ItemExponentialFailureRateLimiter::Forget(const std::string& item) {
  std::lock_guard<std::mutex> l(mu_);
  failures_.erase(item);
}

int ItemExponentialFailureRateLimiter::NumRequeues(const std::string& item) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = failures_.find(item);
  return it == failures_.end() ? 0 : it->second;
}

Clock::Duration MaxOfRateLimiter::When(const std::string& item) {
  Clock::Duration out = Clock::Duration::zero();
  for (auto& l : limiters_) out = std::max(out, l->When(item));
  return out;
}

void MaxOfRateLimiter::Forget(const std::string& item) {
  for (auto& l : limiters_) l->Forget(item);
}

int MaxOfRateLimiter::NumRequeues(const std::string& item) {
  int out = 0;
  for (auto& l : limiters_) out = std::max(out, l->NumRequeues(item));
  return out;
}

std::unique_ptr<RateLimiter> DefaultControllerRateLimiter(Clock& clock) {
  std::vector<std::unique_ptr<RateLimiter>> v;
  v.push_back(std::make_unique<ItemExponentialFailureRateLimiter>(
      std::chrono::duration_cast<Clock::Duration>(kDefaultItemBaseDelay),
      std::chrono::duration_cast<Clock::Duration>(kDefaultItemMaxDelay)));
  v.push_back(std::make_unique<BucketRateLimiter>(kDefaultBucketQps, kDefaultBucketBurst, clock));
  return std::make_unique<MaxOfRateLimiter>(std::move(v));
}

}  // namespace draco::k8s::workqueue
