#include "base/clock.h"

#include <algorithm>

namespace draco {

RealClock& RealClock::Get() {
  static auto* clock = new RealClock();  // NOLINT(cppcoreguidelines-owning-memory)
  return *clock;
}

FakeClock::FakeClock(TimePoint start) : now_(start) {}

Clock::TimePoint FakeClock::Now() const {
  std::lock_guard<std::mutex> l(mu_);
  return now_;
}

std::chrono::system_clock::time_point FakeClock::WallNow() const {
  std::lock_guard<std::mutex> l(mu_);
  return std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(now_.time_since_epoch()));
}

bool FakeClock::WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                          TimePoint deadline, const std::function<bool()>& pred) {
  {
    std::lock_guard<std::mutex> l(mu_);
    ++waiters_;
    cvs_.push_back(&cv);
  }
  bool result = false;
  while (true) {
    if (pred()) {
      result = true;
      break;
    }
    if (Now() >= deadline) break;
    // Real-time bound keeps a lost wake-up from hanging a test forever; Step() normally wakes us.
    cv.wait_for(lock, std::chrono::milliseconds(50));
  }
  std::lock_guard<std::mutex> l(mu_);
  --waiters_;
  auto it = std::find(cvs_.begin(), cvs_.end(), &cv);
  if (it != cvs_.end()) cvs_.erase(it);
  return result;
}

void FakeClock::Step(Duration d) {
  // Notify while holding mu_: a waiter must take mu_ to unregister its condition variable, so none
  // can return (and destroy a short-lived cv) while we are still notifying it.
  std::lock_guard<std::mutex> l(mu_);
  now_ += d;
  for (auto* cv : cvs_) cv->notify_all();
}

int FakeClock::Waiters() const {
  std::lock_guard<std::mutex> l(mu_);
  return waiters_;
}

}  // namespace draco
