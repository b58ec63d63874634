#include "controller/reconcilers/event_recorder.h"

#include <atomic>
#include <thread>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

namespace draco::reconcilers {
namespace {

using namespace std::chrono_literals;

// Records Event creates and patches; creates fail while `down` (an API outage).
class EventClient : public k8s::RestClient {
 public:
  std::atomic<bool> down{false};
  struct Call {
    std::string verb, name, body;
  };

  std::vector<Call> Calls() {
    std::lock_guard<std::mutex> l(mu_);
    return calls_;
  }
  size_t Count() {
    std::lock_guard<std::mutex> l(mu_);
    return calls_.size();
  }

  StatusOr<std::string> Create(const k8s::GroupVersionResource&, std::string_view,
                               std::string_view body, const k8s::CreateOptions&) override {
    std::lock_guard<std::mutex> l(mu_);
    calls_.push_back({"create", "", std::string(body)});
    if (down) return UnavailableError("POST events: Connection refused");
    return R"({"metadata":{"name":"ev-)" + std::to_string(calls_.size()) + R"("}})";
  }
  StatusOr<std::string> Patch(const k8s::GroupVersionResource&, std::string_view,
                              std::string_view name, k8s::PatchType, std::string_view body,
                              const k8s::PatchOptions&, std::string_view) override {
    std::lock_guard<std::mutex> l(mu_);
    calls_.push_back({"patch", std::string(name), std::string(body)});
    if (down) return UnavailableError("PATCH events: Connection refused");
    return std::string("{}");
  }
  StatusOr<std::string> Get(const k8s::GroupVersionResource&, std::string_view, std::string_view,
                            const k8s::GetOptions&) override {
    return UnimplementedError("get");
  }
  StatusOr<k8s::ObjectList> List(const k8s::GroupVersionResource&, std::string_view,
                                 const k8s::ListOptions&) override {
    return UnimplementedError("list");
  }
  StatusOr<std::unique_ptr<k8s::Watcher>> Watch(const k8s::GroupVersionResource&, std::string_view,
                                                const k8s::ListOptions&) override {
    return UnimplementedError("watch");
  }
  StatusOr<std::string> Update(const k8s::GroupVersionResource&, std::string_view, std::string_view,
                               std::string_view, const k8s::UpdateOptions&) override {
    return UnimplementedError("update");
  }
  StatusOr<std::string> UpdateStatus(const k8s::GroupVersionResource&, std::string_view,
                                     std::string_view, std::string_view,
                                     const k8s::UpdateOptions&) override {
    return UnimplementedError("update status");
  }
  StatusOr<std::string> Delete(const k8s::GroupVersionResource&, std::string_view, std::string_view,
                               const k8s::DeleteOptions&) override {
    return UnimplementedError("delete");
  }

 private:
  std::mutex mu_;
  std::vector<Call> calls_;
};

EventTarget Pod(const std::string& name) {
  return EventTarget{"v1", "Pod", "ns", name, "uid-" + name};
}

// Waits (wall clock, bounded) until `client` has seen `n` calls.
bool WaitForCalls(EventClient& client, size_t n) {
  for (int i = 0; i < 2000 && client.Count() < n; ++i) std::this_thread::sleep_for(1ms);
  return client.Count() >= n;
}

// Steps the clock in small pieces so the loop's periodic scan runs.
void Advance(FakeClock& clock, Clock::Duration d) {
  for (auto done = Clock::Duration::zero(); done < d; done += 1s) {
    clock.Step(1s);
    std::this_thread::sleep_for(1ms);
  }
}

int JsonInt(const std::string& body, const char* key) {
  rapidjson::Document d;
  d.Parse(body.c_str());
  return d[key].GetInt();
}

TEST(AsyncEventRecorderTest, RepeatsOfOneObjectAndReasonAreOneEventWithACount) {
  EventClient client;
  FakeClock clock;
  {
    AsyncEventRecorder rec(client, clock, "draco", "draco-0");
    rec.Record(Pod("p"), "Warning", "FailedResourceClaimCreation", "try 0");
    ASSERT_TRUE(WaitForCalls(client, 1));
    EXPECT_EQ(client.Calls()[0].verb, "create");
    EXPECT_EQ(JsonInt(client.Calls()[0].body, "count"), 1);
    for (int i = 1; i < 100; ++i) {
      rec.Record(Pod("p"), "Warning", "FailedResourceClaimCreation", "try " + std::to_string(i));
    }
    std::this_thread::sleep_for(20ms);
    ASSERT_EQ(client.Count(), 1u);  // repeats are only counted until the update period
    Advance(clock, 38s);  // an update period (+ the scan interval): one patch with the count
    ASSERT_TRUE(WaitForCalls(client, 2));
    auto calls = client.Calls();
    ASSERT_EQ(calls.size(), 2u);
    EXPECT_EQ(calls[1].verb, "patch");
    EXPECT_EQ(calls[1].name, "ev-1");
    EXPECT_EQ(JsonInt(calls[1].body, "count"), 100);
    EXPECT_NE(calls[1].body.find("try 99"), std::string::npos);
    Advance(clock, 60s);  // nothing new: no more writes
    EXPECT_EQ(client.Count(), 2u);
    // Another reason, another object: their own Events.
    rec.Record(Pod("p"), "Warning", "ClaimNotFound", "x");
    rec.Record(Pod("q"), "Warning", "FailedResourceClaimCreation", "x");
    ASSERT_TRUE(WaitForCalls(client, 4));
    // After the interval, a repeat starts a new Event.
    Advance(clock, 10min);
    size_t before = client.Count();
    rec.Record(Pod("p"), "Warning", "FailedResourceClaimCreation", "later");
    ASSERT_TRUE(WaitForCalls(client, before + 1));
    EXPECT_EQ(client.Calls().back().verb, "create");
    EXPECT_EQ(JsonInt(client.Calls().back().body, "count"), 1);
  }
}

TEST(AsyncEventRecorderTest, AnOutageDoesNotMultiplyEvents) {
  EventClient client;
  FakeClock clock;
  client.down = true;
  AsyncEventRecorder rec(client, clock, "draco", "draco-0");
  for (int round = 0; round < 10; ++round) {
    for (int i = 0; i < 50; ++i) rec.Record(Pod("p"), "Warning", "FailedX", "connection refused");
    Advance(clock, 10s);
  }
  // 100 s of failures: the first create and one retry per update period, not 500 writes.
  ASSERT_TRUE(WaitForCalls(client, 1));
  EXPECT_LE(client.Count(), 5u);
  client.down = false;
  Advance(clock, 38s);
  for (int i = 0; i < 2000; ++i) {
    auto calls = client.Calls();
    if (!calls.empty() && calls.back().verb == "create" &&
        JsonInt(calls.back().body, "count") == 500) {
      break;
    }
    std::this_thread::sleep_for(1ms);
  }
  auto calls = client.Calls();
  EXPECT_EQ(calls.back().verb, "create");
  EXPECT_EQ(JsonInt(calls.back().body, "count"), 500);  // created once, with the full count
}

TEST(AsyncEventRecorderTest, DestructionFlushesThePendingCount) {
  EventClient client;
  FakeClock clock;
  {
    AsyncEventRecorder rec(client, clock, "draco", "draco-0");
    rec.Record(Pod("p"), "Normal", "Allocated", "a");
    ASSERT_TRUE(WaitForCalls(client, 1));
    rec.Record(Pod("p"), "Normal", "Allocated", "b");
  }
  auto calls = client.Calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[1].verb, "patch");
  EXPECT_EQ(JsonInt(calls[1].body, "count"), 2);
}

}  // namespace
}  // namespace draco::reconcilers
