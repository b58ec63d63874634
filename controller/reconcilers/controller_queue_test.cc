// The controller's use of the work queue: pods are served in arrival order (a new pod's claims are
// created and allocated in one pass), the claims of a finished pod are urgent, and a pod whose
// allocation the watch confirms is released next.
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

TEST_F(ControllerQueueTest, NewPodsAreNotUrgentTheClaimsOfAFinishedPodAre) {
  FakeQueue queue;
  Controller ctrl{cache, writer, allocator, events, queue, clock, nullptr, NoWatch()};
  ctrl.OnPod(nullptr, AddPod(GatedPod("new")));
  EXPECT_TRUE(queue.added.count("pod:ns/new"));
  EXPECT_FALSE(queue.urgent.count("pod:ns/new"));
  api::Pod done = GatedPod("done");
  done.spec.scheduling_gates.clear();
  done.spec.node_name = "node-0";
  done.status.phase = "Succeeded";
  api::PodResourceClaimStatus st;
  st.name = "gpu";
  st.resource_claim_name = "done-gpu";
  done.status.resource_claim_statuses.push_back(st);
  ctrl.OnPod(nullptr, AddPod(done));
  EXPECT_TRUE(queue.urgent.count("claim:ns/done-gpu"));  // frees its device
  EXPECT_FALSE(queue.urgent.count("pod:ns/done"));
}

TEST_F(ControllerQueueTest, NewPodIsCreatedAllocatedAndReleasedInOnePass) {
  FakeQueue queue;
  Controller ctrl{cache, writer, allocator, events, queue, clock, nullptr, NoWatch()};
  AddPod(GatedPod("a"));
  ASSERT_TRUE(ctrl.SyncPod("ns", "a").ok());
  ASSERT_NE(ClaimOf("a"), nullptr);
  EXPECT_TRUE(ClaimOf("a")->status.allocation);
  EXPECT_EQ(allocator.calls, 1);
  EXPECT_TRUE(writer.pods.at("ns/a").spec.scheduling_gates.empty());
  EXPECT_FALSE(queue.added.count("pod:ns/a"));  // done, not queued again
}

TEST_F(ControllerQueueTest, PodsAreServedInArrivalOrderAndAReleaseGoesNext) {
  k8s::workqueue::QueueOptions qo;
  qo.clock = &clock;
  k8s::workqueue::RateLimitingQueue q(qo);
  QueueEnqueuer enqueuer(q);
  Controller ctrl{cache, writer, allocator, events, enqueuer, clock, nullptr, NoWatch()};
  Worker worker(
      q, [&](const Request& r) { return ctrl.Reconcile(r); }, clock, nullptr);
  constexpr int kPods = 10;
  for (int i = 0; i < kPods; ++i) ctrl.OnPod(nullptr, AddPod(GatedPod("old-" + std::to_string(i))));
  ctrl.OnPod(nullptr, AddPod(GatedPod("late")));
  // Each pass finishes one pod (claim created, allocated, gate removed), oldest first; the late
  // pod waits for the ten before it instead of having its claim created ahead of them.
  for (int i = 0; i < kPods; ++i) {
    ASSERT_TRUE(worker.ProcessNext());
    const std::string name = "old-" + std::to_string(i);
    ASSERT_NE(ClaimOf(name), nullptr) << name;
    EXPECT_TRUE(ClaimOf(name)->status.allocation) << name;
    EXPECT_TRUE(writer.pods.at("ns/" + name).spec.scheduling_gates.empty()) << name;
    EXPECT_EQ(ClaimOf("late"), nullptr) << "after " << name;
  }
  EXPECT_EQ(allocator.calls, kPods);  // one allocation per pod, no pass put back
  ASSERT_TRUE(worker.ProcessNext());
  ASSERT_NE(ClaimOf("late"), nullptr);
  EXPECT_TRUE(ClaimOf("late")->status.allocation);
  EXPECT_EQ(q.Len(), 0);
  // A release confirmed by the watch overtakes waiting pods (AddNext).
  ctrl.OnPod(nullptr, AddPod(GatedPod("waiting")));
  enqueuer.AddNext(QueueKey("pod", "ns", "late"));
  EXPECT_EQ(*q.Get(), "pod:ns/late");
  q.ShutDown();
}

}  // namespace
}  // namespace draco::reconcilers
