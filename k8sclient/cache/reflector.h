// Reflector: keeps a ReflectorStore in sync with the API server (client-go reflector.go,
// lifecycle.md section 5.1).
//
// Run() loops ListAndWatch() until Stop():
//   1. LIST at relistResourceVersion(): "0" the first time (the watch cache may answer), the last
//      synced RV afterwards, "" (a consistent read) once that RV was reported expired (410). Pages
//      of kPageSize are requested when the RV is "0" or ""; an exact RV is not paged so the watch
//      cache can serve it. A 410 on the LIST retries at once with RV "". The result Replaces the
//      store and its RV becomes the last synced RV.
//   2. WATCH from the last synced RV with allowWatchBookmarks and a random timeoutSeconds in
//      [5, 10) minutes. Every event advances the RV (bookmarks only advance it). A watch the
//      server ends normally is re-established from the last RV without relisting. 410/Expired (as
//      an ERROR event or on the request) ends the round and relists; 429 and connection refused
//      back off and re-watch; a watch ending within 1s without events counts as a failure.
//      A bad event (no name, store error) is logged and skipped.
//   3. Between rounds it waits on a jittered exponential backoff, 0.8s doubling to 30s, reset
//      after 2 minutes without trouble (~0.22 QPS against a sick server).
// With a resync period, Resync() is called on the store periodically while running.
//
// Thread-safety: Run() blocks the calling thread; Stop() may be called from any thread and makes
// Run() return promptly (it stops an open watch). LastSyncResourceVersion() is thread-safe. The
// ListerWatcher, store and clock must outlive the reflector.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "base/backoff.h"
#include "base/clock.h"
#include "k8sclient/cache/lister_watcher.h"
#include "k8sclient/cache/store.h"

namespace draco::k8s::cache {

struct ReflectorOptions {
  // For log messages, e.g. "configmaps".
  std::string name = "reflector";
  // Null means RealClock::Get().
  Clock* clock = nullptr;
  // 0 disables resync.
  Clock::Duration resync_period = Clock::Duration::zero();
  // Uniform [0, 1) source for backoff jitter and watch timeouts; null means a random generator.
  std::function<double()> rand01;
  int64_t page_size = 500;
};

class Reflector {
 public:
  static constexpr std::chrono::minutes kMinWatchTimeout{5};
  static constexpr std::chrono::milliseconds kInitialBackoff{800};
  static constexpr std::chrono::seconds kMaxBackoff{30};
  static constexpr std::chrono::minutes kBackoffReset{2};
  static constexpr double kBackoffFactor = 2.0;
  static constexpr double kBackoffJitter = 1.0;
  static constexpr std::chrono::seconds kVeryShortWatch{1};

  Reflector(ListerWatcher& lw, ReflectorStore& store, ReflectorOptions options = {});
  ~Reflector();
  Reflector(const Reflector&) = delete;
  Reflector& operator=(const Reflector&) = delete;

  // Blocks until Stop().
  void Run();
  void Stop();
  // One list-then-watch round; returns when the watch needs a relist, fails or Stop() is called.
  Status ListAndWatch();

  std::string LastSyncResourceVersion() const;
  // True once a LIST has been stored.
  bool HasListed() const { return listed_.load(); }
  // nullopt while a watch is open. Otherwise the moment the last watch ended (the reflector's
  // construction before the first one): since when it has been listing, backing off or
  // reconnecting. A liveness check compares its age with a threshold. Thread-safe.
  std::optional<Clock::TimePoint> WatchDownSince() const;

 private:
  Status List();
  Status WatchLoop();
  Status HandleWatch(Watcher& w);
  std::string RelistResourceVersion() const;
  void SetLastSyncResourceVersion(const std::string& rv);
  // Waits `d` on the clock; returns true if stopped meanwhile.
  bool WaitOrStop(Clock::Duration d);
  void ResyncLoop();

  ListerWatcher& lw_;
  ReflectorStore& store_;
  ReflectorOptions options_;
  Clock& clock_;
  ExponentialBackoff backoff_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::string last_sync_rv_;
  bool last_sync_rv_unavailable_ = false;
  bool stopped_ = false;
  Watcher* current_watch_ = nullptr;
  bool watching_ = false;                // a watch is open (WatchDownSince)
  Clock::TimePoint watch_down_since_{};  // when the last one ended, or construction
  std::atomic<bool> listed_{false};
};

}  // namespace draco::k8s::cache
