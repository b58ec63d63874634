#include "k8sclient/cache/shared_informer.h"

#include <exception>
#include <functional>
#include <memory>
#include <unordered_set>

#include <spdlog/spdlog.h>

namespace draco::k8s::cache {

// What one handler is told.
struct SharedInformer::Notification {
  // kSynced is not delivered: it marks the end of the initial adds for this handler.
  enum class Type { kAdd, kUpdate, kDelete, kSynced };
  Type type = Type::kAdd;
  ObjectPtr old_obj;
  ObjectPtr new_obj;
  DeletedObject deleted;
  bool is_in_initial_list = false;
};

// The reflector's store: each delta is applied to the indexer and handed to the listeners on the
// calling thread (the reflector's, or its resync timer's), under process_mu_. client-go queues
// deltas (RealFIFO) for a processing goroutine; here that hop cost a thread wake-up per event
// for work that takes microseconds (the listeners' buffers already decouple slow handlers), so
// draco's informers hand each event over once, not twice. Replace and Resync are resolved against
// the indexer when applied, so they see the effect of every delta applied before them.
struct SharedInformer::Delta {
  enum class Kind { kAdd, kUpdate, kDelete, kReplace, kResync };
  Kind kind = Kind::kAdd;
  ObjectPtr obj;
  std::vector<ObjectPtr> items;
};

class SharedInformer::Applier final : public ReflectorStore {
 public:
  explicit Applier(SharedInformer& informer) : informer_(informer) {}

  Status Add(ObjectPtr obj) override { return Push({Delta::Kind::kAdd, std::move(obj), {}}); }
  Status Update(ObjectPtr obj) override { return Push({Delta::Kind::kUpdate, std::move(obj), {}}); }
  Status Delete(ObjectPtr obj) override { return Push({Delta::Kind::kDelete, std::move(obj), {}}); }
  Status Replace(std::vector<ObjectPtr> items, const std::string&) override {
    return Push({Delta::Kind::kReplace, nullptr, std::move(items)});
  }
  Status Resync() override { return Push({Delta::Kind::kResync, nullptr, {}}); }

 private:
  Status Push(const Delta& e) {
    std::lock_guard<std::mutex> l(informer_.process_mu_);
    if (informer_.stopped_) return CancelledError("informer stopped");
    informer_.Process(e);
    return OkStatus();
  }

  SharedInformer& informer_;
};

// One registered handler: an unbounded buffer drained by its own thread.
class SharedInformer::Listener {
 public:
  // `on_synced` runs on the listener's thread once the handler has seen the initial list.
  Listener(int id, ResourceEventHandler handler, std::string informer_name,
           std::function<void()> on_synced)
      : id_(id),
        handler_(std::move(handler)),
        informer_name_(std::move(informer_name)),
        on_synced_(std::move(on_synced)) {
    thread_ = std::thread([this] { Run(); });
  }
  ~Listener() { Stop(); }
  Listener(const Listener&) = delete;  // its thread holds `this`
  Listener& operator=(const Listener&) = delete;

  int id() const { return id_; }
  bool synced() const { return synced_.load(); }

  void Add(Notification n) {
    std::lock_guard<std::mutex> l(mu_);
    if (stopped_) return;
    pending_.push_back(std::move(n));
    cv_.notify_one();
  }

  void Stop() {
    {
      std::lock_guard<std::mutex> l(mu_);
      stopped_ = true;
      cv_.notify_all();
    }
    if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
  }

 private:
  void Run() {
    while (true) {
      Notification n;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return !pending_.empty() || stopped_; });
        if (stopped_) return;
        n = std::move(pending_.front());
        pending_.pop_front();
      }
      try {
        switch (n.type) {
          case Notification::Type::kAdd:
            if (handler_.on_add) handler_.on_add(n.new_obj, n.is_in_initial_list);
            break;
          case Notification::Type::kUpdate:
            if (handler_.on_update) handler_.on_update(n.old_obj, n.new_obj);
            break;
          case Notification::Type::kDelete:
            if (handler_.on_delete) handler_.on_delete(n.deleted);
            break;
          case Notification::Type::kSynced:
            synced_ = true;
            on_synced_();
            break;
        }
      } catch (const std::exception& e) {
        spdlog::error("{}: event handler threw: {}", informer_name_, e.what());
      } catch (...) {
        spdlog::error("{}: event handler threw an unknown exception", informer_name_);
      }
    }
  }

  const int id_;
  const ResourceEventHandler handler_;
  const std::string informer_name_;
  const std::function<void()> on_synced_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Notification> pending_;
  bool stopped_ = false;
  std::atomic<bool> synced_{false};
  std::thread thread_;
};

namespace {

SharedInformerOptions Normalize(SharedInformerOptions o) {
  if (o.resync_period > Clock::Duration::zero() &&
      o.resync_period < SharedInformer::kMinimumResyncPeriod) {
    o.resync_period = SharedInformer::kMinimumResyncPeriod;
  }
  if (o.indexers.count(kNamespaceIndex) == 0) o.indexers[kNamespaceIndex] = MetaNamespaceIndexFunc;
  return o;
}

}  // namespace

SharedInformer::SharedInformer(ListerWatcher& lw, SharedInformerOptions options)
    : options_(Normalize(std::move(options))),
      clock_(options_.clock != nullptr ? *options_.clock : RealClock::Get()),
      indexer_(NewIndexer(MetaNamespaceKeyFunc, options_.indexers)),
      applier_(std::make_unique<Applier>(*this)) {
  ReflectorOptions ro;
  ro.name = options_.name;
  ro.clock = &clock_;
  ro.resync_period = options_.resync_period;
  ro.rand01 = options_.rand01;
  reflector_ = std::make_unique<Reflector>(lw, *applier_, std::move(ro));
}

SharedInformer::~SharedInformer() { Stop(); }

int SharedInformer::AddEventHandler(ResourceEventHandler handler) {
  std::lock_guard<std::mutex> l(process_mu_);
  auto listener =
      std::make_shared<Listener>(next_listener_id_++, std::move(handler), options_.name, [this] {
        std::lock_guard<std::mutex> sl(sync_mu_);
        sync_cv_.notify_all();
      });
  if (started_ && !stopped_) {
    // Bring the late handler up to the current state before any further delta.
    for (const auto& obj : indexer_->List()) {
      Notification n;
      n.type = Notification::Type::kAdd;
      n.new_obj = obj;
      n.is_in_initial_list = true;
      listener->Add(std::move(n));
    }
  }
  if (synced_.load()) {
    Notification marker;
    marker.type = Notification::Type::kSynced;
    listener->Add(std::move(marker));
  }
  listeners_.push_back(std::move(listener));
  return listeners_.back()->id();
}

bool SharedInformer::HandlerHasSynced(int id) const {
  std::lock_guard<std::mutex> l(process_mu_);
  for (const auto& listener : listeners_) {
    if (listener->id() == id) return listener->synced();
  }
  return false;
}

bool SharedInformer::WaitForHandlerSync(int id, Clock::Duration timeout) {
  std::shared_ptr<Listener> listener;
  {
    std::lock_guard<std::mutex> l(process_mu_);
    for (const auto& candidate : listeners_) {
      if (candidate->id() == id) listener = candidate;
    }
  }
  if (!listener) return false;
  // Not under process_mu_: the processing loop takes sync_mu_ while holding it.
  std::unique_lock<std::mutex> lock(sync_mu_);
  return clock_.WaitUntil(sync_cv_, lock, clock_.Now() + timeout,
                          [&] { return listener->synced(); });
}

void SharedInformer::RemoveEventHandler(int id) {
  std::shared_ptr<Listener> removed;
  {
    std::lock_guard<std::mutex> l(process_mu_);
    for (auto it = listeners_.begin(); it != listeners_.end(); ++it) {
      if ((*it)->id() == id) {
        removed = *it;
        listeners_.erase(it);
        break;
      }
    }
  }
  if (removed) removed->Stop();
}

void SharedInformer::Start() {
  std::lock_guard<std::mutex> l(process_mu_);
  if (started_ || stopped_) return;
  started_ = true;
  reflector_thread_ = std::thread([this] { reflector_->Run(); });
}

void SharedInformer::Stop() {
  {
    std::lock_guard<std::mutex> l(process_mu_);
    if (stopped_) return;
    stopped_ = true;
  }
  reflector_->Stop();
  if (reflector_thread_.joinable()) reflector_thread_.join();  // no delta is applied after this
  std::vector<std::shared_ptr<Listener>> listeners;
  {
    std::lock_guard<std::mutex> l(process_mu_);
    listeners.swap(listeners_);
  }
  for (auto& listener : listeners) listener->Stop();
  {
    std::lock_guard<std::mutex> l(sync_mu_);
    sync_cv_.notify_all();
  }
}

bool SharedInformer::WaitForCacheSync(Clock::Duration timeout) {
  std::unique_lock<std::mutex> lock(sync_mu_);
  return clock_.WaitUntil(sync_cv_, lock, clock_.Now() + timeout,
                          [this] { return synced_.load(); });
}

void SharedInformer::Distribute(const Notification& n, bool /*is_resync*/) {
  for (auto& listener : listeners_) listener->Add(n);
}

void SharedInformer::Process(const Delta& entry) {
  using Kind = Delta::Kind;
  auto upsert = [this](const ObjectPtr& obj, bool initial) {
    const std::string key = obj->Key();
    ObjectPtr old = indexer_->GetByKey(key);
    Notification n;
    n.new_obj = obj;
    if (old != nullptr) {
      (void)indexer_->Update(obj);
      n.type = Notification::Type::kUpdate;
      n.old_obj = std::move(old);
    } else {
      (void)indexer_->Add(obj);
      n.type = Notification::Type::kAdd;
      n.is_in_initial_list = initial;
    }
    Distribute(n, false);
  };
  switch (entry.kind) {
    case Kind::kAdd:
    case Kind::kUpdate:
      upsert(entry.obj, false);
      break;
    case Kind::kDelete: {
      Notification n;
      n.type = Notification::Type::kDelete;
      n.deleted.key = entry.obj->Key();
      n.deleted.object = entry.obj;
      (void)indexer_->Delete(entry.obj);
      Distribute(n, false);
      break;
    }
    case Kind::kReplace: {
      std::unordered_set<std::string> keep;
      keep.reserve(entry.items.size());
      for (const auto& obj : entry.items) keep.insert(obj->Key());
      for (const auto& old : indexer_->List()) {
        const std::string key = old->Key();
        if (keep.count(key) != 0) continue;
        (void)indexer_->Delete(old);
        Notification n;
        n.type = Notification::Type::kDelete;
        n.deleted = {old, key, true};
        Distribute(n, false);
      }
      const bool initial = !synced_.load();
      for (const auto& obj : entry.items) upsert(obj, initial);
      if (!synced_.load()) {
        Notification marker;
        marker.type = Notification::Type::kSynced;
        Distribute(marker, false);
        std::lock_guard<std::mutex> sl(sync_mu_);
        synced_ = true;
        sync_cv_.notify_all();
      }
      break;
    }
    case Kind::kResync:
      for (const auto& obj : indexer_->List()) {
        Notification n;
        n.type = Notification::Type::kUpdate;
        n.old_obj = obj;
        n.new_obj = obj;
        Distribute(n, true);
      }
      break;
  }
}

}  // namespace draco::k8s::cache
