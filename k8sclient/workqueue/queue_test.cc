#include "k8sclient/workqueue/queue.h"

#include <atomic>
#include <map>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace draco::k8s::workqueue {
namespace {

TEST(QueueTest, FifoOrder) {
  Queue q;
  q.Add("a");
  q.Add("b");
  q.Add("c");
  EXPECT_EQ(q.Len(), 3);
  EXPECT_EQ(*q.Get(), "a");
  EXPECT_EQ(*q.Get(), "b");
  EXPECT_EQ(*q.Get(), "c");
}

TEST(QueueTest, CollapsesRepeatedAdds) {
  Queue q;
  q.Add("a");
  q.Add("b");
  q.Add("a");
  q.Add("a");
  EXPECT_EQ(q.Len(), 2);
  EXPECT_EQ(*q.Get(), "a");
  EXPECT_EQ(*q.Get(), "b");
  EXPECT_EQ(q.Len(), 0);
}

TEST(QueueTest, UrgentItemsOvertakeWaitingOnes) {
  Queue q;
  q.Add("a");
  q.Add("b");
  q.AddUrgent("u1");
  q.AddUrgent("u2");
  q.Add("c");
  EXPECT_EQ(q.Len(), 5);
  EXPECT_EQ(q.UrgentLen(), 2);
  std::vector<std::string> order;
  for (int i = 0; i < 5; ++i) order.push_back(*q.Get());
  EXPECT_EQ(order, (std::vector<std::string>{"u1", "u2", "a", "b", "c"}));
  EXPECT_EQ(q.UrgentLen(), 0);
}

TEST(QueueTest, AddUrgentMovesAWaitingItemAndDedupes) {
  Queue q;
  q.Add("a");
  q.Add("b");
  q.AddUrgent("b");
  q.AddUrgent("b");
  q.Add("b");  // still urgent, still once
  EXPECT_EQ(q.Len(), 2);
  EXPECT_EQ(*q.Get(), "b");
  EXPECT_EQ(*q.Get(), "a");
  EXPECT_EQ(q.Len(), 0);
}

TEST(QueueTest, AddUrgentWhileProcessingRequeuesUrgentlyAfterDone) {
  Queue q;
  q.Add("a");
  ASSERT_EQ(*q.Get(), "a");
  q.Add("b");
  q.AddUrgent("a");  // never handed out twice at once
  EXPECT_EQ(q.Len(), 1);
  EXPECT_EQ(q.UrgentLen(), 0);
  q.Done("a");
  EXPECT_EQ(q.UrgentLen(), 1);
  EXPECT_EQ(*q.Get(), "a");
  EXPECT_EQ(*q.Get(), "b");
  q.Done("a");
  q.Add("a");  // urgency is spent once handed out: a later Add is a normal one
  q.Add("c");
  q.AddUrgent("c");
  EXPECT_EQ(*q.Get(), "c");
  EXPECT_EQ(*q.Get(), "a");
}

TEST(QueueTest, AddNextGoesAheadOfTheUrgentLine) {
  Queue q;
  q.Add("a");
  q.AddUrgent("u1");
  q.AddUrgent("u2");
  q.AddNext("n1");
  q.AddNext("a");   // moved from the normal line to the very front
  q.AddNext("u2");  // moved to the front of the urgent line
  std::vector<std::string> order;
  for (int i = 0; i < 4; ++i) order.push_back(*q.Get());
  EXPECT_EQ(order, (std::vector<std::string>{"u2", "a", "n1", "u1"}));
  // Being processed: Done() puts it first.
  q.Add("b");
  q.AddUrgent("c");
  q.AddNext("u1");
  q.Done("u1");
  EXPECT_EQ(*q.Get(), "u1");
  EXPECT_EQ(*q.Get(), "c");
  EXPECT_EQ(*q.Get(), "b");
}

TEST(QueueTest, AddWhileProcessingRequeuesAfterDone) {
  Queue q;
  q.Add("a");
  auto item = q.Get();
  ASSERT_EQ(*item, "a");
  q.Add("a");  // dirty while processing: must not be handed out yet
  q.Add("a");
  EXPECT_EQ(q.Len(), 0);
  q.Done("a");
  EXPECT_EQ(q.Len(), 1);
  EXPECT_EQ(*q.Get(), "a");
  q.Done("a");
  EXPECT_EQ(q.Len(), 0);
}

TEST(QueueTest, DoneWithoutReAddDoesNotRequeue) {
  Queue q;
  q.Add("a");
  q.Get();
  q.Done("a");
  EXPECT_EQ(q.Len(), 0);
}

TEST(QueueTest, ShutDownRejectsAddsAndDrainsThenReturnsNullopt) {
  Queue q;
  q.Add("a");
  q.Add("b");
  q.ShutDown();
  EXPECT_TRUE(q.ShuttingDown());
  q.Add("c");
  EXPECT_EQ(q.Len(), 2);
  EXPECT_EQ(*q.Get(), "a");
  EXPECT_EQ(*q.Get(), "b");
  EXPECT_FALSE(q.Get().has_value());
}

TEST(QueueTest, ShutDownWakesBlockedGetters) {
  Queue q;
  std::vector<std::thread> ts;
  std::atomic<int> woke{0};
  for (int i = 0; i < 4; ++i) {
    ts.emplace_back([&] {
      if (!q.Get().has_value()) ++woke;
    });
  }
  q.ShutDown();
  for (auto& t : ts) t.join();
  EXPECT_EQ(woke.load(), 4);
}

TEST(QueueTest, ShutDownWithDrainWaitsForDone) {
  Queue q;
  q.Add("a");
  ASSERT_EQ(*q.Get(), "a");
  std::atomic<bool> drained{false};
  std::thread t([&] {
    q.ShutDownWithDrain();
    drained = true;
  });
  // Wait until the shutdown has started (Add is then ignored) without sleeping.
  while (!q.ShuttingDown()) std::this_thread::yield();
  EXPECT_FALSE(drained.load());
  q.Done("a");
  t.join();
  EXPECT_TRUE(drained.load());
}

TEST(QueueTest, ShutDownWithDrainReturnsAtOnceWhenIdle) {
  Queue q;
  q.ShutDownWithDrain();
  EXPECT_FALSE(q.Get().has_value());
}

// Many producers and consumers: every key is processed, and never by two workers at once.
TEST(QueueTest, SameItemIsNeverProcessedConcurrently) {
  Queue q;
  constexpr int kKeys = 20;
  constexpr int kAddsPerProducer = 2000;
  std::mutex mu;
  std::set<std::string> in_flight;
  std::map<std::string, int> processed;
  std::atomic<bool> overlap{false};
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; ++w) {
    workers.emplace_back([&] {
      while (auto item = q.Get()) {
        {
          std::lock_guard<std::mutex> l(mu);
          if (!in_flight.insert(*item).second) overlap = true;
        }
        std::this_thread::yield();
        {
          std::lock_guard<std::mutex> l(mu);
          in_flight.erase(*item);
          ++processed[*item];
        }
        q.Done(*item);
      }
    });
  }
  std::vector<std::thread> producers;
  for (int p = 0; p < 3; ++p) {
    producers.emplace_back([&, p] {
      for (int i = 0; i < kAddsPerProducer; ++i) q.Add("k" + std::to_string((i + p) % kKeys));
    });
  }
  for (auto& t : producers) t.join();
  q.ShutDownWithDrain();
  q.ShutDown();
  for (auto& t : workers) t.join();
  EXPECT_FALSE(overlap.load());
  EXPECT_EQ(processed.size(), static_cast<size_t>(kKeys));
}

class RecordingMetrics final : public MetricsProvider {
 public:
  struct Gauge : GaugeMetric {
    std::atomic<int> v{0};
    void Inc() override { ++v; }
    void Dec() override { --v; }
  };
  struct Settable : SettableGaugeMetric {
    std::mutex mu;
    double v = 0;
    void Set(double x) override {
      std::lock_guard<std::mutex> l(mu);
      v = x;
    }
    double Get() {
      std::lock_guard<std::mutex> l(mu);
      return v;
    }
  };
  struct Counter : CounterMetric {
    std::atomic<int> v{0};
    void Inc() override { ++v; }
  };
  struct Histogram : HistogramMetric {
    std::mutex mu;
    std::vector<double> obs;
    void Observe(double s) override {
      std::lock_guard<std::mutex> l(mu);
      obs.push_back(s);
    }
  };
  std::shared_ptr<Gauge> depth = std::make_shared<Gauge>();
  std::shared_ptr<Counter> adds = std::make_shared<Counter>();
  std::shared_ptr<Histogram> latency = std::make_shared<Histogram>();
  std::shared_ptr<Histogram> work = std::make_shared<Histogram>();
  std::shared_ptr<Settable> unfinished = std::make_shared<Settable>();
  std::shared_ptr<Settable> longest = std::make_shared<Settable>();
  std::shared_ptr<Counter> retries = std::make_shared<Counter>();
  std::string seen_name;

  std::shared_ptr<GaugeMetric> NewDepthMetric(const std::string& n) override {
    seen_name = n;
    return depth;
  }
  std::shared_ptr<CounterMetric> NewAddsMetric(const std::string&) override { return adds; }
  std::shared_ptr<HistogramMetric> NewLatencyMetric(const std::string&) override { return latency; }
  std::shared_ptr<HistogramMetric> NewWorkDurationMetric(const std::string&) override {
    return work;
  }
  std::shared_ptr<SettableGaugeMetric> NewUnfinishedWorkSecondsMetric(const std::string&) override {
    return unfinished;
  }
  std::shared_ptr<SettableGaugeMetric> NewLongestRunningProcessorSecondsMetric(
      const std::string&) override {
    return longest;
  }
  std::shared_ptr<CounterMetric> NewRetriesMetric(const std::string&) override { return retries; }
};

TEST(QueueTest, MetricsFollowTheItemLifecycle) {
  RecordingMetrics m;
  FakeClock clock;
  Queue q({"claims", &m, &clock});
  EXPECT_EQ(m.seen_name, "claims");
  q.Add("a");
  q.Add("a");
  q.Add("b");
  EXPECT_EQ(m.adds->v.load(), 2);
  EXPECT_EQ(m.depth->v.load(), 2);
  clock.Step(std::chrono::seconds(2));
  ASSERT_EQ(*q.Get(), "a");
  EXPECT_EQ(m.depth->v.load(), 1);
  clock.Step(std::chrono::seconds(3));
  q.UpdateUnfinishedWork();
  EXPECT_DOUBLE_EQ(m.unfinished->Get(), 3.0);
  EXPECT_DOUBLE_EQ(m.longest->Get(), 3.0);
  q.Done("a");
  q.UpdateUnfinishedWork();
  EXPECT_DOUBLE_EQ(m.unfinished->Get(), 0.0);
  {
    std::lock_guard<std::mutex> l(m.latency->mu);
    EXPECT_EQ(m.latency->obs, std::vector<double>{2.0});
  }
  std::lock_guard<std::mutex> l(m.work->mu);
  EXPECT_EQ(m.work->obs, std::vector<double>{3.0});
}

TEST(QueueTest, OldestInFlightIsTheItemHandedOutLongestAgo) {
  FakeClock clock;
  Queue q({"claims", nullptr, &clock});
  EXPECT_FALSE(q.OldestInFlight().has_value());
  q.Add("a");
  q.Add("b");
  const auto t0 = clock.Now();
  ASSERT_EQ(*q.Get(), "a");
  clock.Step(std::chrono::seconds(5));
  ASSERT_EQ(*q.Get(), "b");
  auto oldest = q.OldestInFlight();
  ASSERT_TRUE(oldest.has_value());
  EXPECT_EQ(oldest->item, "a");
  EXPECT_EQ(oldest->started, t0);
  q.Done("a");
  oldest = q.OldestInFlight();
  ASSERT_TRUE(oldest.has_value());
  EXPECT_EQ(oldest->item, "b");
  EXPECT_EQ(oldest->started, t0 + std::chrono::seconds(5));
  q.Done("b");
  EXPECT_FALSE(q.OldestInFlight().has_value());
}

}  // namespace
}  // namespace draco::k8s::workqueue
