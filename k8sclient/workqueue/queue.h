// Workqueue: the hand-off between event handlers and reconcile workers (client-go
// util/workqueue, see lifecycle.md section 5.3).
//
// Overview. Items are string keys ("namespace/name"). The queue guarantees:
//   * Fair: items are handed out in the order they were added, urgent ones (AddUrgent) first.
//   * Stingy: an item added many times before it is processed is processed once (dedupe).
//   * Never concurrent: an item is never handed to two workers at once. Adding an item that is
//     being processed marks it dirty; Done() puts it back so it is processed again afterwards.
//   * Shutdown: after ShutDown() new Adds are ignored, workers drain what is queued and then Get()
//     returns nullopt. ShutDownWithDrain() additionally blocks until every item handed out has
//     been marked Done.
// Layers: Queue (this file) <- DelayingQueue (AddAfter) <- RateLimitingQueue (AddRateLimited).
//
// Thread-safe: any number of producers and consumers. Get() and ShutDownWithDrain() block.
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "base/clock.h"
#include "k8sclient/workqueue/metrics.h"

namespace draco::k8s::workqueue {

struct QueueOptions {
  // Label for metrics.
  std::string name;
  // Null means NoopMetricsProvider(). Must outlive the queue.
  MetricsProvider* metrics = nullptr;
  // Null means RealClock::Get(). Must outlive the queue.
  Clock* clock = nullptr;
};

class Queue {
 public:
  explicit Queue(QueueOptions options = {});
  virtual ~Queue();
  Queue(const Queue&) = delete;
  Queue& operator=(const Queue&) = delete;

  // Marks `item` as needing processing. No-op if it is already waiting or after shutdown.
  void Add(const std::string& item);
  // Like Add, but `item` is handed out before every item added with Add (urgent items among
  // themselves in the order they were made urgent). An item already waiting is moved to the
  // urgent line; one being processed is re-queued urgently by Done(). Dedupe and the
  // never-concurrent guarantee are those of Add. Lets short work that others wait for overtake a
  // backlog of longer work.
  void AddUrgent(const std::string& item);
  // Like AddUrgent, but `item` goes to the front of the urgent line (moved there if it waits):
  // for work that completes what was started, ahead of work that starts something new.
  void AddNext(const std::string& item);
  // Items waiting to be handed out (not counting those being processed).
  int Len() const;
  // Urgent items waiting to be handed out.
  int UrgentLen() const;
  // Blocks until an item is available and hands it out; the caller must call Done(item) when
  // finished. Returns nullopt once the queue is shut down and empty.
  std::optional<std::string> Get();
  // Marks the processing of `item` finished; re-queues it if it was added meanwhile.
  void Done(const std::string& item);
  // Stops accepting items and wakes all blocked Get() calls once the queue is empty.
  virtual void ShutDown();
  // ShutDown(), then blocks until every handed-out item is Done.
  virtual void ShutDownWithDrain();
  bool ShuttingDown() const;

  // The item handed out longest ago and not Done yet, with the moment Get() handed it out (on the
  // queue's clock): what the longest-busy worker is working on. nullopt when no item is being
  // processed. A liveness check compares its age with a threshold to find a wedged worker.
  struct InFlight {
    std::string item;
    Clock::TimePoint started;
  };
  std::optional<InFlight> OldestInFlight() const;

  // Recomputes the unfinished-work gauges (also done every 500ms when a metrics provider was
  // given).
  void UpdateUnfinishedWork();

 protected:
  Clock& clock() const { return *clock_; }
  const std::string& name() const { return name_; }
  MetricsProvider& metrics_provider() const { return *provider_; }

 private:
  void ShutDownLocked(std::unique_lock<std::mutex>& lock, bool drain);
  void MetricsLoop();

  const std::string name_;
  MetricsProvider* const provider_;
  Clock* const clock_;
  std::shared_ptr<GaugeMetric> depth_;
  std::shared_ptr<CounterMetric> adds_;
  std::shared_ptr<HistogramMetric> latency_;
  std::shared_ptr<HistogramMetric> work_duration_;
  std::shared_ptr<SettableGaugeMetric> unfinished_;
  std::shared_ptr<SettableGaugeMetric> longest_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  // Inserts a dirty, not processing `item` into its line. mu_ must be held.
  void EnqueueLocked(const std::string& item, Clock::TimePoint now);
  // AddUrgent, or AddNext when `next`.
  void AddUrgently(const std::string& item, bool next);

  std::deque<std::string> urgent_;              // order of processing, before queue_
  std::deque<std::string> queue_;               // order of processing
  std::unordered_set<std::string> dirty_;       // needs processing
  std::unordered_set<std::string> processing_;  // handed out, not Done
  std::unordered_set<std::string> urgent_set_;  // dirty items to hand out urgently
  std::unordered_set<std::string> next_set_;    // those of them to put first (AddNext)
  std::unordered_map<std::string, Clock::TimePoint> add_times_;
  std::unordered_map<std::string, Clock::TimePoint> start_times_;
  bool shutting_down_ = false;

  std::condition_variable metrics_cv_;
  std::thread metrics_thread_;
};

}  // namespace draco::k8s::workqueue
