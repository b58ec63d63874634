// The controller's use of the work queue's urgent line: a new pod's claims are created before a
// backlog of allocations, and a pod whose allocation the watch confirms is released next.
#include <gtest/gtest.h>

#include "controller/reconcilers/controller.h"
#include "controller/reconcilers/testing_fakes.h"
#include "controller/reconcilers/testing_objects.h"
#include "controller/reconcilers/worker.h"

namespace draco::reconcilers {
namespace {

using testing::FakeAllocator;
using testing::FakeEvents;
using testing::FakeQueue;
using testing::FakeWriter;
using testing::GatedPod;
using testing::GpuTemplate;
using testing::ReadyNode;

class ControllerQueueTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cache.UpsertTemplate(std::make_shared<const api::ResourceClaimTemplate>(GpuTemplate()));
    cache.UpsertNode(std::make_shared<const api::Node>(ReadyNode("node-0")));
  }

  PodPtr AddPod(const api::Pod& p) {
    writer.pods[FakeWriter::K(p.metadata.namespace_, p.metadata.name)] = p;
    auto ptr = std::make_shared<const api::Pod>(p);
    cache.UpsertPod(ptr);
    return ptr;
  }

  // The pod's generated claim as the fake API server has it, or null.
  const api::ResourceClaim* ClaimOf(const std::string& pod) {
    for (const auto& [k, c] : writer.claims) {
      for (const auto& o : c.metadata.owner_references) {
        if (o.name == pod) return &c;
      }
    }
    return nullptr;
  }

  static ControllerOptions NoWatch() {
    ControllerOptions o;
    o.observe_timeout = Clock::Duration::zero();  // no informer here
    return o;
  }

  ClusterCache cache;
  FakeWriter writer;
  FakeAllocator allocator;
  FakeEvents events;
  FakeClock clock;
};

TEST_F(ControllerQueueTest, PodWithoutItsClaimsIsUrgentOthersAreNot) {
  FakeQueue queue;
  Controller ctrl{cache, writer, allocator, events, queue, clock, nullptr, NoWatch()};
  ctrl.OnPod(nullptr, AddPod(GatedPod("new")));
  EXPECT_TRUE(queue.urgent.count("pod:ns/new"));
  api::Pod recorded = GatedPod("recorded");
  api::PodResourceClaimStatus st;
  st.name = "gpu";
  st.resource_claim_name = "recorded-gpu";
  recorded.status.resource_claim_statuses.push_back(st);
  ctrl.OnPod(nullptr, AddPod(recorded));
  EXPECT_TRUE(queue.added.count("pod:ns/recorded"));
  EXPECT_FALSE(queue.urgent.count("pod:ns/recorded"));
}

TEST_F(ControllerQueueTest, AllocationWaitsWhileUrgentKeysAreQueued) {
  FakeQueue queue;
  Controller ctrl{cache, writer, allocator, events, queue, clock, nullptr, NoWatch()};
  AddPod(GatedPod("a"));
  queue.urgent_len = 1;  // another pod waits for its claims
  ASSERT_TRUE(ctrl.SyncPod("ns", "a").ok());
  ASSERT_NE(ClaimOf("a"), nullptr);
  EXPECT_FALSE(ClaimOf("a")->status.allocation);
  EXPECT_EQ(allocator.calls, 0);
  EXPECT_TRUE(queue.added.count("pod:ns/a"));  // back in the normal line
  queue.urgent_len = 0;
  ASSERT_TRUE(ctrl.SyncPod("ns", "a").ok());
  EXPECT_TRUE(ClaimOf("a")->status.allocation);
  EXPECT_TRUE(writer.pods.at("ns/a").spec.scheduling_gates.empty());
  // Without urgent work waiting, a new pod is created, allocated and released in one pass.
  AddPod(GatedPod("b"));
  ASSERT_TRUE(ctrl.SyncPod("ns", "b").ok());
  EXPECT_TRUE(ClaimOf("b")->status.allocation);
  EXPECT_TRUE(writer.pods.at("ns/b").spec.scheduling_gates.empty());
}

TEST_F(ControllerQueueTest, NewPodsClaimIsCreatedBeforePendingAllocations) {
  k8s::workqueue::QueueOptions qo;
  qo.clock = &clock;
  k8s::workqueue::RateLimitingQueue q(qo);
  QueueEnqueuer enqueuer(q);
  Controller ctrl{cache, writer, allocator, events, enqueuer, clock, nullptr, NoWatch()};
  Worker worker(
      q, [&](const Request& r) { return ctrl.Reconcile(r); }, clock, nullptr);
  constexpr int kPods = 10;
  for (int i = 0; i < kPods; ++i) ctrl.OnPod(nullptr, AddPod(GatedPod("old-" + std::to_string(i))));
  // Each pass creates one pod's claim; the allocations wait while other pods wait for claims.
  for (int i = 0; i < kPods; ++i) ASSERT_TRUE(worker.ProcessNext());
  EXPECT_EQ(writer.claims.size(), static_cast<size_t>(kPods));
  EXPECT_EQ(allocator.calls, 1);  // the last one: no urgent key left behind it
  EXPECT_EQ(q.Len(), kPods - 1);  // nine allocations pending
  // A new pod arrives behind the nine: its claim is created by the very next pass.
  ctrl.OnPod(nullptr, AddPod(GatedPod("late")));
  ASSERT_TRUE(worker.ProcessNext());
  ASSERT_NE(ClaimOf("late"), nullptr);
  int allocated = 0;
  for (int i = 0; i < kPods; ++i) {
    if (ClaimOf("old-" + std::to_string(i))->status.allocation) ++allocated;
  }
  EXPECT_EQ(allocated, 1);
  // The backlog then drains: every pod allocated and released.
  while (q.Len() > 0) ASSERT_TRUE(worker.ProcessNext());
  for (const auto& [k, p] : writer.pods) EXPECT_TRUE(p.spec.scheduling_gates.empty()) << k;
  q.ShutDown();
}

}  // namespace
}  // namespace draco::reconcilers
