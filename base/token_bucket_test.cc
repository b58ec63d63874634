#include "base/token_bucket.h"

#include <atomic>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

namespace draco {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(TokenBucketTest, BurstThenRate) {
  FakeClock clock;
  TokenBucket tb(10, 3, clock);
  EXPECT_EQ(tb.Reserve(), Clock::Duration::zero());
  EXPECT_EQ(tb.Reserve(), Clock::Duration::zero());
  EXPECT_EQ(tb.Reserve(), Clock::Duration::zero());
  EXPECT_EQ(tb.Reserve(), milliseconds(100));
  EXPECT_EQ(tb.Reserve(), milliseconds(200));
  EXPECT_FALSE(tb.TryAccept());
  clock.Step(seconds(1));
  // Balance was -2; one second adds 10 tokens, capped at burst 3 -> 3 tokens available.
  EXPECT_TRUE(tb.TryAccept());
  EXPECT_TRUE(tb.TryAccept());
  EXPECT_TRUE(tb.TryAccept());
  EXPECT_FALSE(tb.TryAccept());
}

TEST(TokenBucketTest, UnlimitedWhenQpsZero) {
  FakeClock clock;
  TokenBucket tb(0, 1, clock);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(tb.Reserve(), Clock::Duration::zero());
}

TEST(TokenBucketTest, WaitBlocksUntilClockAdvances) {
  FakeClock clock;
  TokenBucket tb(1, 1, clock);
  tb.Wait();  // the burst token
  std::atomic<bool> done{false};
  std::thread t([&] {
    tb.Wait();
    done = true;
  });
  while (clock.Waiters() == 0) std::this_thread::yield();
  EXPECT_FALSE(done.load());
  clock.Step(seconds(1));
  t.join();
  EXPECT_TRUE(done.load());
}

}  // namespace
}  // namespace draco
