#include "k8sclient/leaderelection/leader_elector.h"

#include <atomic>
#include <condition_variable>
#include <map>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "k8sclient/api_error.h"

namespace draco::k8s {
namespace {

using namespace std::chrono_literals;

Status ApiErr(int code, const char* reason) {
  ApiError e;
  e.http_code = code;
  e.reason = reason;
  e.message = reason;
  return e.ToStatus();
}

// In-memory lease store with resourceVersion checks (409 on a stale PUT), failure injection.
class FakeLeaseClient : public RestClient {
 public:
  std::atomic<bool> fail{false};
  std::atomic<int> writes{0};
  // While true, Update blocks (a slow request) until Unblock(); blocked_ counts waiting calls.
  std::atomic<bool> block_updates{false};
  std::atomic<int> blocked{0};
  void Unblock() {
    {
      std::lock_guard<std::mutex> l(gate_mu_);
      block_updates = false;
    }
    gate_cv_.notify_all();
  }

  StatusOr<std::string> Get(const GroupVersionResource&, std::string_view ns, std::string_view name,
                            const GetOptions&) override {
    std::lock_guard<std::mutex> l(mu_);
    if (fail) return UnavailableError("injected");
    auto it = objs_.find(std::string(ns) + "/" + std::string(name));
    if (it == objs_.end()) return ApiErr(404, "NotFound");
    return it->second;
  }
  StatusOr<ObjectList> List(const GroupVersionResource&, std::string_view,
                            const ListOptions&) override {
    return UnimplementedError("list");
  }
  StatusOr<std::unique_ptr<Watcher>> Watch(const GroupVersionResource&, std::string_view,
                                           const ListOptions&) override {
    return UnimplementedError("watch");
  }
  StatusOr<std::string> Create(const GroupVersionResource&, std::string_view ns,
                               std::string_view body, const CreateOptions&) override {
    std::lock_guard<std::mutex> l(mu_);
    if (fail) return UnavailableError("injected");
    rapidjson::Document d;
    d.Parse(body.data(), body.size());
    std::string key = std::string(ns) + "/" + d["metadata"]["name"].GetString();
    if (objs_.count(key)) return ApiErr(409, "AlreadyExists");
    return Store(key, d);
  }
  StatusOr<std::string> Update(const GroupVersionResource&, std::string_view ns,
                               std::string_view name, std::string_view body,
                               const UpdateOptions&) override {
    {
      std::unique_lock<std::mutex> g(gate_mu_);
      ++blocked;
      gate_cv_.wait(g, [this] { return !block_updates; });
      --blocked;
    }
    std::lock_guard<std::mutex> l(mu_);
    if (fail) return UnavailableError("injected");
    rapidjson::Document d;
    d.Parse(body.data(), body.size());
    std::string key = std::string(ns) + "/" + std::string(name);
    auto it = objs_.find(key);
    if (it == objs_.end()) return ApiErr(404, "NotFound");
    auto cur = ParseLease(it->second);
    if (d["metadata"]["resourceVersion"].GetString() != cur->second) {
      return ApiErr(409, "Conflict");
    }
    return Store(key, d);
  }
  StatusOr<std::string> UpdateStatus(const GroupVersionResource&, std::string_view,
                                     std::string_view, std::string_view,
                                     const UpdateOptions&) override {
    return UnimplementedError("status");
  }
  StatusOr<std::string> Patch(const GroupVersionResource&, std::string_view, std::string_view,
                              PatchType, std::string_view, const PatchOptions&,
                              std::string_view) override {
    return UnimplementedError("patch");
  }
  StatusOr<std::string> Delete(const GroupVersionResource&, std::string_view, std::string_view,
                               const DeleteOptions&) override {
    return UnimplementedError("delete");
  }

  LeaseRecord Record(const std::string& key) {
    std::lock_guard<std::mutex> l(mu_);
    return ParseLease(objs_.at(key))->first;
  }
  // Simulates another replica renewing: bumps renewTime.
  void ForeignRenew(const std::string& key, const std::string& holder, int n) {
    std::lock_guard<std::mutex> l(mu_);
    rapidjson::Document d;
    d.Parse(objs_.at(key).c_str());
    d["spec"]["holderIdentity"].SetString(holder.c_str(), d.GetAllocator());
    d["spec"]["renewTime"].SetString(("t" + std::to_string(n)).c_str(), d.GetAllocator());
    Store(key, d);
  }

 private:
  std::string Store(const std::string& key, rapidjson::Document& d) {
    d["metadata"].RemoveMember("resourceVersion");
    d["metadata"].AddMember("resourceVersion",
                            rapidjson::Value(std::to_string(++rv_).c_str(), d.GetAllocator()),
                            d.GetAllocator());
    rapidjson::StringBuffer sb;
    rapidjson::Writer<rapidjson::StringBuffer> w(sb);
    d.Accept(w);
    ++writes;
    return objs_[key] = sb.GetString();
  }
  std::mutex mu_;
  std::mutex gate_mu_;
  std::condition_variable gate_cv_;
  std::map<std::string, std::string> objs_;
  int rv_ = 100;
};

LeaderElectionConfig Cfg(const std::string& id, std::atomic<int>* started,
                         std::atomic<int>* stopped) {
  LeaderElectionConfig c;
  c.lease_namespace = "kube-system";
  c.lease_name = "draco";
  c.identity = id;
  c.on_started_leading = [started] { ++*started; };
  c.on_stopped_leading = [stopped] { ++*stopped; };
  return c;
}

TEST(LeaderElectorTest, RejectsInvalidTimings) {
  FakeLeaseClient client;
  FakeClock clock;
  std::atomic<int> a{0}, b{0};
  auto cfg = Cfg("a", &a, &b);
  cfg.renew_deadline = 20s;
  EXPECT_FALSE(LeaderElector::New(client, clock, cfg).ok());
  cfg = Cfg("a", &a, &b);
  cfg.retry_period = 9s;
  EXPECT_FALSE(LeaderElector::New(client, clock, cfg).ok());
  EXPECT_TRUE(LeaderElector::New(client, clock, Cfg("a", &a, &b)).ok());
}

TEST(LeaderElectorTest, CreatesAbsentLeaseAndRenewsKeepingAcquireTime) {
  FakeLeaseClient client;
  FakeClock clock;
  std::atomic<int> a{0}, b{0};
  auto e = *LeaderElector::New(client, clock, Cfg("a", &a, &b));
  ASSERT_TRUE(e->TryAcquireOrRenew());
  LeaseRecord r1 = client.Record("kube-system/draco");
  EXPECT_EQ(r1.holder_identity, "a");
  EXPECT_EQ(r1.lease_duration_seconds, 15);
  EXPECT_EQ(r1.lease_transitions, 0);
  clock.Step(2s);
  ASSERT_TRUE(e->TryAcquireOrRenew());
  LeaseRecord r2 = client.Record("kube-system/draco");
  EXPECT_EQ(r2.acquire_time, r1.acquire_time);
  EXPECT_NE(r2.renew_time, r1.renew_time);
  EXPECT_EQ(e->Leader(), "a");
}

TEST(LeaderElectorTest, WaitsForForeignLeaseToExpireOnLocalClock) {
  FakeLeaseClient client;
  FakeClock clock;
  std::atomic<int> a{0}, b{0};
  auto holder = *LeaderElector::New(client, clock, Cfg("a", &a, &b));
  auto other = *LeaderElector::New(client, clock, Cfg("b", &a, &b));
  ASSERT_TRUE(holder->TryAcquireOrRenew());
  EXPECT_FALSE(other->TryAcquireOrRenew());
  // The holder keeps renewing: b never takes over even after many lease durations.
  for (int i = 0; i < 20; ++i) {
    clock.Step(2s);
    ASSERT_TRUE(holder->TryAcquireOrRenew());
    EXPECT_FALSE(other->TryAcquireOrRenew());
  }
  EXPECT_EQ(other->Leader(), "a");
  // The holder dies: b sees the same record for 15 s and then takes over (one transition).
  clock.Step(14s);
  EXPECT_FALSE(other->TryAcquireOrRenew());
  clock.Step(2s);
  EXPECT_TRUE(other->TryAcquireOrRenew());
  LeaseRecord r = client.Record("kube-system/draco");
  EXPECT_EQ(r.holder_identity, "b");
  EXPECT_EQ(r.lease_transitions, 1);
  // The old holder now sees a valid foreign lease.
  EXPECT_FALSE(holder->TryAcquireOrRenew());
}

TEST(LeaderElectorTest, ForeignRenewalsResetTheExpiryTimer) {
  FakeLeaseClient client;
  FakeClock clock;
  std::atomic<int> a{0}, b{0};
  auto x = *LeaderElector::New(client, clock, Cfg("x", &a, &b));
  ASSERT_TRUE(x->TryAcquireOrRenew());
  auto y = *LeaderElector::New(client, clock, Cfg("y", &a, &b));
  EXPECT_FALSE(y->TryAcquireOrRenew());
  for (int i = 0; i < 5; ++i) {
    clock.Step(10s);
    client.ForeignRenew("kube-system/draco", "x", i);
    EXPECT_FALSE(y->TryAcquireOrRenew()) << i;
  }
}

TEST(LeaderElectorTest, RunLosesLeadershipAfterRenewDeadlineAndReleasesOnStop) {
  FakeLeaseClient client;
  FakeClock clock;
  std::atomic<int> started{0}, stopped{0};
  auto e = *LeaderElector::New(client, clock, Cfg("a", &started, &stopped));
  std::thread t([&] { e->Run(); });
  while (started == 0) std::this_thread::yield();
  EXPECT_TRUE(e->IsLeader());
  // Renewals fail from now on; after renew_deadline (10 s) the elector gives up.
  client.fail = true;
  for (int i = 0; i < 8 && stopped == 0; ++i) {
    while (clock.Waiters() == 0 && stopped == 0) std::this_thread::yield();
    clock.Step(2s);
    std::this_thread::sleep_for(5ms);
  }
  t.join();
  EXPECT_EQ(stopped, 1);
  EXPECT_FALSE(e->IsLeader());

  // A fresh elector that is stopped while leading releases the lease.
  client.fail = false;
  std::atomic<int> s2{0}, st2{0};
  LeaderElectionConfig cfg = Cfg("b", &s2, &st2);
  std::vector<std::string> order;  // Run()'s thread only
  cfg.on_stopped_leading = [&] {
    ++st2;
    order.emplace_back("stopped");
  };
  cfg.on_released = [&](const Status& released) {
    order.push_back(released.ok() ? "released" : "release failed: " + released.ToString());
  };
  auto f = *LeaderElector::New(client, clock, cfg);
  clock.Step(20s);  // a's lease has expired
  std::thread t2([&] { f->Run(); });
  while (s2 == 0) {
    clock.Step(2s);
    std::this_thread::sleep_for(10ms);
  }
  f->Stop();
  t2.join();
  EXPECT_EQ(st2, 1);
  EXPECT_EQ(client.Record("kube-system/draco").holder_identity, "");
  EXPECT_EQ(order, (std::vector<std::string>{"stopped", "released"}));
}

// Steps the fake clock by `d` once the elector's threads are parked on it.
void StepWhenParked(FakeClock& clock, Clock::Duration d) {
  while (clock.Waiters() == 0) std::this_thread::yield();
  std::this_thread::sleep_for(2ms);
  clock.Step(d);
  std::this_thread::sleep_for(2ms);
}

TEST(LeaderElectorTest, ValidUntilIsRenewDeadlineAfterTheLastSuccessfulAttemptStarted) {
  FakeLeaseClient client;
  FakeClock clock;
  std::atomic<int> started{0}, stopped{0};
  auto e = *LeaderElector::New(client, clock, Cfg("a", &started, &stopped));
  EXPECT_EQ(e->ValidUntil(), Clock::TimePoint::min());
  const auto t0 = clock.Now();
  std::thread t([&] { e->Run(); });
  while (started == 0) std::this_thread::yield();
  EXPECT_EQ(e->ValidUntil(), t0 + 10s);
  StepWhenParked(clock, 2s);  // one renewal round
  while (e->ValidUntil() != t0 + 12s) std::this_thread::yield();
  e->Stop();
  t.join();
  EXPECT_EQ(e->ValidUntil(), Clock::TimePoint::min());
  EXPECT_EQ(stopped, 1);
}

TEST(LeaderElectorTest, LastAttemptAndLastRenewalFollowTheRounds) {
  FakeLeaseClient client;
  FakeClock clock;
  std::atomic<int> started{0}, stopped{0};
  const auto t0 = clock.Now();
  auto e = *LeaderElector::New(client, clock, Cfg("a", &started, &stopped));
  EXPECT_EQ(e->LastAttempt(), t0);  // creation, before the first attempt
  EXPECT_EQ(e->LastRenewal(), Clock::TimePoint::min());
  client.fail = true;  // campaigning: every attempt fails
  std::thread t([&] { e->Run(); });
  StepWhenParked(clock, 3s);  // the retry after the first failed attempt
  while (e->LastAttempt() != t0 + 3s) std::this_thread::yield();
  EXPECT_EQ(e->LastRenewal(), Clock::TimePoint::min());
  client.fail = false;
  StepWhenParked(clock, 3s);  // acquires at t0+6s
  while (started == 0) std::this_thread::yield();
  EXPECT_EQ(e->LastRenewal(), t0 + 6s);
  StepWhenParked(clock, 2s);  // renews at t0+8s
  while (e->LastRenewal() != t0 + 8s) std::this_thread::yield();
  EXPECT_EQ(e->LastAttempt(), t0 + 8s);
  e->Stop();
  t.join();
  EXPECT_EQ(e->LastRenewal(), Clock::TimePoint::min());
}

// A renewal that is still running at the deadline is abandoned: leadership ends at the deadline
// (measured from the last successful renewal, not from the start of the slow attempt), and the
// attempt's later success does not bring it back.
TEST(LeaderElectorTest, SlowButSuccessfulRenewalDoesNotExtendLeadership) {
  FakeLeaseClient client;
  FakeClock clock;
  std::atomic<int> started{0}, stopped{0};
  auto e = *LeaderElector::New(client, clock, Cfg("a", &started, &stopped));
  const auto t0 = clock.Now();
  std::thread t([&] { e->Run(); });
  while (started == 0) std::this_thread::yield();
  client.block_updates = true;
  StepWhenParked(clock, 2s);  // the renewal at t0+2s: GET answers, the PUT hangs
  while (client.blocked == 0) std::this_thread::yield();
  for (int s = 2; s < 9; ++s) {
    StepWhenParked(clock, 1s);
    EXPECT_EQ(stopped, 0) << "at t0+" << s + 1 << "s";
    EXPECT_TRUE(e->IsLeader());
  }
  StepWhenParked(clock, 1s);  // t0+10s: the deadline of the renewal at t0
  while (stopped == 0) std::this_thread::yield();
  EXPECT_EQ(clock.Now(), t0 + 10s);
  EXPECT_FALSE(e->IsLeader());
  EXPECT_EQ(e->ValidUntil(), Clock::TimePoint::min());
  EXPECT_EQ(client.blocked, 1);  // still in flight when leadership ended
  client.Unblock();              // ... and it succeeds now
  t.join();
  EXPECT_EQ(client.Record("kube-system/draco").holder_identity, "a");
  EXPECT_FALSE(e->IsLeader());
  EXPECT_EQ(e->ValidUntil(), Clock::TimePoint::min());
  EXPECT_EQ(started, 1);
  EXPECT_EQ(stopped, 1);

  // Run() again: the lease is still ours, so the next campaign starts a new term at once.
  std::thread t2([&] { e->Run(); });
  while (started < 2) std::this_thread::yield();
  EXPECT_TRUE(e->IsLeader());
  EXPECT_EQ(e->ValidUntil(), clock.Now() + 10s);
  e->Stop();
  t2.join();
  EXPECT_EQ(stopped, 2);
  EXPECT_EQ(client.Record("kube-system/draco").holder_identity, "");  // released on Stop()
}

// Failed renewals are retried every retry period until the deadline; one success in time keeps
// the term and moves the deadline.
TEST(LeaderElectorTest, FailedRenewalsKeepLeadershipUntilTheDeadline) {
  FakeLeaseClient client;
  FakeClock clock;
  std::atomic<int> started{0}, stopped{0};
  auto e = *LeaderElector::New(client, clock, Cfg("a", &started, &stopped));
  const auto t0 = clock.Now();
  std::thread t([&] { e->Run(); });
  while (started == 0) std::this_thread::yield();
  client.fail = true;
  for (int i = 0; i < 3; ++i) StepWhenParked(clock, 2s);  // t0+2s, 4s, 6s fail
  EXPECT_EQ(stopped, 0);
  EXPECT_EQ(e->ValidUntil(), t0 + 10s);
  client.fail = false;
  StepWhenParked(clock, 2s);  // the round at t0+8s succeeds
  while (e->ValidUntil() != t0 + 18s) std::this_thread::yield();
  EXPECT_TRUE(e->IsLeader());
  e->Stop();
  t.join();
}

TEST(LeaderElectorTest, TwoCandidatesNeverBothLead) {
  FakeLeaseClient client;
  FakeClock clock;
  std::atomic<int> sa{0}, ta{0}, sb{0}, tb{0};
  auto a = *LeaderElector::New(client, clock, Cfg("a", &sa, &ta));
  auto b = *LeaderElector::New(client, clock, Cfg("b", &sb, &tb));
  std::thread t1([&] { a->Run(); });
  std::thread t2([&] { b->Run(); });
  for (int i = 0; i < 30; ++i) {
    // Slow enough that each renewal ends before the fake clock reaches its deadline (10 steps).
    clock.Step(1s);
    std::this_thread::sleep_for(10ms);
    EXPECT_FALSE(a->IsLeader() && b->IsLeader());
  }
  EXPECT_EQ(sa + sb, 1);
  a->Stop();
  b->Stop();
  t1.join();
  t2.join();
}

TEST(LeaderElectorTest, FormatsMicroTime) {
  auto t = std::chrono::system_clock::time_point(std::chrono::microseconds(1700000000123456));
  EXPECT_EQ(FormatMicroTime(t), "2023-11-14T22:13:20.123456Z");
}

}  // namespace
}  // namespace draco::k8s
