#include "k8sclient/workqueue/queue.h"

#include <algorithm>
#include <chrono>

namespace draco::k8s::workqueue {
namespace {

// How often the unfinished-work gauges are refreshed (client-go: 500ms).
constexpr std::chrono::milliseconds kUnfinishedWorkUpdatePeriod{500};

double Seconds(Clock::Duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

Queue::Queue(QueueOptions options)
    : name_(std::move(options.name)),
      provider_(options.metrics != nullptr ? options.metrics : &NoopMetricsProvider()),
      clock_(options.clock != nullptr ? options.clock : &RealClock::Get()),
      depth_(provider_->NewDepthMetric(name_)),
      adds_(provider_->NewAddsMetric(name_)),
      latency_(provider_->NewLatencyMetric(name_)),
      work_duration_(provider_->NewWorkDurationMetric(name_)),
      unfinished_(provider_->NewUnfinishedWorkSecondsMetric(name_)),
      longest_(provider_->NewLongestRunningProcessorSecondsMetric(name_)) {
  if (options.metrics != nullptr) metrics_thread_ = std::thread([this] { MetricsLoop(); });
}

Queue::~Queue() {
  {
    std::unique_lock<std::mutex> lock(mu_);
    ShutDownLocked(lock, false);
  }
  metrics_cv_.notify_all();
  if (metrics_thread_.joinable()) metrics_thread_.join();
}

void Queue::EnqueueLocked(const std::string& item, Clock::TimePoint now) {
  add_times_.emplace(item, now);
  depth_->Inc();
  if (next_set_.count(item) != 0) {
    urgent_.push_front(item);
  } else {
    (urgent_set_.count(item) != 0 ? urgent_ : queue_).push_back(item);
  }
  cv_.notify_one();
}

void Queue::Add(const std::string& item) {
  std::lock_guard<std::mutex> l(mu_);
  if (shutting_down_) return;
  if (dirty_.count(item) != 0) return;
  adds_->Inc();
  dirty_.insert(item);
  if (processing_.count(item) != 0) return;  // re-queued by Done()
  EnqueueLocked(item, clock_->Now());
}

void Queue::AddUrgent(const std::string& item) { AddUrgently(item, /*next=*/false); }

void Queue::AddNext(const std::string& item) { AddUrgently(item, /*next=*/true); }

void Queue::AddUrgently(const std::string& item, bool next) {
  std::lock_guard<std::mutex> l(mu_);
  if (shutting_down_) return;
  const bool was_urgent = !urgent_set_.insert(item).second;
  if (next) next_set_.insert(item);
  if (dirty_.count(item) != 0) {
    if (processing_.count(item) != 0) return;  // Done() re-queues it in its place
    if (was_urgent && !next) return;           // already waiting in the urgent line
    // Waiting: move it (rare, and the lines are short next to a reconcile).
    std::deque<std::string>& from = was_urgent ? urgent_ : queue_;
    if (auto it = std::find(from.begin(), from.end(), item); it != from.end()) {
      from.erase(it);
      if (next) {
        urgent_.push_front(item);
      } else {
        urgent_.push_back(item);
      }
      cv_.notify_one();
    }
    return;
  }
  adds_->Inc();
  dirty_.insert(item);
  if (processing_.count(item) != 0) return;  // re-queued by Done()
  EnqueueLocked(item, clock_->Now());
}

int Queue::Len() const {
  std::lock_guard<std::mutex> l(mu_);
  return static_cast<int>(urgent_.size() + queue_.size());
}

int Queue::UrgentLen() const {
  std::lock_guard<std::mutex> l(mu_);
  return static_cast<int>(urgent_.size());
}

std::optional<std::string> Queue::Get() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return !urgent_.empty() || !queue_.empty() || shutting_down_; });
  std::deque<std::string>& line = urgent_.empty() ? queue_ : urgent_;
  if (line.empty()) return std::nullopt;  // shut down and drained
  std::string item = std::move(line.front());
  line.pop_front();
  urgent_set_.erase(item);
  next_set_.erase(item);
  const auto now = clock_->Now();
  depth_->Dec();
  if (auto it = add_times_.find(item); it != add_times_.end()) {
    latency_->Observe(Seconds(now - it->second));
    add_times_.erase(it);
  }
  start_times_[item] = now;
  processing_.insert(item);
  dirty_.erase(item);
  return item;
}

void Queue::Done(const std::string& item) {
  std::lock_guard<std::mutex> l(mu_);
  const auto now = clock_->Now();
  if (auto it = start_times_.find(item); it != start_times_.end()) {
    work_duration_->Observe(Seconds(now - it->second));
    start_times_.erase(it);
  }
  processing_.erase(item);
  if (dirty_.count(item) != 0) {
    EnqueueLocked(item, now);
  } else if (processing_.empty() && shutting_down_) {
    // A ShutDownWithDrain may be waiting. Only then: idle workers wait on the same variable, and
    // waking them all whenever the last item in flight finished cost draco ~48 context switches
    // each time (its workers are mostly idle between bursts of events).
    cv_.notify_all();
  }
}

void Queue::ShutDownLocked(std::unique_lock<std::mutex>& lock, bool drain) {
  shutting_down_ = true;
  cv_.notify_all();
  metrics_cv_.notify_all();
  if (drain) cv_.wait(lock, [this] { return processing_.empty(); });
}

void Queue::ShutDown() {
  std::unique_lock<std::mutex> lock(mu_);
  ShutDownLocked(lock, false);
}

void Queue::ShutDownWithDrain() {
  std::unique_lock<std::mutex> lock(mu_);
  ShutDownLocked(lock, true);
}

bool Queue::ShuttingDown() const {
  std::lock_guard<std::mutex> l(mu_);
  return shutting_down_;
}

std::optional<Queue::InFlight> Queue::OldestInFlight() const {
  std::lock_guard<std::mutex> l(mu_);
  std::optional<InFlight> oldest;
  for (const auto& [item, start] : start_times_) {
    if (!oldest || start < oldest->started) oldest = InFlight{item, start};
  }
  return oldest;
}

void Queue::UpdateUnfinishedWork() {
  std::lock_guard<std::mutex> l(mu_);
  const auto now = clock_->Now();
  double total = 0;
  double longest = 0;
  for (const auto& [item, start] : start_times_) {
    const double s = Seconds(now - start);
    total += s;
    longest = std::max(longest, s);
  }
  unfinished_->Set(total);
  longest_->Set(longest);
}

void Queue::MetricsLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!shutting_down_) {
    clock_->WaitUntil(metrics_cv_, lock, clock_->Now() + kUnfinishedWorkUpdatePeriod,
                      [this] { return shutting_down_; });
    if (shutting_down_) break;
    lock.unlock();
    UpdateUnfinishedWork();
    lock.lock();
  }
}

}  // namespace draco::k8s::workqueue
