#include "k8sclient/workqueue/delaying_queue.h"

#include <gtest/gtest.h>

namespace draco::k8s::workqueue {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(DelayingQueueTest, ItemBecomesReadyWhenTheClockPassesItsDelay) {
  FakeClock clock;
  DelayingQueue q({"", nullptr, &clock});
  q.AddAfter("a", milliseconds(50));
  EXPECT_EQ(q.Len(), 0);
  EXPECT_EQ(q.WaitingLen(), 1);
  clock.Step(milliseconds(49));
  EXPECT_EQ(q.Len(), 0);
  clock.Step(milliseconds(1));
  EXPECT_EQ(*q.Get(), "a");  // blocks until the background thread moved it
  EXPECT_EQ(q.WaitingLen(), 0);
}

TEST(DelayingQueueTest, NonPositiveDelayAddsImmediately) {
  FakeClock clock;
  DelayingQueue q({"", nullptr, &clock});
  q.AddAfter("a", milliseconds(0));
  q.AddAfter("b", milliseconds(-5));
  EXPECT_EQ(q.Len(), 2);
}

TEST(DelayingQueueTest, EarlierReadyTimeWinsLaterIsIgnored) {
  FakeClock clock;
  DelayingQueue q({"", nullptr, &clock});
  q.AddAfter("a", seconds(10));
  q.AddAfter("a", seconds(20));  // later: ignored
  q.AddAfter("a", seconds(1));   // earlier: replaces
  EXPECT_EQ(q.WaitingLen(), 1);
  clock.Step(seconds(1));
  EXPECT_EQ(*q.Get(), "a");
  q.Done("a");
  EXPECT_EQ(q.WaitingLen(), 0);
  clock.Step(seconds(30));
  q.AddAfter("z", milliseconds(1));
  clock.Step(milliseconds(1));
  EXPECT_EQ(*q.Get(), "z");  // "a" did not come back
}

TEST(DelayingQueueTest, ReleasesInReadyTimeOrder) {
  FakeClock clock;
  DelayingQueue q({"", nullptr, &clock});
  q.AddAfter("c", seconds(3));
  q.AddAfter("a", seconds(1));
  q.AddAfter("b", seconds(2));
  clock.Step(seconds(5));
  EXPECT_EQ(*q.Get(), "a");
  EXPECT_EQ(*q.Get(), "b");
  EXPECT_EQ(*q.Get(), "c");
}

TEST(DelayingQueueTest, ShutDownDropsWaitingItemsAndStopsAdds) {
  FakeClock clock;
  DelayingQueue q({"", nullptr, &clock});
  q.AddAfter("a", seconds(1));
  q.ShutDown();
  q.AddAfter("b", seconds(0));
  clock.Step(seconds(2));
  EXPECT_FALSE(q.Get().has_value());
}

}  // namespace
}  // namespace draco::k8s::workqueue
