// FakeListerWatcher: a scripted ListerWatcher for reflector and informer tests.
//
// Tests queue LIST results and watches in order; every call is recorded with its ListOptions so a
// test can assert the exact resourceVersions the reflector asked for. A FakeWatcher is a channel:
// the test pushes events (before or after the reflector opened it) and ends it with Close() or
// CloseWithError(); a watch with no scripted end blocks until the reflector stops it. When the
// script runs out, List returns UNAVAILABLE and Watch returns a fresh blocking watcher.
//
// Thread-safe. Header-only; tests only.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "base/clock.h"
#include "k8sclient/api_error.h"
#include "k8sclient/cache/lister_watcher.h"

namespace draco::k8s::cache::testing {

class FakeWatcher final : public Watcher {
 public:
  void Push(WatchEvent ev) {
    std::lock_guard<std::mutex> l(mu_);
    events_.push_back(std::move(ev));
    cv_.notify_all();
  }
  // The stream ends normally after the queued events.
  void Close() {
    std::lock_guard<std::mutex> l(mu_);
    closed_ = true;
    cv_.notify_all();
  }
  // The stream fails with `s` after the queued events.
  void CloseWithError(Status s) {
    std::lock_guard<std::mutex> l(mu_);
    error_ = std::move(s);
    closed_ = true;
    cv_.notify_all();
  }
  bool stopped() const {
    std::lock_guard<std::mutex> l(mu_);
    return stopped_;
  }

  StatusOr<std::optional<WatchEvent>> Next() override {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return !events_.empty() || closed_ || stopped_; });
    if (stopped_) return std::optional<WatchEvent>();
    if (!events_.empty()) {
      WatchEvent ev = std::move(events_.front());
      events_.pop_front();
      return std::optional<WatchEvent>(std::move(ev));
    }
    if (!error_.ok()) return error_;
    return std::optional<WatchEvent>();
  }
  void Stop() override {
    std::lock_guard<std::mutex> l(mu_);
    stopped_ = true;
    cv_.notify_all();
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<WatchEvent> events_;
  bool closed_ = false;
  bool stopped_ = false;
  Status error_;
};

class FakeListerWatcher final : public ListerWatcher {
 public:
  void PushList(StatusOr<ObjectList> result) {
    std::lock_guard<std::mutex> l(mu_);
    lists_.push_back(std::move(result));
  }
  // Queues a watch; the returned handle lets the test feed it.
  std::shared_ptr<FakeWatcher> PushWatch() {
    auto w = std::make_shared<FakeWatcher>();
    std::lock_guard<std::mutex> l(mu_);
    watches_.push_back(w);
    return w;
  }
  void PushWatchError(Status s) {
    std::lock_guard<std::mutex> l(mu_);
    watches_.push_back(std::move(s));
  }

  StatusOr<ObjectList> List(const ListOptions& opts) override {
    std::lock_guard<std::mutex> l(mu_);
    list_calls_.push_back(opts);
    cv_.notify_all();
    if (lists_.empty()) return UnavailableError("fake: no scripted list");
    auto r = std::move(lists_.front());
    lists_.pop_front();
    return r;
  }

  StatusOr<std::unique_ptr<Watcher>> Watch(const ListOptions& opts) override {
    std::lock_guard<std::mutex> l(mu_);
    watch_calls_.push_back(opts);
    cv_.notify_all();
    std::shared_ptr<FakeWatcher> w;
    if (watches_.empty()) {
      w = std::make_shared<FakeWatcher>();
    } else {
      auto next = std::move(watches_.front());
      watches_.pop_front();
      if (auto* s = std::get_if<Status>(&next)) return *s;
      w = std::get<std::shared_ptr<FakeWatcher>>(next);
    }
    opened_.push_back(w);
    return std::unique_ptr<Watcher>(new Proxy(w));
  }

  std::vector<ListOptions> list_calls() const {
    std::lock_guard<std::mutex> l(mu_);
    return list_calls_;
  }
  std::vector<ListOptions> watch_calls() const {
    std::lock_guard<std::mutex> l(mu_);
    return watch_calls_;
  }
  std::vector<std::string> ListRvs() const {
    std::vector<std::string> out;
    for (const auto& o : list_calls()) out.push_back(o.resource_version);
    return out;
  }
  std::vector<std::string> WatchRvs() const {
    std::vector<std::string> out;
    for (const auto& o : watch_calls()) out.push_back(o.resource_version);
    return out;
  }

 private:
  // The reflector owns (and destroys) its Watcher; the test keeps the shared FakeWatcher.
  class Proxy final : public Watcher {
   public:
    explicit Proxy(std::shared_ptr<FakeWatcher> w) : w_(std::move(w)) {}
    ~Proxy() override { w_->Stop(); }
    StatusOr<std::optional<WatchEvent>> Next() override { return w_->Next(); }
    void Stop() override { w_->Stop(); }

   private:
    std::shared_ptr<FakeWatcher> w_;
  };

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<StatusOr<ObjectList>> lists_;
  std::deque<std::variant<std::shared_ptr<FakeWatcher>, Status>> watches_;
  std::vector<std::shared_ptr<FakeWatcher>> opened_;
  std::vector<ListOptions> list_calls_;
  std::vector<ListOptions> watch_calls_;
};

// Builders.
inline ObjectPtr Obj(const std::string& ns, const std::string& name, const std::string& rv,
                     const std::string& labels_json = "{}") {
  std::string meta = R"({"metadata":{"name":")" + name + R"(","resourceVersion":")" + rv +
                     R"(","labels":)" + labels_json;
  if (!ns.empty()) meta += R"(,"namespace":")" + ns + "\"";
  return Object::Parse(meta + "}}").value();
}

inline ObjectList List(const std::string& rv, std::vector<ObjectPtr> items,
                       const std::string& continue_token = "") {
  ObjectList l;
  l.resource_version = rv;
  l.continue_token = continue_token;
  l.items = std::move(items);
  return l;
}

inline WatchEvent Ev(WatchEvent::Type t, ObjectPtr obj) {
  WatchEvent e;
  e.type = t;
  e.object = std::move(obj);
  return e;
}

inline WatchEvent Bookmark(const std::string& rv) {
  return Ev(WatchEvent::Type::kBookmark,
            Object::Parse(R"({"metadata":{"resourceVersion":")" + rv + "\"}}").value());
}

inline WatchEvent ErrorEvent(int code, const std::string& reason) {
  WatchEvent e;
  e.type = WatchEvent::Type::kError;
  ApiError err;
  err.http_code = code;
  err.reason = reason;
  err.message = "scripted";
  e.error = err.ToStatus();
  return e;
}

inline Status ApiStatus(int code, const std::string& reason) {
  ApiError err;
  err.http_code = code;
  err.reason = reason;
  err.message = "scripted";
  return err.ToStatus();
}

// Steps `clock` whenever something is parked on it, until `pred` holds (or ~10s of real time).
template <typename Pred>
bool StepUntil(FakeClock& clock, Pred pred, Clock::Duration step = std::chrono::seconds(31)) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    if (clock.Waiters() > 0) clock.Step(step);
    std::this_thread::yield();
  }
  return pred();
}

// Waits (without touching the clock) until `pred` holds or ~10s of real time pass.
template <typename Pred>
bool Eventually(Pred pred) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::yield();
  }
  return pred();
}

}  // namespace draco::k8s::cache::testing
