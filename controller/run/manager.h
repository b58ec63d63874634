// Manager: the named runnables `draco run` is built from (HTTP servers, admission webhook,
// informers, leader election, controller terms), started in the order they were added and stopped
// in reverse, like controller-runtime's Manager.
//
// Stopping has two phases so that a slow part never delays a fast one that must happen first:
// every runnable's begin_stop (non-blocking, or one short request) runs in reverse order, then
// every runnable's wait (blocks until it is stopped) in reverse order. For draco: the workers stop
// taking work and the write fence closes, the Lease is released (the next leader starts at once),
// then the workers drain, the elector thread ends, the informers stop, the servers close.
//
// Not thread-safe: Add, Start and Stop are called by one thread (RunMain).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "base/status.h"

namespace draco::run {

struct Runnable {
  std::string name;
  // Starts the runnable without blocking on its work; an error stops the start sequence.
  std::function<Status()> start;
  // Optional: ask it to stop (non-blocking, or short).
  std::function<void()> begin_stop;
  // Optional: wait until it has stopped and release what it holds.
  std::function<void()> wait;
};

class Manager {
 public:
  Manager() = default;
  ~Manager();  // Stop()
  Manager(const Manager&) = delete;
  Manager& operator=(const Manager&) = delete;

  void Add(Runnable r);
  // Starts the runnables in the order added. When one fails, the ones already started are stopped
  // (reverse order) and its error is returned, prefixed with its name.
  Status Start();
  // Stops the started runnables: begin_stop of each in reverse order, then wait of each in reverse
  // order. Idempotent.
  void Stop();
  // Names of the runnables started and not yet stopped, in start order.
  std::vector<std::string> Running() const;

 private:
  std::vector<Runnable> runnables_;
  size_t started_ = 0;
};

}  // namespace draco::run
