// The pin/reservation decision and the safety net (Controller::RecoverUnschedulable).
#include <gtest/gtest.h>
#include <prometheus/registry.h>

#include "controller/metrics/controller_metrics.h"
#include "controller/reconcilers/controller.h"
#include "controller/reconcilers/testing_fakes.h"
#include "controller/reconcilers/testing_objects.h"

namespace draco::reconcilers {
namespace {

using testing::FakeAllocator;
using testing::FakeEvents;
using testing::FakeQueue;
using testing::FakeWriter;
using testing::GatedPod;
using testing::GpuTemplate;
using testing::ReadyNode;

constexpr char kReport[] =
    "0/2 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) "
    "cannot allocate all claims.";

api::PodCondition Scheduled(const std::string& reason, const std::string& message,
                            const std::string& at = "2026-01-01T00:00:05Z") {
  api::PodCondition c;
  c.type = "PodScheduled";
  c.status = "False";
  c.reason = reason;
  c.message = message;
  c.last_transition_time = at;
  return c;
}

double ReleasedUnschedulable(prometheus::Registry& registry) {
  for (const auto& f : registry.Collect()) {
    if (f.name == "draco_released_unschedulable_total") return f.metric.at(0).counter.value;
  }
  return -1;
}

class SafetyNetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cache.UpsertTemplate(std::make_shared<const api::ResourceClaimTemplate>(GpuTemplate()));
    cache.UpsertNode(std::make_shared<const api::Node>(ReadyNode("node-0")));
    cache.UpsertNode(std::make_shared<const api::Node>(ReadyNode("node-1")));
  }

  void Sync() { testing::PlayInformer(writer, cache); }
  void AddPod(const api::Pod& p) {
    writer.pods[FakeWriter::K("ns", p.metadata.name)] = p;
    writer.live_pods[FakeWriter::K("ns", p.metadata.name)] = p;
    cache.UpsertPod(std::make_shared<const api::Pod>(p));
  }
  // Releases `name` through draco, then plays kube-scheduler reporting it unschedulable.
  void ReleaseAndReport(const std::string& name, const std::string& scheduler,
                        const api::PodCondition& report) {
    AddPod(GatedPod(name, scheduler));
    ASSERT_TRUE(ctrl.SyncPod("ns", name).ok());
    Sync();
    Report(name, report);
  }
  void Report(const std::string& name, const api::PodCondition& report) {
    api::Pod p = writer.pods.at("ns/" + name);
    p.status.conditions = {report};
    AddPod(p);
  }
  const api::ResourceClaim& OnlyClaim() const { return writer.claims.begin()->second; }
  int DeallocatedEvents() const {
    int n = 0;
    for (const auto& e : events.events) n += e.reason == "DeallocatedUnschedulable";
    return n;
  }

  ClusterCache cache;
  FakeWriter writer;
  FakeAllocator allocator;
  FakeEvents events;
  FakeQueue queue;
  FakeClock clock;
  prometheus::Registry registry;
  metrics::ControllerMetrics metrics{registry, {"pod"}};
  Controller ctrl{cache, writer, allocator, events, queue, clock, &metrics, [] {
                    ControllerOptions o;
                    o.observe_timeout = Clock::Duration::zero();
                    return o;
                  }()};
};

TEST_F(SafetyNetTest, CoveredPodIsPinnedAndReservedAtAllocation) {
  AddPod(GatedPod("p", ""));
  ASSERT_TRUE(ctrl.SyncPod("ns", "p").ok());
  EXPECT_EQ(writer.calls.back(), "ungate p pin node-0");
  ASSERT_EQ(OnlyClaim().status.reserved_for.size(), 1u);
  EXPECT_EQ(OnlyClaim().status.reserved_for[0].uid, "uid-p");
}

// kube-scheduler's Unreserve (a failed binding cycle) drops the pod from reservedFor whoever wrote
// it; a pinned pod gets it back, and is never deallocated, even when reported unschedulable.
TEST_F(SafetyNetTest, PinnedPodGetsItsReservationBackAfterTheSchedulerDropsIt) {
  ReleaseAndReport("p", "", Scheduled("Unschedulable", kReport));
  ASSERT_EQ(writer.calls.back(), "ungate p pin node-0") << "covered: pinned";
  api::ResourceClaim& c = writer.claims.begin()->second;
  c.status.reserved_for.clear();  // kube-scheduler's Unreserve patch
  c.metadata.resource_version = std::to_string(++writer.rv);
  Sync();
  writer.calls.clear();
  ASSERT_TRUE(ctrl.SyncPod("ns", "p").ok());
  ASSERT_FALSE(writer.calls.empty());
  EXPECT_EQ(writer.calls.back().rfind("status ", 0), 0u) << writer.calls.back();
  ASSERT_TRUE(OnlyClaim().status.allocation.has_value());
  ASSERT_EQ(OnlyClaim().status.reserved_for.size(), 1u);
  EXPECT_EQ(OnlyClaim().status.reserved_for[0].uid, "uid-p");
  EXPECT_EQ(DeallocatedEvents(), 0);
  Sync();
  writer.calls.clear();
  ASSERT_TRUE(ctrl.SyncPod("ns", "p").ok());
  EXPECT_TRUE(writer.calls.empty()) << "nothing to restore";
}

TEST_F(SafetyNetTest, PodOfAnotherSchedulerIsNeitherPinnedNorReserved) {
  AddPod(GatedPod("p", "draco-e2e-strict"));
  ASSERT_TRUE(ctrl.SyncPod("ns", "p").ok());
  EXPECT_EQ(writer.calls.back(), "ungate p");
  ASSERT_TRUE(OnlyClaim().status.allocation.has_value());
  EXPECT_TRUE(OnlyClaim().status.reserved_for.empty());
}

TEST_F(SafetyNetTest, PodWithUnmodelledConstraintIsNeitherPinnedNorReserved) {
  api::Pod p = GatedPod("p", "default-scheduler");
  // An in-tree GCE disk: its attach limits depend on CSI migration, which draco does not model.
  api::Volume disk;
  disk.name = "data";
  disk.gce_persistent_disk = api::GCEPersistentDiskVolumeSource{};
  disk.gce_persistent_disk->pd_name = "disk-1";
  p.spec.volumes.push_back(disk);
  AddPod(p);
  ASSERT_TRUE(ctrl.SyncPod("ns", "p").ok());
  EXPECT_EQ(writer.calls.back(), "ungate p");
  EXPECT_TRUE(OnlyClaim().status.reserved_for.empty());
}

TEST_F(SafetyNetTest, UnschedulableReleasedPodGetsItsClaimDeallocatedWithEventAndCount) {
  ReleaseAndReport("p", "draco-e2e-strict", Scheduled("Unschedulable", kReport));
  writer.calls.clear();
  ASSERT_TRUE(ctrl.SyncPod("ns", "p").ok());
  // Live check, then one status write with the cached resourceVersion (the fake refuses a stale
  // one); the allocation is gone, the finalizer stays (the scheduler allocates again).
  EXPECT_EQ(writer.Count("get p"), 1);
  EXPECT_EQ(writer.Count("status "), 1);
  EXPECT_FALSE(OnlyClaim().status.allocation.has_value());
  EXPECT_TRUE(OnlyClaim().status.devices.empty());
  EXPECT_FALSE(OnlyClaim().metadata.finalizers.empty());
  ASSERT_EQ(DeallocatedEvents(), 1);
  const auto& ev = events.events.back();
  EXPECT_EQ(ev.type, "Warning");
  EXPECT_EQ(ev.target.kind, "Pod");
  EXPECT_EQ(ev.target.name, "p");
  EXPECT_NE(ev.message.find(kReport), std::string::npos) << ev.message;
  EXPECT_NE(ev.message.find("draco-e2e-strict"), std::string::npos) << ev.message;
  EXPECT_NE(ev.message.find(OnlyClaim().metadata.name), std::string::npos) << ev.message;
  EXPECT_EQ(ReleasedUnschedulable(registry), 1);
  // Later syncs find nothing to take back.
  Sync();
  writer.calls.clear();
  ASSERT_TRUE(ctrl.SyncPod("ns", "p").ok());
  EXPECT_TRUE(writer.calls.empty()) << writer.calls.front();
  EXPECT_EQ(DeallocatedEvents(), 1);
}

TEST_F(SafetyNetTest, OtherReportsAndStatesLeaveTheClaimAlone) {
  // Not an Unschedulable report (a scheduler error, the gate's own condition).
  ReleaseAndReport("p", "draco-e2e-strict", Scheduled("SchedulerError", "boom"));
  ASSERT_TRUE(ctrl.SyncPod("ns", "p").ok());
  Report("p", Scheduled("SchedulingGated", "gated"));
  ASSERT_TRUE(ctrl.SyncPod("ns", "p").ok());
  EXPECT_TRUE(OnlyClaim().status.allocation.has_value());
  // The cache lags behind a binding: the live pod is bound.
  Report("p", Scheduled("Unschedulable", kReport));
  writer.live_pods["ns/p"].spec.node_name = "node-0";
  ASSERT_TRUE(ctrl.SyncPod("ns", "p").ok());
  EXPECT_TRUE(OnlyClaim().status.allocation.has_value());
  EXPECT_EQ(DeallocatedEvents(), 0);
  EXPECT_EQ(ReleasedUnschedulable(registry), 0);
}

TEST_F(SafetyNetTest, ReservedClaimOfPinnedPodIsKept) {
  // Pinned: reserved for the pod at allocation; deallocating would not free the pod from its pin
  // and could race kube-scheduler's binding (its PreBind writes nothing for a reserved claim).
  ReleaseAndReport("p", "", Scheduled("Unschedulable", kReport));
  writer.calls.clear();
  ASSERT_TRUE(ctrl.SyncPod("ns", "p").ok());
  EXPECT_TRUE(writer.calls.empty()) << writer.calls.front();
  EXPECT_EQ(DeallocatedEvents(), 0);
}

TEST_F(SafetyNetTest, ClaimReservedBySchedulerMeanwhileIsKept) {
  ReleaseAndReport("p", "draco-e2e-strict", Scheduled("Unschedulable", kReport));
  // kube-scheduler's PreBind reserved the claim after the cache saw it: our write conflicts.
  api::ResourceClaim& live = writer.claims.begin()->second;
  api::ResourceClaimConsumerReference ref;
  ref.resource = "pods";
  ref.name = "p";
  ref.uid = "uid-p";
  live.status.reserved_for.push_back(ref);
  live.metadata.resource_version = std::to_string(++writer.rv);
  auto r = ctrl.SyncPod("ns", "p");
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(OnlyClaim().status.allocation.has_value());
  EXPECT_EQ(DeallocatedEvents(), 0);
  // The retry reads the reservation and leaves the claim alone.
  Sync();
  ASSERT_TRUE(ctrl.SyncPod("ns", "p").ok());
  EXPECT_TRUE(OnlyClaim().status.allocation.has_value());
  EXPECT_EQ(DeallocatedEvents(), 0);
}

TEST_F(SafetyNetTest, OneActionPerReportThenBackoff) {
  ReleaseAndReport("p", "draco-e2e-strict", Scheduled("Unschedulable", kReport));
  ASSERT_TRUE(ctrl.SyncPod("ns", "p").ok());
  ASSERT_EQ(DeallocatedEvents(), 1);
  // Someone allocates the claim again without reserving it.
  api::ResourceClaim& live = writer.claims.begin()->second;
  api::AllocationResult a;
  a.devices.results.push_back({});
  live.status.allocation = a;
  live.metadata.resource_version = std::to_string(++writer.rv);
  Sync();
  // The same report is not acted on twice.
  ASSERT_TRUE(ctrl.SyncPod("ns", "p").ok());
  EXPECT_TRUE(OnlyClaim().status.allocation.has_value());
  // A new report within the backoff: requeued for later, nothing written.
  Report("p", Scheduled("Unschedulable", kReport, "2026-01-01T00:00:06Z"));
  auto r = ctrl.SyncPod("ns", "p");
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->requeue_after.has_value());
  EXPECT_GT(*r->requeue_after, Clock::Duration::zero());
  EXPECT_TRUE(OnlyClaim().status.allocation.has_value());
  clock.Step(*r->requeue_after);
  ASSERT_TRUE(ctrl.SyncPod("ns", "p").ok());
  EXPECT_FALSE(OnlyClaim().status.allocation.has_value());
  EXPECT_EQ(DeallocatedEvents(), 2);
  EXPECT_EQ(ReleasedUnschedulable(registry), 2);
}

TEST_F(SafetyNetTest, ImmediateStandaloneClaimIsKept) {
  api::ResourceClaim c;
  c.metadata.name = "shared";
  c.metadata.namespace_ = "ns";
  c.metadata.uid = "uid-shared";
  c.metadata.resource_version = "5";
  c.metadata.annotations[std::string(kAllocationAnnotation)] = std::string(kImmediateAllocation);
  c.metadata.finalizers.push_back(std::string(kDeleteProtectionFinalizer));
  c.status.allocation = api::AllocationResult{};
  writer.claims["ns/shared"] = c;
  Sync();
  api::Pod p = GatedPod("p", "draco-e2e-strict");
  p.spec.scheduling_gates.clear();
  p.spec.resource_claims[0].resource_claim_template_name.reset();
  p.spec.resource_claims[0].resource_claim_name = "shared";
  p.status.conditions = {Scheduled("Unschedulable", kReport)};
  AddPod(p);
  writer.calls.clear();
  ASSERT_TRUE(ctrl.SyncPod("ns", "p").ok());
  EXPECT_EQ(writer.Count("status "), 0);
  EXPECT_TRUE(writer.claims.at("ns/shared").status.allocation.has_value());
}

}  // namespace
}  // namespace draco::reconcilers
