// DelayingQueue: a Queue whose items can be added after a delay (client-go delaying_queue.go).
//
// AddAfter(item, d) with d <= 0 is Add(item). Otherwise the item waits, keyed by item: if it is
// already waiting, only an earlier ready time replaces the pending one. A background thread,
// driven by the injected Clock (FakeClock::Step in tests), moves due items into the queue; it
// wakes at the next ready time and at least every 10s (kMaxWait).
//
// Thread-safe. Shutting down stops the background thread; waiting items are dropped.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>

#include "k8sclient/workqueue/queue.h"

namespace draco::k8s::workqueue {

class DelayingQueue : public Queue {
 public:
  // Heartbeat of the background thread, so a lost wake-up cannot stall items forever.
  static constexpr std::chrono::seconds kMaxWait{10};

  explicit DelayingQueue(QueueOptions options = {});
  ~DelayingQueue() override;
  DelayingQueue(const DelayingQueue&) = delete;
  DelayingQueue& operator=(const DelayingQueue&) = delete;

  // Adds `item` once `delay` has passed on the clock.
  void AddAfter(const std::string& item, Clock::Duration delay);
  // Items waiting for their ready time.
  int WaitingLen() const;

  void ShutDown() override;
  void ShutDownWithDrain() override;

 private:
  void Loop();
  void StopLoop();

  std::shared_ptr<CounterMetric> retries_;
  mutable std::mutex wait_mu_;
  std::condition_variable wait_cv_;
  std::set<std::pair<Clock::TimePoint, std::string>> waiting_;  // ordered by ready time
  std::unordered_map<std::string, Clock::TimePoint> ready_at_;
  bool stopping_ = false;
  bool changed_ = false;
  std::thread loop_;
};

}  // namespace draco::k8s::workqueue
