// SharedInformer: one reflector feeding one indexer and any number of event handlers
// (client-go shared_informer.go + RealFIFO, lifecycle.md section 5.2).
//
// Data flow: Reflector -> (on the reflector's thread) indexer update -> per-handler queues ->
// (one thread per handler) callbacks. client-go puts a FIFO and a processing goroutine between the
// reflector and the indexer; here each delta is applied where the reflector delivers it, which
// saves a thread hand-off per event (see Applier in shared_informer.cc).
//   * Deltas are delivered in order, one notification per change (RealFIFO / InOrderInformers);
//     they are not coalesced.
//   * The indexer is updated before handlers hear about a change, so a handler that reads the
//     indexer (e.g. through a Lister) sees at least that state.
//   * A relist (Replace) is diffed against the indexer at the moment it is processed: objects that
//     disappeared are delivered as deletes with final_state_unknown = true (client-go's
//     DeletedFinalStateUnknown tombstone; `object` is the last known state), the rest as adds or
//     updates.
//   * HasSynced() turns true after the first Replace has been processed. Adds that are part of an
//     initial list carry is_in_initial_list = true.
//   * Handlers added after Start() first receive a synthetic add for every cached object.
//   * With a resync period, every handler periodically receives Update(obj, obj) for every
//     cached object. Handlers must be level-based and idempotent.
//   * Each handler has its own unbounded buffer and thread: a slow handler delays only itself.
//     Callbacks of one handler are never concurrent. Callbacks must not block forever and must not
//     throw (an escaping exception is caught and logged).
//
// Thread-safety: all methods are thread-safe. Start() returns at once; Stop() (also run by the
// destructor) joins every thread, after which no callback runs. The ListerWatcher must outlive
// the informer.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "base/clock.h"
#include "k8sclient/cache/lister_watcher.h"
#include "k8sclient/cache/reflector.h"
#include "k8sclient/cache/store.h"

namespace draco::k8s::cache {

// What a delete handler receives.
struct DeletedObject {
  // The deleted object, or its last known state when final_state_unknown.
  ObjectPtr object;
  std::string key;
  // True when the delete was inferred from a relist (the watch missed it).
  bool final_state_unknown = false;
};

struct ResourceEventHandler {
  std::function<void(const ObjectPtr& obj, bool is_in_initial_list)> on_add;
  std::function<void(const ObjectPtr& old_obj, const ObjectPtr& new_obj)> on_update;
  std::function<void(const DeletedObject& obj)> on_delete;
};

struct SharedInformerOptions {
  std::string name = "informer";
  // 0 disables resync; otherwise at least kMinimumResyncPeriod.
  Clock::Duration resync_period = Clock::Duration::zero();
  Indexers indexers;  // a namespace index is always added
  Clock* clock = nullptr;
  std::function<double()> rand01;
};

class SharedInformer {
 public:
  static constexpr std::chrono::seconds kMinimumResyncPeriod{1};

  explicit SharedInformer(ListerWatcher& lw, SharedInformerOptions options = {});
  ~SharedInformer();
  SharedInformer(const SharedInformer&) = delete;
  SharedInformer& operator=(const SharedInformer&) = delete;

  // Registers a handler; returns an id for RemoveEventHandler. Any time, before or after Start().
  int AddEventHandler(ResourceEventHandler handler);
  // True once the handler has been called for every object of the informer's initial list (or,
  // for a handler added later, for every synthetic add). HasSynced() only says the cache is
  // filled; handler calls happen asynchronously after that. False for unknown ids.
  bool HandlerHasSynced(int id) const;
  // Blocks until HandlerHasSynced(id) or `timeout` passes on the informer's clock; returns
  // HandlerHasSynced(id). Use this, not WaitForCacheSync(), before acting on what the handler
  // built from the initial list.
  bool WaitForHandlerSync(int id, Clock::Duration timeout);
  // Stops delivering to the handler (pending notifications are dropped) and joins its thread.
  // Must not be called from inside that handler's callback.
  void RemoveEventHandler(int id);

  // Starts the reflector and the handler threads. Idempotent.
  void Start();
  // Stops everything and joins all threads. Idempotent.
  void Stop();

  bool HasSynced() const { return synced_.load(); }
  // Blocks until HasSynced() or `timeout` passes on the informer's clock; returns HasSynced().
  bool WaitForCacheSync(Clock::Duration timeout);

  // The cache. Reads are always safe; writing to it is reserved to the informer.
  const Indexer& GetIndexer() const { return *indexer_; }
  std::string LastSyncResourceVersion() const { return reflector_->LastSyncResourceVersion(); }
  // The reflector's Reflector::WatchDownSince(): nullopt while its watch is open.
  std::optional<Clock::TimePoint> WatchDownSince() const { return reflector_->WatchDownSince(); }
  const std::string& name() const { return options_.name; }

 private:
  struct Delta;
  class Applier;
  class Listener;
  struct Notification;

  // Applies one delta to the indexer and the listeners. Requires process_mu_.
  void Process(const Delta& entry);
  void Distribute(const Notification& n, bool is_resync);

  SharedInformerOptions options_;
  Clock& clock_;
  std::unique_ptr<Indexer> indexer_;
  std::unique_ptr<Applier> applier_;
  std::unique_ptr<Reflector> reflector_;

  // Guards listeners_ and makes "process one delta" atomic with respect to AddEventHandler.
  mutable std::mutex process_mu_;
  std::vector<std::shared_ptr<Listener>> listeners_;
  int next_listener_id_ = 1;
  bool started_ = false;
  bool stopped_ = false;
  std::atomic<bool> synced_{false};
  std::mutex sync_mu_;
  std::condition_variable sync_cv_;

  std::thread reflector_thread_;
};

}  // namespace draco::k8s::cache
