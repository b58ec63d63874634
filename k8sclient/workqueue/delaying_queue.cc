#include "k8sclient/workqueue/delaying_queue.h"

#include <utility>
#include <vector>

namespace draco::k8s::workqueue {

DelayingQueue::DelayingQueue(QueueOptions options)
    : Queue(std::move(options)), retries_(metrics_provider().NewRetriesMetric(name())) {
  loop_ = std::thread([this] { Loop(); });
}

DelayingQueue::~DelayingQueue() { StopLoop(); }

void DelayingQueue::StopLoop() {
  {
    std::lock_guard<std::mutex> l(wait_mu_);
    stopping_ = true;
  }
  wait_cv_.notify_all();
  if (loop_.joinable() && loop_.get_id() != std::this_thread::get_id()) loop_.join();
}

void DelayingQueue::ShutDown() {
  Queue::ShutDown();
  StopLoop();
}

void DelayingQueue::ShutDownWithDrain() {
  StopLoop();
  Queue::ShutDownWithDrain();
}

void DelayingQueue::AddAfter(const std::string& item, Clock::Duration delay) {
  if (ShuttingDown()) return;
  retries_->Inc();
  if (delay <= Clock::Duration::zero()) {
    Add(item);
    return;
  }
  const Clock::TimePoint ready = clock().Now() + delay;
  {
    std::lock_guard<std::mutex> l(wait_mu_);
    if (stopping_) return;
    auto it = ready_at_.find(item);
    if (it != ready_at_.end()) {
      if (it->second <= ready) return;  // an earlier (or equal) ready time is already pending
      waiting_.erase({it->second, item});
      it->second = ready;
    } else {
      ready_at_.emplace(item, ready);
    }
    waiting_.emplace(ready, item);
    changed_ = true;
  }
  wait_cv_.notify_all();
}

int DelayingQueue::WaitingLen() const {
  std::lock_guard<std::mutex> l(wait_mu_);
  return static_cast<int>(waiting_.size());
}

void DelayingQueue::Loop() {
  std::unique_lock<std::mutex> lock(wait_mu_);
  while (!stopping_) {
    const Clock::TimePoint now = clock().Now();
    std::vector<std::string> due;
    while (!waiting_.empty() && waiting_.begin()->first <= now) {
      due.push_back(waiting_.begin()->second);
      ready_at_.erase(waiting_.begin()->second);
      waiting_.erase(waiting_.begin());
    }
    if (!due.empty()) {
      lock.unlock();
      for (const auto& item : due) Add(item);
      lock.lock();
      continue;
    }
    Clock::TimePoint next = now + kMaxWait;
    if (!waiting_.empty()) next = std::min(next, waiting_.begin()->first);
    changed_ = false;
    clock().WaitUntil(wait_cv_, lock, next, [this] { return stopping_ || changed_; });
  }
}

}  // namespace draco::k8s::workqueue
