#include "k8sclient/cache/reflector.h"

#include <random>
#include <thread>

#include <spdlog/spdlog.h>

#include "k8sclient/api_error.h"

namespace draco::k8s::cache {
namespace {

std::function<double()> DefaultRand() {
  return [gen = std::make_shared<std::mt19937_64>(std::random_device{}()),
          mu = std::make_shared<std::mutex>()]() {
    std::lock_guard<std::mutex> l(*mu);
    return std::uniform_real_distribution<double>(0.0, 1.0)(*gen);
  };
}

bool IsRetriableWatchError(const Status& s) {
  // Connection refused / reset surface as UNAVAILABLE without an API status.
  return IsTooManyRequests(s) ||
         (s.code() == StatusCode::kUnavailable && !ApiError::FromStatus(s).has_value());
}

ReflectorOptions WithDefaults(ReflectorOptions o) {
  if (!o.rand01) o.rand01 = DefaultRand();
  return o;
}

}  // namespace

Reflector::Reflector(ListerWatcher& lw, ReflectorStore& store, ReflectorOptions options)
    : lw_(lw),
      store_(store),
      options_(WithDefaults(std::move(options))),
      clock_(options_.clock != nullptr ? *options_.clock : RealClock::Get()),
      backoff_({kInitialBackoff, kBackoffFactor, kBackoffJitter, kMaxBackoff, kBackoffReset},
               clock_, options_.rand01),
      watch_down_since_(clock_.Now()) {}

Reflector::~Reflector() { Stop(); }

void Reflector::Stop() {
  std::lock_guard<std::mutex> l(mu_);
  stopped_ = true;
  if (current_watch_ != nullptr) current_watch_->Stop();
  cv_.notify_all();
}

bool Reflector::WaitOrStop(Clock::Duration d) {
  std::unique_lock<std::mutex> lock(mu_);
  return clock_.WaitUntil(cv_, lock, clock_.Now() + d, [this] { return stopped_; });
}

std::optional<Clock::TimePoint> Reflector::WatchDownSince() const {
  std::lock_guard<std::mutex> l(mu_);
  if (watching_) return std::nullopt;
  return watch_down_since_;
}

std::string Reflector::LastSyncResourceVersion() const {
  std::lock_guard<std::mutex> l(mu_);
  return last_sync_rv_;
}

void Reflector::SetLastSyncResourceVersion(const std::string& rv) {
  if (rv.empty()) return;
  {
    std::lock_guard<std::mutex> l(mu_);
    last_sync_rv_ = rv;
  }
  store_.UpdateResourceVersion(rv);
}

std::string Reflector::RelistResourceVersion() const {
  std::lock_guard<std::mutex> l(mu_);
  if (last_sync_rv_unavailable_) return "";
  if (last_sync_rv_.empty()) return "0";
  return last_sync_rv_;
}

void Reflector::ResyncLoop() {
  while (!WaitOrStop(options_.resync_period)) {
    Status s = store_.Resync();
    if (!s.ok()) spdlog::warn("{}: resync failed: {}", options_.name, s.ToString());
  }
}

void Reflector::Run() {
  std::thread resync;
  if (options_.resync_period > Clock::Duration::zero()) {
    resync = std::thread([this] { ResyncLoop(); });
  }
  while (true) {
    {
      std::lock_guard<std::mutex> l(mu_);
      if (stopped_) break;
    }
    Status s = ListAndWatch();
    if (!s.ok()) spdlog::warn("{}: list and watch failed: {}", options_.name, s.ToString());
    if (WaitOrStop(backoff_.Next())) break;
  }
  if (resync.joinable()) resync.join();
}

Status Reflector::ListAndWatch() {
  Status s = List();
  if (!s.ok()) return s;
  return WatchLoop();
}

Status Reflector::List() {
  ListOptions opts;
  opts.resource_version = RelistResourceVersion();
  auto list_pages = [this](ListOptions o) -> StatusOr<ObjectList> {
    // Paging only where the server would otherwise read everything from etcd at once; an exact
    // RV without a limit is served from the watch cache (client-go reflector.list).
    if (o.resource_version.empty() || o.resource_version == "0") o.limit = options_.page_size;
    const std::string start_rv = o.resource_version;
    ObjectList all;
    bool first = true;
    while (true) {
      auto page = lw_.List(o);
      if (!page.ok()) {
        if (!o.continue_token.empty() && IsGone(page.status())) {
          // The continue token expired mid-way: fall back to one unpaged list (client-go pager).
          o.continue_token.clear();
          o.limit = 0;
          o.resource_version = start_rv;
          all.items.clear();
          first = true;
          continue;
        }
        return page.status();
      }
      if (first) all.resource_version = page->resource_version;
      first = false;
      all.items.insert(all.items.end(), std::make_move_iterator(page->items.begin()),
                       std::make_move_iterator(page->items.end()));
      if (page->continue_token.empty()) {
        // With paging, the last page carries the RV of the whole snapshot as well.
        if (!page->resource_version.empty()) all.resource_version = page->resource_version;
        return all;
      }
      o.continue_token = page->continue_token;
      o.resource_version.clear();
    }
  };
  auto list = list_pages(opts);
  if (!list.ok() && (IsGone(list.status()) || IsTooLargeResourceVersion(list.status()))) {
    {
      std::lock_guard<std::mutex> l(mu_);
      last_sync_rv_unavailable_ = true;
    }
    opts.resource_version = RelistResourceVersion();
    list = list_pages(opts);
  }
  if (!list.ok()) return list.status().WithPrefix(options_.name + ": list");
  const std::string rv = list->resource_version;
  Status s = store_.Replace(std::move(list->items), rv);
  if (!s.ok()) return s.WithPrefix(options_.name + ": replace");
  {
    std::lock_guard<std::mutex> l(mu_);
    last_sync_rv_unavailable_ = false;
  }
  SetLastSyncResourceVersion(rv);
  listed_ = true;
  return OkStatus();
}

Status Reflector::WatchLoop() {
  while (true) {
    ListOptions opts;
    opts.resource_version = LastSyncResourceVersion();
    opts.allow_watch_bookmarks = true;
    const auto min_s = std::chrono::duration_cast<std::chrono::seconds>(kMinWatchTimeout).count();
    opts.timeout_seconds =
        static_cast<int64_t>(static_cast<double>(min_s) * (1.0 + options_.rand01()));
    auto w = lw_.Watch(opts);
    {
      std::lock_guard<std::mutex> l(mu_);
      if (stopped_) return OkStatus();
      if (w.ok()) {
        current_watch_ = w->get();
        watching_ = true;
      }
    }
    if (!w.ok()) {
      if (IsRetriableWatchError(w.status())) {
        spdlog::info("{}: watch failed, backing off: {}", options_.name, w.status().ToString());
        if (WaitOrStop(backoff_.Next())) return OkStatus();
        continue;
      }
      if (IsGone(w.status())) return OkStatus();  // relist
      return w.status().WithPrefix(options_.name + ": watch");
    }
    Status s = HandleWatch(**w);
    {
      std::lock_guard<std::mutex> l(mu_);
      current_watch_ = nullptr;
      watching_ = false;
      watch_down_since_ = clock_.Now();
      if (stopped_) return OkStatus();
    }
    w->reset();
    if (s.ok()) continue;  // the server closed the watch: re-watch from the last RV
    if (IsGone(s)) {
      spdlog::info("{}: watch expired, relisting: {}", options_.name, s.ToString());
      return OkStatus();
    }
    if (IsTooManyRequests(s)) {
      if (WaitOrStop(backoff_.Next())) return OkStatus();
      continue;
    }
    spdlog::warn("{}: watch ended: {}", options_.name, s.ToString());
    return OkStatus();
  }
}

Status Reflector::HandleWatch(Watcher& w) {
  const Clock::TimePoint start = clock_.Now();
  int events = 0;
  while (true) {
    auto next = w.Next();
    if (!next.ok()) return next.status();
    if (!next->has_value()) break;
    WatchEvent& ev = **next;
    if (ev.type == WatchEvent::Type::kError) return ev.error;
    ++events;
    if (ev.object == nullptr) {
      spdlog::warn("{}: watch event without object skipped", options_.name);
      continue;
    }
    if (ev.type == WatchEvent::Type::kBookmark) {
      SetLastSyncResourceVersion(ev.object->resource_version());
      continue;
    }
    if (ev.object->name().empty()) {
      spdlog::warn("{}: {} event for an object without a name skipped", options_.name,
                   WatchEventTypeName(ev.type));
      continue;
    }
    Status s;
    switch (ev.type) {
      case WatchEvent::Type::kAdded:
        s = store_.Add(ev.object);
        break;
      case WatchEvent::Type::kModified:
        s = store_.Update(ev.object);
        break;
      case WatchEvent::Type::kDeleted:
        s = store_.Delete(ev.object);
        break;
      default:
        break;
    }
    if (!s.ok()) {
      spdlog::warn("{}: unable to apply {} event for {}: {}", options_.name,
                   WatchEventTypeName(ev.type), ev.object->Key(), s.ToString());
    }
    SetLastSyncResourceVersion(ev.object->resource_version());
  }
  if (events == 0 && clock_.Now() - start < kVeryShortWatch) {
    return UnavailableError(options_.name +
                            ": very short watch: the server closed it within 1s without events");
  }
  return OkStatus();
}

}  // namespace draco::k8s::cache
