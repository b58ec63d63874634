// Clock: the only source of time for code that waits, backs off or measures.
//
// Production code takes a Clock& (RealClock::Get() by default); tests inject a FakeClock and move
// it with Step(), so nothing in a unit test sleeps on the wall clock. Both are thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <vector>

namespace draco {

class Clock {
 public:
  using Duration = std::chrono::steady_clock::duration;
  using TimePoint = std::chrono::steady_clock::time_point;

  virtual ~Clock() = default;
  // Monotonic now.
  virtual TimePoint Now() const = 0;
  // Wall-clock now (for timestamps written into objects).
  virtual std::chrono::system_clock::time_point WallNow() const = 0;
  // Blocks on `cv` (with `lock` held by the caller) until `pred()` is true or `deadline` passes
  // on this clock. Returns pred(). A FakeClock wakes waiters whenever it is stepped.
  virtual bool WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                         TimePoint deadline, const std::function<bool()>& pred) = 0;
};

class RealClock final : public Clock {
 public:
  // The process-wide real clock. Never null, never destroyed.
  static RealClock& Get();
  TimePoint Now() const override { return std::chrono::steady_clock::now(); }
  std::chrono::system_clock::time_point WallNow() const override {
    return std::chrono::system_clock::now();
  }
  bool WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                 TimePoint deadline, const std::function<bool()>& pred) override {
    return cv.wait_until(lock, deadline, pred);
  }
};

// A clock that only moves when told. Waiters registered through WaitUntil are woken by Step();
// they must use the same condition variable they were given, so Step() notifies every cv that
// currently has a waiter.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(TimePoint start = TimePoint(std::chrono::hours(1)));
  TimePoint Now() const override;
  std::chrono::system_clock::time_point WallNow() const override;
  bool WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                 TimePoint deadline, const std::function<bool()>& pred) override;
  // Advances time by `d` and wakes every waiter.
  void Step(Duration d);
  // Number of threads currently blocked in WaitUntil (lets tests wait for a waiter to park).
  int Waiters() const;

 private:
  mutable std::mutex mu_;
  TimePoint now_;
  int waiters_ = 0;
  std::vector<std::condition_variable*> cvs_;
};

}  // namespace draco
