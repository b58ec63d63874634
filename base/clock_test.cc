#include "base/clock.h"

#include <thread>

#include <gtest/gtest.h>

namespace draco {
namespace {

TEST(FakeClockTest, StepWakesWaiterAtDeadline) {
  FakeClock clock;
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  auto start = clock.Now();
  std::thread t([&] {
    std::unique_lock<std::mutex> l(mu);
    bool r = clock.WaitUntil(cv, l, start + std::chrono::seconds(10), [] { return false; });
    EXPECT_FALSE(r);
    done = true;
  });
  while (clock.Waiters() == 0) std::this_thread::yield();
  clock.Step(std::chrono::seconds(5));
  {
    std::lock_guard<std::mutex> l(mu);
    EXPECT_FALSE(done);
  }
  clock.Step(std::chrono::seconds(5));
  t.join();
  EXPECT_TRUE(done);
  EXPECT_EQ(clock.Now() - start, std::chrono::seconds(10));
}

TEST(FakeClockTest, PredicateEndsWaitEarly) {
  FakeClock clock;
  std::mutex mu;
  std::condition_variable cv;
  bool flag = false;
  std::thread t([&] {
    std::unique_lock<std::mutex> l(mu);
    EXPECT_TRUE(clock.WaitUntil(cv, l, clock.Now() + std::chrono::hours(1), [&] { return flag; }));
  });
  while (clock.Waiters() == 0) std::this_thread::yield();
  {
    std::lock_guard<std::mutex> l(mu);
    flag = true;
  }
  cv.notify_all();
  t.join();
}

}  // namespace
}  // namespace draco
