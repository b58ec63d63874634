#include "base/backoff.h"

#include <atomic>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

namespace draco {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(ExponentialBackoffTest, DoublesUpToCapWithoutJitter) {
  FakeClock clock;
  ExponentialBackoff b({milliseconds(800), 2.0, 0.0, seconds(30), seconds(0)}, clock);
  EXPECT_EQ(b.Next(), milliseconds(800));
  EXPECT_EQ(b.Next(), milliseconds(1600));
  EXPECT_EQ(b.Next(), milliseconds(3200));
  EXPECT_EQ(b.Next(), milliseconds(6400));
  EXPECT_EQ(b.Next(), milliseconds(12800));
  EXPECT_EQ(b.Next(), milliseconds(25600));
  EXPECT_EQ(b.Next(), seconds(30));
  EXPECT_EQ(b.Next(), seconds(30));
}

TEST(ExponentialBackoffTest, JitterAddsFractionOfBase) {
  FakeClock clock;
  ExponentialBackoff b({milliseconds(800), 2.0, 1.0, seconds(30), seconds(0)}, clock,
                       [] { return 0.5; });
  EXPECT_EQ(b.Next(), milliseconds(1200));
  EXPECT_EQ(b.Next(), milliseconds(2400));
}

TEST(ExponentialBackoffTest, ResetsAfterQuietPeriod) {
  FakeClock clock;
  ExponentialBackoff b({milliseconds(800), 2.0, 0.0, seconds(30), std::chrono::minutes(2)}, clock);
  EXPECT_EQ(b.Next(), milliseconds(800));
  EXPECT_EQ(b.Next(), milliseconds(1600));
  clock.Step(std::chrono::minutes(3));
  EXPECT_EQ(b.Next(), milliseconds(800));
}

}  // namespace
}  // namespace draco
