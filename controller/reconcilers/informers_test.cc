#include "controller/reconcilers/informers.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "controller/api/codec.h"
#include "controller/reconcilers/api_writer.h"
#include "k8sclient/api_error.h"

namespace draco::reconcilers {
namespace {

using namespace std::chrono_literals;

Status ApiErr(int code, const char* reason) {
  k8s::ApiError e;
  e.http_code = code;
  e.reason = reason;
  e.message = reason;
  return e.ToStatus();
}

// A watch that delivers queued events and otherwise blocks until stopped.
class QueueWatcher : public k8s::Watcher {
 public:
  explicit QueueWatcher(std::shared_ptr<std::vector<k8s::WatchEvent>> pending, std::mutex& mu,
                        std::condition_variable& cv)
      : pending_(std::move(pending)), mu_(mu), cv_(cv) {}
  StatusOr<std::optional<k8s::WatchEvent>> Next() override {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return stopped_ || !pending_->empty(); });
    if (stopped_) return std::optional<k8s::WatchEvent>();
    k8s::WatchEvent e = pending_->front();
    pending_->erase(pending_->begin());
    return std::optional<k8s::WatchEvent>(std::move(e));
  }
  void Stop() override {
    std::lock_guard<std::mutex> l(mu_);
    stopped_ = true;
    cv_.notify_all();
  }

 private:
  std::shared_ptr<std::vector<k8s::WatchEvent>> pending_;
  std::mutex& mu_;
  std::condition_variable& cv_;
  bool stopped_ = false;
};

// Every resource lists empty; allocationpolicies answers `policy_status` (404 = CRD absent) until
// it is OK, then lists `policies`; watches on policies deliver `policy_events`.
class FakeClient : public k8s::RestClient {
 public:
  int policy_status = 404;
  int policy_lists = 0;
  // What consistent LISTs (resourceVersion "") of claims and pods answer: JSON items, list RV.
  std::vector<std::string> fresh_claims, fresh_pods;
  std::string fresh_rv = "1";
  std::vector<std::string> policies;
  std::shared_ptr<std::vector<k8s::WatchEvent>> policy_events =
      std::make_shared<std::vector<k8s::WatchEvent>>();
  std::mutex mu;
  std::condition_variable cv;

  StatusOr<std::string> Get(const k8s::GroupVersionResource&, std::string_view, std::string_view,
                            const k8s::GetOptions&) override {
    return ApiErr(404, "NotFound");
  }
  StatusOr<k8s::ObjectList> List(const k8s::GroupVersionResource& gvr, std::string_view,
                                 const k8s::ListOptions& opts) override {
    std::lock_guard<std::mutex> l(mu);
    k8s::ObjectList out;
    out.resource_version = "1";
    const bool consistent = opts.resource_version.empty();
    if (consistent && (gvr == kResourceClaimsGvr || gvr == k8s::kPods)) {
      out.resource_version = fresh_rv;
      for (const auto& j : gvr == k8s::kPods ? fresh_pods : fresh_claims) {
        out.items.push_back(*k8s::Object::Parse(j));
      }
      return out;
    }
    if (gvr == kAllocationPoliciesGvr) {
      ++policy_lists;
      if (policy_status == 404) return ApiErr(404, "NotFound");
      if (policy_status == 403) return ApiErr(403, "Forbidden");
      for (const auto& p : policies) out.items.push_back(*k8s::Object::Parse(p));
    }
    return out;
  }
  StatusOr<std::unique_ptr<k8s::Watcher>> Watch(const k8s::GroupVersionResource& gvr,
                                                std::string_view,
                                                const k8s::ListOptions&) override {
    auto q = gvr == kAllocationPoliciesGvr ? policy_events
                                           : std::make_shared<std::vector<k8s::WatchEvent>>();
    return std::unique_ptr<k8s::Watcher>(new QueueWatcher(q, mu, cv));
  }
  StatusOr<std::string> Create(const k8s::GroupVersionResource&, std::string_view, std::string_view,
                               const k8s::CreateOptions&) override {
    return UnimplementedError("create");
  }
  StatusOr<std::string> Update(const k8s::GroupVersionResource&, std::string_view, std::string_view,
                               std::string_view, const k8s::UpdateOptions&) override {
    return UnimplementedError("update");
  }
  StatusOr<std::string> UpdateStatus(const k8s::GroupVersionResource&, std::string_view,
                                     std::string_view, std::string_view,
                                     const k8s::UpdateOptions&) override {
    return UnimplementedError("update");
  }
  StatusOr<std::string> Patch(const k8s::GroupVersionResource&, std::string_view, std::string_view,
                              k8s::PatchType, std::string_view, const k8s::PatchOptions&,
                              std::string_view) override {
    return UnimplementedError("patch");
  }
  StatusOr<std::string> Delete(const k8s::GroupVersionResource&, std::string_view, std::string_view,
                               const k8s::DeleteOptions&) override {
    return UnimplementedError("delete");
  }
  void Set(int status) {
    std::lock_guard<std::mutex> l(mu);
    policy_status = status;
  }
  int Lists() {
    std::lock_guard<std::mutex> l(mu);
    return policy_lists;
  }
  void PushPolicyEvent(k8s::WatchEvent e) {
    std::lock_guard<std::mutex> l(mu);
    policy_events->push_back(std::move(e));
    cv.notify_all();
  }
};

class RecordingSink : public EventSink {
 public:
  void Record(const EventTarget& target, std::string_view type, std::string_view reason,
              std::string message) override {
    std::lock_guard<std::mutex> l(mu);
    events.push_back(target.kind + "/" + target.name + " " + std::string(type) + " " +
                     std::string(reason) + ": " + message);
  }
  std::vector<std::string> Events() {
    std::lock_guard<std::mutex> l(mu);
    return events;
  }
  std::mutex mu;
  std::vector<std::string> events;
};

const char kQuota[] = R"({"apiVersion":"draco.dev/v1alpha1","kind":"AllocationPolicy",
  "metadata":{"name":"quota","uid":"u1","resourceVersion":"2"},
  "spec":{"deviceClassSelector":{"names":["gpu"]},"strategy":"BinPack",
          "namespaceLimits":[{"namespace":"team-a","maxDevices":4}]}})";
const char kBad[] = R"({"apiVersion":"draco.dev/v1alpha1","kind":"AllocationPolicy",
  "metadata":{"name":"bad","uid":"u2","resourceVersion":"3"},
  "spec":{"deviceClassSelector":{"names":["gpu"]},"strategy":"Random"}})";

// Waits (real time, bounded) for `pred`.
template <typename F>
bool Eventually(F pred) {
  for (int i = 0; i < 500; ++i) {
    if (pred()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return pred();
}

TEST(InformersTest, AbsentPolicyCrdCountsAsSyncedAndIsProbedAgain) {
  FakeClient client;
  ClusterCache cache;
  FakeClock clock;
  Informers inf(client, cache, clock, 30s);
  inf.Start();
  ASSERT_TRUE(Eventually([&] { return inf.HasSynced(); }));
  EXPECT_EQ(inf.policy_state(), Informers::PolicyState::kAbsent);
  EXPECT_TRUE(cache.Policies().empty());
  int lists = client.Lists();
  // The CRD gets installed with a policy; the next probe (30 s later) starts the informer.
  client.policies = {kQuota};
  client.Set(200);
  ASSERT_TRUE(Eventually([&] {
    clock.Step(31s);  // repeated: the probe thread may not be parked yet
    return cache.Policies().size() == 1;
  }));
  EXPECT_GT(client.Lists(), lists);
  EXPECT_EQ(inf.policy_state(), Informers::PolicyState::kWatching);
  EXPECT_EQ(cache.Policies()[0].metadata.name, "quota");
  EXPECT_EQ(cache.Policies()[0].spec->strategy, "BinPack");
  EXPECT_TRUE(inf.HasSynced());  // ready stays ready while the new informer lists
  inf.Stop();
}

TEST(InformersTest, ForbiddenPolicyListKeepsTheInformersUnsynced) {
  FakeClient client;
  client.policy_status = 403;
  ClusterCache cache;
  FakeClock clock;
  Informers inf(client, cache, clock, 30s);
  inf.Start();
  ASSERT_TRUE(Eventually([&] { return client.Lists() >= 1; }));
  // WaitForSync waits on the (fake) clock: step it past the deadline while it waits.
  std::atomic<int> result{-1};
  std::thread waiter([&] { result = inf.WaitForSync(1s) ? 1 : 0; });
  ASSERT_TRUE(Eventually([&] {
    clock.Step(2s);
    return result.load() >= 0;
  }));
  waiter.join();
  EXPECT_EQ(result.load(), 0);
  EXPECT_FALSE(inf.HasSynced());
  EXPECT_EQ(inf.policy_state(), Informers::PolicyState::kProbing);
  inf.Stop();
}

TEST(InformersTest, PolicyEventsReachTheCacheAndBadOnesGiveAWarningEvent) {
  FakeClient client;
  client.policy_status = 200;
  client.policies = {kQuota};
  ClusterCache cache;
  FakeClock clock;
  RecordingSink sink;
  Informers inf(client, cache, clock, 30s);
  inf.SetEventSink(&sink);
  inf.Start();
  ASSERT_TRUE(Eventually([&] { return inf.HasSynced(); }));
  ASSERT_EQ(cache.Policies().size(), 1u);
  uint64_t gen = cache.Generations().inputs;

  k8s::WatchEvent bad;
  bad.type = k8s::WatchEvent::Type::kAdded;
  bad.object = *k8s::Object::Parse(kBad);
  client.PushPolicyEvent(bad);
  ASSERT_TRUE(Eventually([&] { return !sink.Events().empty(); }));
  EXPECT_NE(sink.Events()[0].find("AllocationPolicy/bad Warning InvalidPolicy"), std::string::npos)
      << sink.Events()[0];
  EXPECT_NE(sink.Events()[0].find("Random"), std::string::npos) << sink.Events()[0];
  EXPECT_EQ(cache.Policies().size(), 1u);  // the bad one is not applied

  k8s::WatchEvent del;
  del.type = k8s::WatchEvent::Type::kDeleted;
  del.object = *k8s::Object::Parse(kQuota);
  client.PushPolicyEvent(del);
  ASSERT_TRUE(Eventually([&] { return cache.Policies().empty(); }));
  EXPECT_GT(cache.Generations().inputs, gen);
  inf.Stop();
}

// A new term reads claims and pods consistently before it allocates: newer versions replace the
// cache's, objects gone from the server (older than the list) leave it, newer cached ones stay.
TEST(InformersCatchUpTest, BringsClaimsAndPodsUpToAConsistentRead) {
  FakeClient client;
  ClusterCache cache;
  Informers informers(client, cache, RealClock::Get());
  auto claim = [](const std::string& name, const std::string& rv, bool allocated) {
    std::string j =
        R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":")" + name +
        R"(","namespace":"ns","uid":"u-)" + name + R"(","resourceVersion":")" + rv +
        R"("},"spec":{"devices":{"requests":[]}})";
    if (allocated) {
      j +=
          R"(,"status":{"allocation":{"devices":{"results":[{"request":"r","driver":"drv","pool":"n0","device":"d0"}]}}})";
    }
    return j + "}";
  };
  auto store = [&cache](const std::string& json) {
    cache.UpsertClaim(
        std::make_shared<const api::ResourceClaim>(*api::Decode<api::ResourceClaim>(json)));
  };
  store(claim("stale", "5", false));     // the server has it allocated since RV 20
  store(claim("gone", "6", false));      // deleted on the server
  store(claim("assumed", "40", false));  // draco's own write, newer than the list
  client.fresh_claims = {claim("stale", "20", true), claim("assumed", "30", false)};
  client.fresh_pods = {R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns",
    "uid":"u-p","resourceVersion":"25"},"spec":{"containers":[]}})"};
  client.fresh_rv = "35";
  auto changed = informers.CatchUp();
  ASSERT_TRUE(changed.ok()) << changed.status().ToString();
  EXPECT_EQ(*changed, 3u);  // stale replaced, gone dropped, pod added
  ASSERT_NE(cache.GetClaim("ns", "stale"), nullptr);
  EXPECT_TRUE(cache.GetClaim("ns", "stale")->status.allocation.has_value());
  EXPECT_EQ(cache.GetClaim("ns", "gone"), nullptr);
  EXPECT_EQ(cache.GetClaim("ns", "assumed")->metadata.resource_version, "40");
  EXPECT_NE(cache.GetPod("ns", "p"), nullptr);
  EXPECT_EQ(cache.DoubleAllocatedDevices().size(), 0u);
}

}  // namespace
}  // namespace draco::reconcilers
