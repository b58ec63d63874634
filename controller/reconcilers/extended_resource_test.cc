#include "controller/reconcilers/extended_resource.h"

#include <gtest/gtest.h>

#include "controller/api/extended_resource.h"
#include "controller/reconcilers/claim_util.h"
#include "controller/reconcilers/controller.h"
#include "controller/reconcilers/testing_fakes.h"

namespace draco::reconcilers {
namespace {

using testing::FakeAllocator;
using testing::FakeEvents;
using testing::FakeQueue;
using testing::FakeWriter;

// A bound pod asking example.com/gpu: 1 and the special claim kube-scheduler made for it:
// allocated, reserved for the pod, with the builtin finalizer.
class ExtendedResourceLifecycleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pod.metadata.name = "classic";
    pod.metadata.namespace_ = "ns";
    pod.metadata.uid = "uid-classic";
    pod.spec.node_name = "node-0";
    api::Container c;
    c.name = "main";
    c.resources.limits["example.com/gpu"] = api::Quantity::FromInt64(1);
    pod.spec.containers.push_back(c);
    pod.status.phase = "Running";

    auto plan = api::PlanExtendedResources(pod, {{"example.com/gpu", "gpu"}}, nullptr);
    ASSERT_TRUE(plan.ok()) << plan.status();
    api::ResourceClaim claim = api::NewExtendedResourceClaim(pod, plan->requests);
    claim.metadata.finalizers.push_back(std::string(kDeleteProtectionFinalizer));
    auto created = writer.CreateClaim(claim);
    ASSERT_TRUE(created.ok());
    name = (*created)->metadata.name;
    api::ResourceClaim allocated = **created;
    allocated.status.allocation.emplace();
    allocated.status.reserved_for.push_back(PodConsumer(pod));
    writer.claims[FakeWriter::K("ns", name)] = allocated;
    cache.UpsertClaim(std::make_shared<const api::ResourceClaim>(allocated));

    pod.status.extended_resource_claim_status.emplace();
    pod.status.extended_resource_claim_status->resource_claim_name = name;
    pod.status.extended_resource_claim_status->request_mappings = plan->mappings;
    SetPod(pod);
  }

  void SetPod(const api::Pod& p) {
    writer.pods[FakeWriter::K("ns", p.metadata.name)] = p;
    cache.UpsertPod(std::make_shared<const api::Pod>(p));
  }

  api::Pod pod;
  std::string name;
  ClusterCache cache;
  FakeWriter writer;
  FakeAllocator allocator;
  FakeEvents events;
  FakeQueue queue;
  FakeClock clock;
  Controller ctrl{cache, writer, allocator, events, queue, clock, nullptr};
};

TEST_F(ExtendedResourceLifecycleTest, PodWithOnlyAnExtendedClaimConsumesClaims) {
  EXPECT_TRUE(PodConsumesClaims(pod));
  EXPECT_EQ(ExtendedClaimName(pod), name);
  api::Pod plain = pod;
  plain.status.extended_resource_claim_status.reset();
  EXPECT_FALSE(PodConsumesClaims(plain));
}

TEST_F(ExtendedResourceLifecycleTest, RunningPodKeepsItsClaim) {
  ASSERT_TRUE(ctrl.SyncClaim("ns", name).ok());
  EXPECT_EQ(writer.Count("delete"), 0);
  EXPECT_EQ(writer.claims.at("ns/" + name).status.reserved_for.size(), 1u);
}

TEST_F(ExtendedResourceLifecycleTest, SucceededPodReleasesAndDeletesTheClaim) {
  api::Pod done = pod;
  done.status.phase = "Succeeded";
  SetPod(done);
  queue.added.clear();
  ctrl.OnPod(std::make_shared<const api::Pod>(pod), cache.GetPod("ns", "classic"));
  EXPECT_TRUE(queue.added.count("claim:ns/" + name)) << "the pod's event must reach its claim";
  ASSERT_TRUE(ctrl.SyncClaim("ns", name).ok());
  EXPECT_EQ(writer.Count("update " + name), 1);  // finalizer off
  EXPECT_EQ(writer.Count("delete " + name), 1);
  EXPECT_TRUE(writer.claims.empty());
}

TEST_F(ExtendedResourceLifecycleTest, DeletedPodsClaimIsDeleted) {
  ctrl.OnPod(cache.GetPod("ns", "classic"), nullptr);
  EXPECT_TRUE(queue.added.count("claim:ns/" + name));
  cache.DeletePod("ns", "classic");
  writer.pods.clear();
  ASSERT_TRUE(ctrl.SyncClaim("ns", name).ok());
  EXPECT_TRUE(writer.claims.empty());
}

TEST_F(ExtendedResourceLifecycleTest, StartupResyncFindsPodsThatFinishedWhileDown) {
  api::Pod done = pod;
  done.status.phase = "Failed";
  SetPod(done);
  queue.added.clear();
  ctrl.EnqueueAll();
  EXPECT_TRUE(queue.added.count("claim:ns/" + name));
  ASSERT_TRUE(ctrl.SyncClaim("ns", name).ok());
  EXPECT_TRUE(writer.claims.empty());
}

// A gated pod asking example.com/gpu: draco plans the special claim with kube-scheduler's
// requests, pins the pod to the planned node, writes no claim, and holds the planned devices
// until kube-scheduler's own claim shows up allocated.
TEST(PlannedExtendedClaimTest, GatedPodIsPlannedPinnedAndHeldUntilSchedulerClaim) {
  ClusterCache cache;
  FakeWriter writer;
  FakeAllocator allocator;
  FakeEvents events;
  FakeQueue queue;
  FakeClock clock;
  ControllerOptions opts;
  opts.observe_timeout = Clock::Duration::zero();
  Controller ctrl{cache, writer, allocator, events, queue, clock, nullptr, opts};
  api::DeviceClass cls;
  cls.metadata.name = "gpu";
  cls.spec.extended_resource_name = "example.com/gpu";
  cache.UpsertClass(std::make_shared<const api::DeviceClass>(cls));
  api::Node n;
  n.metadata.name = "node-0";
  api::NodeCondition ready;
  ready.type = "Ready";
  ready.status = "True";
  n.status.conditions.push_back(ready);
  // Every kubelet reports allocatable pods; kube-scheduler's NodeResourcesFit counts them.
  n.status.allocatable["pods"] = *api::Quantity::Parse("110");
  cache.UpsertNode(std::make_shared<const api::Node>(n));

  api::Pod p;
  p.metadata.name = "classic";
  p.metadata.namespace_ = "ns";
  p.metadata.uid = "uid-classic";
  api::PodSchedulingGate g;
  g.name = std::string(kSchedulingGate);
  p.spec.scheduling_gates.push_back(g);
  api::Container c;
  c.name = "main";
  c.resources.limits["example.com/gpu"] = api::Quantity::FromInt64(1);
  p.spec.containers.push_back(c);
  writer.pods["ns/classic"] = p;
  cache.UpsertPod(std::make_shared<const api::Pod>(p));

  ctrl.OnPod(nullptr, cache.GetPod("ns", "classic"));
  EXPECT_TRUE(queue.added.count("pod:ns/classic")) << "a gated extended-resource pod is synced";
  ClaimPtr planned = PlannedExtendedClaim(p, cache.DeviceClasses());
  ASSERT_TRUE(planned != nullptr);
  EXPECT_EQ(planned->spec.devices.requests.at(0).name, "container-0-request-0");
  EXPECT_EQ(planned->spec.devices.requests.at(0).exactly->device_class_name, "gpu");
  EXPECT_TRUE(api::IsExtendedResourceClaim(*planned));

  ASSERT_TRUE(ctrl.SyncPod("ns", "classic").ok());
  EXPECT_EQ(allocator.calls, 1);
  EXPECT_EQ(writer.Count("create"), 0) << "kube-scheduler creates the special claim";
  EXPECT_EQ(writer.Count("ungate classic pin node-0"), 1);
  int settled = allocator.settled;  // the plan is still held

  // kube-scheduler's claim arrives allocated: the hold ends.
  api::ResourceClaim real = api::NewExtendedResourceClaim(p, planned->spec.devices.requests);
  real.metadata.name = "classic-extended-resources-abcde";
  real.metadata.uid = "uid-real";
  real.status.allocation.emplace();
  auto now = std::make_shared<const api::ResourceClaim>(real);
  cache.UpsertClaim(now);
  ctrl.OnClaim(nullptr, now);
  EXPECT_EQ(allocator.settled, settled + 1);
  ctrl.OnClaim(nullptr, now);  // once only
  EXPECT_EQ(allocator.settled, settled + 1);

  // A pod without a class for its resource, or whose claim is recorded, is not planned.
  EXPECT_EQ(PlannedExtendedClaim(p, {}), nullptr);
  api::Pod recorded = p;
  recorded.status.extended_resource_claim_status.emplace();
  recorded.status.extended_resource_claim_status->resource_claim_name = real.metadata.name;
  EXPECT_EQ(PlannedExtendedClaim(recorded, cache.DeviceClasses()), nullptr);
}

}  // namespace
}  // namespace draco::reconcilers
