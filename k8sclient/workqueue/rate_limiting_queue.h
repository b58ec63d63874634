// RateLimitingQueue: a DelayingQueue whose retries are spaced by a RateLimiter (client-go
// rate_limiting_queue.go). Controllers call AddRateLimited(key) after a failed reconcile and
// Forget(key) after a successful one.
//
// Thread-safe.
#pragma once

#include <memory>
#include <string>

#include "k8sclient/workqueue/delaying_queue.h"
#include "k8sclient/workqueue/rate_limiters.h"

namespace draco::k8s::workqueue {

class RateLimitingQueue : public DelayingQueue {
 public:
  // Null `limiter` means DefaultControllerRateLimiter(clock).
  explicit RateLimitingQueue(QueueOptions options = {},
                             std::unique_ptr<RateLimiter> limiter = nullptr);

  // AddAfter(item, limiter.When(item)).
  void AddRateLimited(const std::string& item);
  // Clears the item's failure history (it does not remove the item from the queue).
  void Forget(const std::string& item);
  int NumRequeues(const std::string& item);

 private:
  std::unique_ptr<RateLimiter> limiter_;
};

}  // namespace draco::k8s::workqueue
