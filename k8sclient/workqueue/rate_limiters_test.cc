#include "k8sclient/workqueue/rate_limiters.h"

#include <gtest/gtest.h>

namespace draco::k8s::workqueue {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(RateLimitersTest, ItemExponentialDoublesPerFailureAndForgetResets) {
  ItemExponentialFailureRateLimiter l(milliseconds(5), seconds(1000));
  EXPECT_EQ(l.When("a"), milliseconds(5));
  EXPECT_EQ(l.When("a"), milliseconds(10));
  EXPECT_EQ(l.When("a"), milliseconds(20));
  EXPECT_EQ(l.When("b"), milliseconds(5));  // per item
  EXPECT_EQ(l.NumRequeues("a"), 3);
  l.Forget("a");
  EXPECT_EQ(l.NumRequeues("a"), 0);
  EXPECT_EQ(l.When("a"), milliseconds(5));
}

TEST(RateLimitersTest, ItemExponentialCapsAtMaxWithoutOverflow) {
  ItemExponentialFailureRateLimiter l(milliseconds(5), seconds(1000));
  Clock::Duration last{};
  for (int i = 0; i < 200; ++i) last = l.When("a");
  EXPECT_EQ(last, seconds(1000));
  // 5ms * 2^17 = 655.36s < 1000s; 2^18 -> 1310s is capped.
  ItemExponentialFailureRateLimiter m(milliseconds(5), seconds(1000));
  for (int i = 0; i < 17; ++i) m.When("x");
  EXPECT_EQ(m.When("x"), milliseconds(655360));
  EXPECT_EQ(m.When("x"), seconds(1000));
}

TEST(RateLimitersTest, BucketAllowsBurstThenSpacesAtQps) {
  FakeClock clock;
  BucketRateLimiter l(10, 100, clock);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(l.When("x"), Clock::Duration::zero()) << i;
  EXPECT_EQ(l.When("x"), milliseconds(100));
  EXPECT_EQ(l.When("y"), milliseconds(200));
  EXPECT_EQ(l.NumRequeues("x"), 0);
}

TEST(RateLimitersTest, DefaultIsMaxOfExponentialAndBucket) {
  FakeClock clock;
  auto l = DefaultControllerRateLimiter(clock);
  // Burst available: the exponential part dominates.
  EXPECT_EQ(l->When("a"), milliseconds(5));
  EXPECT_EQ(l->When("a"), milliseconds(10));
  EXPECT_EQ(l->NumRequeues("a"), 2);
  // Exhaust the bucket with other items; then the bucket's delay dominates a fresh item.
  for (int i = 0; i < 98; ++i) l->When("other" + std::to_string(i));
  EXPECT_EQ(l->When("fresh"), milliseconds(100));
  l->Forget("a");
  EXPECT_EQ(l->NumRequeues("a"), 0);
}

}  // namespace
}  // namespace draco::k8s::workqueue
