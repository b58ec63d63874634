#include "k8sclient/cache/shared_informer.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "k8sclient/cache/testing/fake_lister_watcher.h"

namespace draco::k8s::cache {
namespace {

using testing::ErrorEvent;
using testing::Ev;
using testing::Eventually;
using testing::FakeListerWatcher;
using testing::List;
using testing::Obj;
using testing::StepUntil;
using T = WatchEvent::Type;
using Strings = std::vector<std::string>;

// Records notifications as strings, e.g. "add ns/a 5 initial", "update ns/a 5->6",
// "delete ns/a unknown".
class Recorder {
 public:
  explicit Recorder(const Indexer* indexer = nullptr) : indexer_(indexer) {}

  ResourceEventHandler Handler() {
    ResourceEventHandler h;
    h.on_add = [this](const ObjectPtr& o, bool initial) {
      // The indexer is updated before handlers run.
      if (indexer_ != nullptr && indexer_->GetByKey(o->Key()) == nullptr) {
        Record("add-before-index " + o->Key());
      }
      Record("add " + o->Key() + " " + o->resource_version() + (initial ? " initial" : ""));
    };
    h.on_update = [this](const ObjectPtr& old_obj, const ObjectPtr& new_obj) {
      Record("update " + new_obj->Key() + " " + old_obj->resource_version() + "->" +
             new_obj->resource_version());
    };
    h.on_delete = [this](const DeletedObject& d) {
      Record("delete " + d.key + (d.final_state_unknown ? " unknown" : ""));
    };
    return h;
  }

  Strings Events() const {
    std::lock_guard<std::mutex> l(mu_);
    return events_;
  }
  bool WaitFor(size_t n) const {
    return Eventually([&] { return Events().size() >= n; });
  }

 private:
  void Record(std::string s) {
    std::lock_guard<std::mutex> l(mu_);
    events_.push_back(std::move(s));
  }
  const Indexer* indexer_;
  mutable std::mutex mu_;
  Strings events_;
};

class SharedInformerTest : public ::testing::Test {
 protected:
  std::unique_ptr<SharedInformer> Make(Clock::Duration resync = Clock::Duration::zero()) {
    SharedInformerOptions o;
    o.name = "test";
    o.clock = &clock_;
    o.resync_period = resync;
    o.rand01 = [] { return 0.5; };
    return std::make_unique<SharedInformer>(lw_, o);
  }
  FakeClock clock_;
  FakeListerWatcher lw_;
};

TEST_F(SharedInformerTest, InitialListThenWatchEventsInOrder) {
  lw_.PushList(List("10", {Obj("ns", "a", "9"), Obj("ns", "b", "10")}));
  auto w = lw_.PushWatch();
  auto inf = Make();
  Recorder rec(&inf->GetIndexer());
  inf->AddEventHandler(rec.Handler());
  EXPECT_FALSE(inf->HasSynced());
  inf->Start();
  ASSERT_TRUE(inf->WaitForCacheSync(std::chrono::seconds(10)));
  // Handlers run on their own thread: let them see the initial adds before the watch deletes ns/b,
  // or the add-before-index check below would race with that delete.
  ASSERT_TRUE(rec.WaitFor(2));
  w->Push(Ev(T::kModified, Obj("ns", "a", "11")));
  w->Push(Ev(T::kAdded, Obj("ns", "c", "12")));
  w->Push(Ev(T::kDeleted, Obj("ns", "b", "13")));
  w->Push(Ev(T::kModified, Obj("ns", "a", "14")));
  ASSERT_TRUE(rec.WaitFor(6));
  EXPECT_EQ(rec.Events(), (Strings{"add ns/a 9 initial", "add ns/b 10 initial", "update ns/a 9->11",
                                   "add ns/c 12", "delete ns/b", "update ns/a 11->14"}));
  EXPECT_EQ(inf->GetIndexer().Size(), 2u);
  EXPECT_EQ(inf->LastSyncResourceVersion(), "14");
  inf->Stop();
}

TEST_F(SharedInformerTest, RelistDeliversTombstonesForObjectsThatVanished) {
  lw_.PushList(List("10", {Obj("ns", "a", "9"), Obj("ns", "b", "10")}));
  auto w1 = lw_.PushWatch();
  w1->Push(ErrorEvent(410, "Expired"));
  lw_.PushList(List("20", {Obj("ns", "b", "15"), Obj("ns", "c", "20")}));
  lw_.PushWatch();
  auto inf = Make();
  Recorder rec;
  inf->AddEventHandler(rec.Handler());
  inf->Start();
  ASSERT_TRUE(StepUntil(clock_, [&] { return rec.Events().size() >= 5; }));
  EXPECT_EQ(rec.Events(), (Strings{"add ns/a 9 initial", "add ns/b 10 initial",
                                   "delete ns/a unknown", "update ns/b 10->15", "add ns/c 20"}));
  EXPECT_EQ(lw_.ListRvs(), (Strings{"0", "10"}));
  inf->Stop();
}

TEST_F(SharedInformerTest, HandlerHasSyncedAfterItsInitialAdds) {
  lw_.PushList(List("10", {Obj("ns", "a", "9"), Obj("ns", "b", "9")}));
  lw_.PushWatch();
  auto inf = Make();
  std::mutex gate;
  gate.lock();
  ResourceEventHandler blocked;
  blocked.on_add = [&](const ObjectPtr&, bool) { std::lock_guard<std::mutex> l(gate); };
  const int id = inf->AddEventHandler(blocked);
  EXPECT_FALSE(inf->HandlerHasSynced(id));
  inf->Start();
  ASSERT_TRUE(inf->WaitForCacheSync(std::chrono::seconds(10)));
  EXPECT_FALSE(inf->HandlerHasSynced(id));  // its adds are still pending
  gate.unlock();
  EXPECT_TRUE(Eventually([&] { return inf->HandlerHasSynced(id); }));
  EXPECT_FALSE(inf->HandlerHasSynced(12345));
  inf->Stop();
}

TEST_F(SharedInformerTest, WaitForHandlerSyncReturnsOnlyAfterTheHandlerSawTheInitialList) {
  lw_.PushList(List("10", {Obj("ns", "a", "9")}));
  lw_.PushWatch();
  auto inf = Make();
  std::mutex gate;
  gate.lock();
  std::atomic<int> adds{0};
  ResourceEventHandler blocked;
  blocked.on_add = [&](const ObjectPtr&, bool) {
    std::lock_guard<std::mutex> l(gate);
    ++adds;
  };
  const int id = inf->AddEventHandler(blocked);
  EXPECT_FALSE(inf->WaitForHandlerSync(12345, std::chrono::seconds(1)));  // unknown id
  inf->Start();
  ASSERT_TRUE(inf->WaitForCacheSync(std::chrono::seconds(10)));
  std::atomic<int> result{-1};
  std::thread waiter([&] { result = inf->WaitForHandlerSync(id, std::chrono::seconds(10)); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(result.load(), -1);  // the store is filled, the handler is still blocked
  gate.unlock();
  waiter.join();
  EXPECT_EQ(result.load(), 1);
  EXPECT_EQ(adds.load(), 1);  // the handler's initial add happened before the wait returned
  inf->Stop();
}

TEST_F(SharedInformerTest, LateHandlerGetsSyntheticAddsThenLiveEvents) {
  lw_.PushList(List("10", {Obj("ns", "a", "9")}));
  auto w = lw_.PushWatch();
  auto inf = Make();
  inf->Start();
  ASSERT_TRUE(inf->WaitForCacheSync(std::chrono::seconds(10)));
  Recorder late;
  const int late_id = inf->AddEventHandler(late.Handler());
  EXPECT_TRUE(Eventually([&] { return inf->HandlerHasSynced(late_id); }));
  w->Push(Ev(T::kAdded, Obj("ns", "b", "11")));
  ASSERT_TRUE(late.WaitFor(2));
  EXPECT_EQ(late.Events(), (Strings{"add ns/a 9 initial", "add ns/b 11"}));
  inf->Stop();
}

TEST_F(SharedInformerTest, ResyncRedeliversEveryObjectAsUpdate) {
  lw_.PushList(List("10", {Obj("ns", "a", "9")}));
  lw_.PushWatch();
  auto inf = Make(std::chrono::seconds(30));
  Recorder rec;
  inf->AddEventHandler(rec.Handler());
  inf->Start();
  ASSERT_TRUE(rec.WaitFor(1));
  ASSERT_TRUE(Eventually([&] { return clock_.Waiters() > 0; }));
  clock_.Step(std::chrono::seconds(30));
  ASSERT_TRUE(rec.WaitFor(2));
  EXPECT_EQ(rec.Events(), (Strings{"add ns/a 9 initial", "update ns/a 9->9"}));
  inf->Stop();
}

TEST_F(SharedInformerTest, RemovedHandlerStopsReceiving) {
  lw_.PushList(List("10", {}));
  auto w = lw_.PushWatch();
  auto inf = Make();
  Recorder kept;
  Recorder removed;
  inf->AddEventHandler(kept.Handler());
  int id = inf->AddEventHandler(removed.Handler());
  inf->Start();
  ASSERT_TRUE(inf->WaitForCacheSync(std::chrono::seconds(10)));
  inf->RemoveEventHandler(id);
  w->Push(Ev(T::kAdded, Obj("ns", "a", "11")));
  ASSERT_TRUE(kept.WaitFor(1));
  inf->Stop();
  EXPECT_TRUE(removed.Events().empty());
}

TEST_F(SharedInformerTest, SlowHandlerDoesNotBlockOthersAndThrowingHandlerIsContained) {
  lw_.PushList(List("10", {Obj("ns", "a", "1")}));
  lw_.PushWatch();
  auto inf = Make();
  std::mutex gate;
  gate.lock();
  ResourceEventHandler slow;
  slow.on_add = [&](const ObjectPtr&, bool) { std::lock_guard<std::mutex> l(gate); };
  ResourceEventHandler thrower;
  thrower.on_add = [](const ObjectPtr&, bool) { throw std::runtime_error("boom"); };
  Recorder fast;
  inf->AddEventHandler(slow);
  inf->AddEventHandler(thrower);
  inf->AddEventHandler(fast.Handler());
  inf->Start();
  ASSERT_TRUE(fast.WaitFor(1));
  gate.unlock();
  inf->Stop();
}

TEST_F(SharedInformerTest, WaitForCacheSyncTimesOutOnTheClock) {
  lw_.PushList(UnavailableError("down"));
  auto inf = Make();
  inf->Start();
  std::atomic<bool> result{true};
  std::thread waiter([&] { result = inf->WaitForCacheSync(std::chrono::seconds(5)); });
  ASSERT_TRUE(Eventually([&] { return clock_.Waiters() >= 2; }));  // reflector backoff + waiter
  clock_.Step(std::chrono::seconds(6));
  waiter.join();
  EXPECT_FALSE(result.load());
  inf->Stop();
}

}  // namespace
}  // namespace draco::k8s::cache
