#include "k8sclient/leaderelection/fenced_client.h"

#include <gtest/gtest.h>

namespace draco::k8s {
namespace {

using namespace std::chrono_literals;

// Counts the calls that reach the server; fails everything once cancelled.
class CountingClient : public RestClient {
 public:
  int calls = 0;
  bool cancelled = false;

  StatusOr<std::string> Get(const GroupVersionResource&, std::string_view, std::string_view,
                            const GetOptions&) override {
    return Call();
  }
  StatusOr<ObjectList> List(const GroupVersionResource&, std::string_view,
                            const ListOptions&) override {
    auto r = Call();
    if (!r.ok()) return r.status();
    return ObjectList{};
  }
  StatusOr<std::unique_ptr<Watcher>> Watch(const GroupVersionResource&, std::string_view,
                                           const ListOptions&) override {
    return UnimplementedError("watch");
  }
  StatusOr<std::string> Create(const GroupVersionResource&, std::string_view, std::string_view,
                               const CreateOptions&) override {
    return Call();
  }
  StatusOr<std::string> Update(const GroupVersionResource&, std::string_view, std::string_view,
                               std::string_view, const UpdateOptions&) override {
    return Call();
  }
  StatusOr<std::string> UpdateStatus(const GroupVersionResource&, std::string_view,
                                     std::string_view, std::string_view,
                                     const UpdateOptions&) override {
    return Call();
  }
  StatusOr<std::string> Patch(const GroupVersionResource&, std::string_view, std::string_view,
                              PatchType, std::string_view, const PatchOptions&,
                              std::string_view) override {
    return Call();
  }
  StatusOr<std::string> Delete(const GroupVersionResource&, std::string_view, std::string_view,
                               const DeleteOptions&) override {
    return Call();
  }
  void Cancel() override { cancelled = true; }

 private:
  StatusOr<std::string> Call() {
    if (cancelled) return CancelledError("client cancelled");
    ++calls;
    return std::string("{}");
  }
};

// Issues one call of every write verb; returns how many were admitted.
int AllWrites(FencedClient& c) {
  int ok = 0;
  ok += c.Create(kPods, "ns", "{}", {}).ok();
  ok += c.Update(kPods, "ns", "p", "{}", {}).ok();
  ok += c.UpdateStatus(kPods, "ns", "p", "{}", {}).ok();
  ok += c.Patch(kPods, "ns", "p", PatchType::kMergePatch, "{}", {}, "").ok();
  ok += c.Delete(kPods, "ns", "p", {}).ok();
  return ok;
}

TEST(FencedClientTest, WritesStopAtTheDeadlineWithoutReachingTheServer) {
  FakeClock clock;
  auto inner = std::make_unique<CountingClient>();
  CountingClient* raw = inner.get();
  Clock::TimePoint deadline = clock.Now() + 10s;
  FencedClient c(std::move(inner), clock, [&] { return deadline; });
  EXPECT_TRUE(c.Open());
  EXPECT_EQ(AllWrites(c), 5);
  EXPECT_EQ(raw->calls, 5);
  clock.Step(9999ms);
  EXPECT_EQ(AllWrites(c), 5);
  clock.Step(1ms);  // exactly at the deadline: no longer admitted
  EXPECT_FALSE(c.Open());
  EXPECT_EQ(AllWrites(c), 0);
  EXPECT_EQ(raw->calls, 10);
  auto refused = c.Patch(kPods, "ns", "p", PatchType::kMergePatch, "{}", {}, "");
  EXPECT_TRUE(IsFenced(refused.status())) << refused.status().ToString();
  EXPECT_FALSE(IsFenced(CancelledError("client cancelled")));
  // Reads still pass (they change nothing).
  EXPECT_TRUE(c.Get(kPods, "ns", "p", {}).ok());
  EXPECT_EQ(raw->calls, 11);
  // A renewal moves the deadline: writes are admitted again.
  deadline = clock.Now() + 10s;
  EXPECT_EQ(AllWrites(c), 5);
}

TEST(FencedClientTest, CloseRefusesWritesAndCancelsTheInnerClient) {
  FakeClock clock;
  auto inner = std::make_unique<CountingClient>();
  CountingClient* raw = inner.get();
  FencedClient c(std::move(inner), clock, [&] { return clock.Now() + 1h; });
  c.Close();
  EXPECT_TRUE(raw->cancelled);
  EXPECT_FALSE(c.Open());
  EXPECT_EQ(AllWrites(c), 0);
  EXPECT_TRUE(IsFenced(c.Create(kPods, "ns", "{}", {}).status()));
  EXPECT_FALSE(c.Get(kPods, "ns", "p", {}).ok());  // cancelled
  EXPECT_EQ(raw->calls, 0);
  c.Close();  // idempotent
}

}  // namespace
}  // namespace draco::k8s
