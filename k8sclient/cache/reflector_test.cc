#include "k8sclient/cache/reflector.h"

#include <thread>

#include <gtest/gtest.h>

#include "k8sclient/cache/testing/fake_lister_watcher.h"

namespace draco::k8s::cache {
namespace {

using testing::Bookmark;
using testing::ErrorEvent;
using testing::Ev;
using testing::Eventually;
using testing::FakeListerWatcher;
using testing::List;
using testing::Obj;
using testing::StepUntil;
using T = WatchEvent::Type;
using Strings = std::vector<std::string>;

class ReflectorTest : public ::testing::Test {
 protected:
  void SetUp() override { store_ = NewStore(); }
  void StartReflector() {
    ReflectorOptions o;
    o.name = "test";
    o.clock = &clock_;
    o.rand01 = [] { return 0.5; };
    reflector_ = std::make_unique<Reflector>(lw_, *store_, o);
    thread_ = std::thread([this] { reflector_->Run(); });
  }
  void TearDown() override {
    if (reflector_) reflector_->Stop();
    if (thread_.joinable()) thread_.join();
  }
  size_t Lists() const { return lw_.list_calls().size(); }
  size_t Watches() const { return lw_.watch_calls().size(); }

  FakeClock clock_;
  FakeListerWatcher lw_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<Reflector> reflector_;
  std::thread thread_;
};

// client-go TestReflectorExpiredExactResourceVersion: "0", then the last RV, then "".
TEST_F(ReflectorTest, ExpiredResourceVersionRelistsFromLastThenEmpty) {
  lw_.PushList(List("10", {Obj("ns", "a", "9")}));
  auto w1 = lw_.PushWatch();
  w1->Push(ErrorEvent(410, "Expired"));
  lw_.PushList(testing::ApiStatus(410, "Expired"));
  lw_.PushList(List("20", {Obj("ns", "b", "20")}));
  lw_.PushWatch();  // blocks until stopped
  StartReflector();
  ASSERT_TRUE(StepUntil(clock_, [&] { return Watches() == 2; }));
  EXPECT_EQ(lw_.ListRvs(), (Strings{"0", "10", ""}));
  EXPECT_EQ(lw_.WatchRvs(), (Strings{"10", "20"}));
  auto lists = lw_.list_calls();
  EXPECT_EQ(lists[0].limit, 500);  // "0": paged request (the watch cache ignores the limit)
  EXPECT_EQ(lists[1].limit, 0);    // exact RV: unpaged so the watch cache can serve it
  EXPECT_EQ(lists[2].limit, 500);  // "": consistent read from etcd, paged
  EXPECT_EQ(reflector_->LastSyncResourceVersion(), "20");
  EXPECT_EQ(store_->ListKeys(), Strings{"ns/b"});
}

TEST_F(ReflectorTest, WatchParametersFollowClientGo) {
  lw_.PushList(List("5", {}));
  lw_.PushWatch();
  StartReflector();
  ASSERT_TRUE(Eventually([&] { return Watches() == 1; }));
  auto w = lw_.watch_calls()[0];
  EXPECT_EQ(w.resource_version, "5");
  EXPECT_TRUE(w.allow_watch_bookmarks);
  EXPECT_EQ(w.timeout_seconds, 450);  // 300s * (1 + 0.5)
}

TEST_F(ReflectorTest, WatchTimeoutIsRandomBetweenFiveAndTenMinutes) {
  for (double r : {0.0, 0.999}) {
    FakeListerWatcher lw;
    auto store = NewStore();
    lw.PushList(List("1", {}));
    lw.PushWatch();
    ReflectorOptions o;
    o.clock = &clock_;
    o.rand01 = [r] { return r; };
    Reflector refl(lw, *store, o);
    std::thread t([&] { refl.Run(); });
    ASSERT_TRUE(Eventually([&] { return lw.watch_calls().size() == 1; }));
    const int64_t timeout = lw.watch_calls()[0].timeout_seconds;
    EXPECT_GE(timeout, 300);
    EXPECT_LT(timeout, 600);
    refl.Stop();
    t.join();
  }
}

TEST_F(ReflectorTest, ServerClosedWatchResumesFromLastEventWithoutRelist) {
  lw_.PushList(List("5", {}));
  auto w1 = lw_.PushWatch();
  w1->Push(Ev(T::kAdded, Obj("ns", "a", "6")));
  w1->Push(Ev(T::kModified, Obj("ns", "a", "7")));
  w1->Close();
  lw_.PushWatch();
  StartReflector();
  ASSERT_TRUE(Eventually([&] { return Watches() == 2; }));
  EXPECT_EQ(lw_.ListRvs(), (Strings{"0"}));
  EXPECT_EQ(lw_.WatchRvs(), (Strings{"5", "7"}));
  EXPECT_EQ(store_->GetByKey("ns/a")->resource_version(), "7");
}

TEST_F(ReflectorTest, BookmarkOnlyAdvancesResourceVersion) {
  lw_.PushList(List("5", {Obj("ns", "a", "5")}));
  auto w1 = lw_.PushWatch();
  w1->Push(Bookmark("42"));
  w1->Close();
  lw_.PushWatch();
  StartReflector();
  ASSERT_TRUE(Eventually([&] { return Watches() == 2; }));
  EXPECT_EQ(lw_.WatchRvs(), (Strings{"5", "42"}));
  EXPECT_EQ(store_->Size(), 1u);
  EXPECT_EQ(lw_.ListRvs(), (Strings{"0"}));
}

TEST_F(ReflectorTest, DeleteAndBadEventsAreHandled) {
  lw_.PushList(List("5", {Obj("ns", "a", "5")}));
  auto w1 = lw_.PushWatch();
  w1->Push(Ev(T::kAdded, Object::Parse(R"({"metadata":{"resourceVersion":"6"}})").value()));
  w1->Push(Ev(T::kAdded, Obj("ns", "b", "7")));
  w1->Push(Ev(T::kDeleted, Obj("ns", "a", "8")));
  StartReflector();
  ASSERT_TRUE(Eventually([&] { return reflector_->LastSyncResourceVersion() == "8"; }));
  EXPECT_EQ(store_->ListKeys(), Strings{"ns/b"});
  EXPECT_EQ(Lists(), 1u);
}

TEST_F(ReflectorTest, TooManyRequestsOnWatchBacksOffThenRewatchesWithoutRelist) {
  lw_.PushList(List("5", {}));
  lw_.PushWatchError(testing::ApiStatus(429, "TooManyRequests"));
  lw_.PushWatch();
  StartReflector();
  // The second watch needs a backoff wait on the clock: without stepping it never happens.
  ASSERT_TRUE(Eventually([&] { return clock_.Waiters() > 0; }));
  EXPECT_EQ(Watches(), 1u);
  ASSERT_TRUE(StepUntil(clock_, [&] { return Watches() == 2; }));
  EXPECT_EQ(lw_.WatchRvs(), (Strings{"5", "5"}));
  EXPECT_EQ(Lists(), 1u);
}

TEST_F(ReflectorTest, ConnectionFailureDuringWatchRelistsFromLastResourceVersion) {
  lw_.PushList(List("5", {}));
  auto w1 = lw_.PushWatch();
  w1->Push(Ev(T::kAdded, Obj("ns", "a", "6")));
  w1->CloseWithError(UnavailableError("connection reset"));
  lw_.PushList(List("9", {Obj("ns", "a", "6"), Obj("ns", "c", "9")}));
  lw_.PushWatch();
  StartReflector();
  ASSERT_TRUE(StepUntil(clock_, [&] { return Watches() == 2; }));
  EXPECT_EQ(lw_.ListRvs(), (Strings{"0", "6"}));
  EXPECT_EQ(lw_.WatchRvs(), (Strings{"5", "9"}));
  EXPECT_EQ(store_->Size(), 2u);
}

TEST_F(ReflectorTest, WatchDownSinceIsEmptyWhileAWatchIsOpen) {
  lw_.PushList(List("5", {}));
  auto w1 = lw_.PushWatch();
  const auto t0 = clock_.Now();
  StartReflector();
  ASSERT_TRUE(Eventually([&] { return !reflector_->WatchDownSince().has_value(); }));
  clock_.Step(std::chrono::seconds(10));
  w1->Push(Ev(T::kAdded, Obj("ns", "a", "6")));
  w1->CloseWithError(UnavailableError("connection reset"));  // no list scripted: stays down
  ASSERT_TRUE(Eventually([&] { return reflector_->WatchDownSince().has_value(); }));
  EXPECT_EQ(*reflector_->WatchDownSince(), t0 + std::chrono::seconds(10));
  ASSERT_TRUE(StepUntil(clock_, [&] { return Lists() >= 3; }));  // relists fail and back off
  EXPECT_EQ(*reflector_->WatchDownSince(), t0 + std::chrono::seconds(10));
}

TEST_F(ReflectorTest, VeryShortWatchIsAFailure) {
  lw_.PushList(List("5", {}));
  lw_.PushWatch()->Close();  // closes at once with no events
  lw_.PushList(List("5", {}));
  lw_.PushWatch();
  StartReflector();
  ASSERT_TRUE(StepUntil(clock_, [&] { return Watches() == 2; }));
  EXPECT_EQ(lw_.ListRvs(), (Strings{"0", "5"}));  // relisted after backoff
}

TEST_F(ReflectorTest, BackoffStartsAt800msWithJitter) {
  lw_.PushList(UnavailableError("down"));
  lw_.PushList(List("5", {}));
  lw_.PushWatch();
  StartReflector();
  ASSERT_TRUE(Eventually([&] { return Lists() == 1 && clock_.Waiters() > 0; }));
  // 800ms * (1 + jitter 1.0 * 0.5) = 1200ms.
  clock_.Step(std::chrono::milliseconds(1199));
  EXPECT_EQ(Lists(), 1u);
  clock_.Step(std::chrono::milliseconds(1));
  ASSERT_TRUE(Eventually([&] { return Lists() == 2; }));
}

TEST_F(ReflectorTest, PagesTheInitialListAndStoresEveryPage) {
  lw_.PushList(List("", {Obj("ns", "a", "1")}, "c1"));
  lw_.PushList(List("7", {Obj("ns", "b", "2")}, ""));
  lw_.PushWatch();
  StartReflector();
  ASSERT_TRUE(Eventually([&] { return Watches() == 1; }));
  auto lists = lw_.list_calls();
  ASSERT_EQ(lists.size(), 2u);
  EXPECT_EQ(lists[1].continue_token, "c1");
  EXPECT_EQ(lists[1].resource_version, "");
  EXPECT_EQ(lw_.WatchRvs(), Strings{"7"});
  EXPECT_EQ(store_->Size(), 2u);
}

TEST_F(ReflectorTest, StopEndsRunPromptly) {
  lw_.PushList(List("5", {}));
  auto w = lw_.PushWatch();
  StartReflector();
  ASSERT_TRUE(Eventually([&] { return Watches() == 1; }));
  reflector_->Stop();
  thread_.join();
  EXPECT_TRUE(w->stopped());
}

TEST_F(ReflectorTest, ResyncCallsStoreResyncPeriodically) {
  class CountingStore final : public ReflectorStore {
   public:
    Status Add(ObjectPtr) override { return OkStatus(); }
    Status Update(ObjectPtr) override { return OkStatus(); }
    Status Delete(ObjectPtr) override { return OkStatus(); }
    Status Replace(std::vector<ObjectPtr>, const std::string&) override { return OkStatus(); }
    Status Resync() override {
      ++resyncs;
      return OkStatus();
    }
    std::atomic<int> resyncs{0};
  } store;
  lw_.PushList(List("5", {}));
  lw_.PushWatch();
  ReflectorOptions o;
  o.clock = &clock_;
  o.resync_period = std::chrono::seconds(30);
  Reflector refl(lw_, store, o);
  std::thread t([&] { refl.Run(); });
  ASSERT_TRUE(Eventually([&] { return Watches() == 1 && clock_.Waiters() > 0; }));
  EXPECT_EQ(store.resyncs.load(), 0);
  clock_.Step(std::chrono::seconds(30));
  ASSERT_TRUE(Eventually([&] { return store.resyncs.load() == 1; }));
  refl.Stop();
  t.join();
}

}  // namespace
}  // namespace draco::k8s::cache
