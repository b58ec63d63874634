#include "k8sclient/workqueue/rate_limiting_queue.h"

#include <gtest/gtest.h>

namespace draco::k8s::workqueue {
namespace {

using std::chrono::milliseconds;

TEST(RateLimitingQueueTest, AddRateLimitedBacksOffExponentiallyUntilForget) {
  FakeClock clock;
  RateLimitingQueue q({"", nullptr, &clock}, std::make_unique<ItemExponentialFailureRateLimiter>(
                                                 milliseconds(5), milliseconds(1000)));
  q.AddRateLimited("a");
  EXPECT_EQ(q.Len(), 0);
  EXPECT_EQ(q.NumRequeues("a"), 1);
  clock.Step(milliseconds(5));
  ASSERT_EQ(*q.Get(), "a");
  q.Done("a");

  q.AddRateLimited("a");  // second failure: 10ms
  EXPECT_EQ(q.NumRequeues("a"), 2);
  clock.Step(milliseconds(9));
  EXPECT_EQ(q.Len(), 0);
  clock.Step(milliseconds(1));
  ASSERT_EQ(*q.Get(), "a");
  q.Done("a");

  q.Forget("a");
  EXPECT_EQ(q.NumRequeues("a"), 0);
  q.AddRateLimited("a");
  clock.Step(milliseconds(5));
  EXPECT_EQ(*q.Get(), "a");
}

TEST(RateLimitingQueueTest, DefaultLimiterFirstRetryIsFiveMilliseconds) {
  FakeClock clock;
  RateLimitingQueue q({"", nullptr, &clock});
  q.AddRateLimited("a");
  clock.Step(milliseconds(4));
  EXPECT_EQ(q.Len(), 0);
  clock.Step(milliseconds(1));
  EXPECT_EQ(*q.Get(), "a");
}

}  // namespace
}  // namespace draco::k8s::workqueue
