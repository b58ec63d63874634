// Worker: the reconcile loop over k8sclient's RateLimitingQueue, applying reconciler.h's contract
// and recording draco_reconcile_* metrics.
//
// Run(n) starts n threads that Get a key, call the reconcile function, then Forget/AddRateLimited/
// AddAfter per the result, and Done. An exception escaping the reconcile function is caught,
// counted in draco_reconcile_panics_total and treated as an error. Shutdown: ShutDown() on the
// queue (by the owner) makes Get return nullopt; Join() waits for the threads.
// Thread-safe; the queue and metrics must outlive the Worker.
#pragma once

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "controller/metrics/controller_metrics.h"
#include "controller/reconcilers/interfaces.h"
#include "controller/reconcilers/reconciler.h"
#include "k8sclient/workqueue/rate_limiting_queue.h"

namespace draco::reconcilers {

// Enqueuer over a RateLimitingQueue.
class QueueEnqueuer : public Enqueuer {
 public:
  explicit QueueEnqueuer(k8s::workqueue::RateLimitingQueue& q) : q_(q) {}
  void Add(const std::string& key) override { q_.Add(key); }
  void AddAfter(const std::string& key, Clock::Duration d) override { q_.AddAfter(key, d); }
  void AddUrgent(const std::string& key) override { q_.AddUrgent(key); }
  void AddNext(const std::string& key) override { q_.AddNext(key); }

 private:
  k8s::workqueue::RateLimitingQueue& q_;
};

class Worker {
 public:
  using ReconcileFn = std::function<StatusOr<Result>(const Request&)>;
  Worker(k8s::workqueue::RateLimitingQueue& queue, ReconcileFn fn, Clock& clock,
         metrics::ControllerMetrics* metrics);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  void Run(int threads);
  // Processes one item; false when the queue is shut down. Exposed for tests.
  bool ProcessNext();
  void Join();

 private:
  k8s::workqueue::RateLimitingQueue& queue_;
  ReconcileFn fn_;
  Clock& clock_;
  metrics::ControllerMetrics* metrics_;
  std::vector<std::thread> threads_;
};

}  // namespace draco::reconcilers
