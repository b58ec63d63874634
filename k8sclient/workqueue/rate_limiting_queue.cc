#include "k8sclient/workqueue/rate_limiting_queue.h"

#include <utility>

namespace draco::k8s::workqueue {

RateLimitingQueue::RateLimitingQueue(QueueOptions options, std::unique_ptr<RateLimiter> limiter)
    : DelayingQueue(std::move(options)),
      limiter_(limiter != nullptr ? std::move(limiter) : DefaultControllerRateLimiter(clock())) {}

void RateLimitingQueue::AddRateLimited(const std::string& item) {
  AddAfter(item, limiter_->When(item));
}

void RateLimitingQueue::Forget(const std::string& item) { limiter_->Forget(item); }

int RateLimitingQueue::NumRequeues(const std::string& item) { return limiter_->NumRequeues(item); }

}  // namespace draco::k8s::workqueue
