#include "k8sclient/leaderelection/leader_elector.h"

#include <atomic>
#include <map>
#include <thread>

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
  auto f = *LeaderElector::New(client, clock, Cfg("b", &s2, &st2));
  clock.Step(20s);  // a's lease has expired
  std::thread t2([&] { f->Run(); });
  while (s2 == 0) {
    clock.Step(2s);
    std::this_thread::sleep_for(2ms);
  }
  f->Stop();
  t2.join();
  EXPECT_EQ(st2, 1);
  EXPECT_EQ(client.Record("kube-system/draco").holder_identity, "");
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
    clock.Step(1s);
    std::this_thread::sleep_for(2ms);
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
