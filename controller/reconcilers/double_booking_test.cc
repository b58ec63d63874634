// Double bookings (double_booking.cc): repaired while a side is still gated, reported otherwise.
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

double Repairs(prometheus::Registry& registry, const std::string& outcome) {
  for (const auto& f : registry.Collect()) {
    if (f.name != "draco_double_allocation_repairs_total") continue;
    for (const auto& m : f.metric) {
      if (m.label.at(0).value == outcome) return m.counter.value;
    }
  }
  return -1;
}

class DoubleBookingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cache.UpsertTemplate(std::make_shared<const api::ResourceClaimTemplate>(GpuTemplate()));
    cache.UpsertNode(std::make_shared<const api::Node>(ReadyNode("node-0")));
  }
  void Sync() { testing::PlayInformer(writer, cache); }
  void AddPod(const api::Pod& p) {
    writer.pods[FakeWriter::K("ns", p.metadata.name)] = p;
    cache.UpsertPod(std::make_shared<const api::Pod>(p));
  }
  // A claim ns/<name> that another allocator gave `device` of node-0 (finalizer, allocation,
  // reserved for `consumer` when set), used by pod ns/<pod> (bound to node-0 when `bound`).
  void Foreign(const std::string& name, const std::string& device, const std::string& pod,
               bool bound, const std::string& timestamp = "2026-01-01T00:00:01Z") {
    api::ResourceClaim c;
    c.metadata.name = name;
    c.metadata.namespace_ = "ns";
    c.metadata.uid = "uid-" + name;
    c.metadata.resource_version = std::to_string(++writer.rv);
    c.metadata.finalizers = {"resource.kubernetes.io/delete-protection"};
    c.status.allocation = api::AllocationResult{};
    c.status.allocation->allocation_timestamp = timestamp;
    api::DeviceRequestAllocationResult r;
    r.request = "gpu";
    r.driver = "gpu.example.com";
    r.pool = "node-0";
    r.device = device;
    c.status.allocation->devices.results.push_back(r);
    api::Pod p = GatedPod(pod);
    p.spec.resource_claims[0].resource_claim_template_name.reset();
    p.spec.resource_claims[0].resource_claim_name = name;
    if (bound) {
      p.spec.scheduling_gates.clear();
      p.spec.node_name = "node-0";
      c.status.reserved_for.push_back(PodConsumer(p));
    }
    writer.claims[FakeWriter::K("ns", name)] = c;
    AddPod(p);
    Sync();
  }
  int EventsWithReason(const std::string& reason) const {
    int n = 0;
    for (const auto& e : events.events) n += e.reason == reason;
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
                    o.observe_timeout = std::chrono::seconds(30);  // release once observed
                    return o;
                  }()};
};

TEST_F(DoubleBookingTest, GatedPodIsNotReleasedOnADeviceAnotherSchedulerGaveAway) {
  AddPod(GatedPod("p"));
  ASSERT_TRUE(ctrl.SyncPod("ns", "p").ok());  // allocated dev-0, waits for the watch
  ASSERT_EQ(writer.claims.size(), 1u);
  ASSERT_TRUE(writer.claims.begin()->second.status.allocation.has_value());
  // Meanwhile kube-scheduler gave dev-0 to an ungated pod's claim, and it is bound.
  Foreign("theirs", "dev-0", "q", /*bound=*/true);
  writer.calls.clear();
  ASSERT_TRUE(ctrl.SyncPod("ns", "p").ok());
  ASSERT_FALSE(writer.calls.empty());
  EXPECT_EQ(writer.calls.back().rfind("status p-gpu-", 0), 0u) << writer.calls.back();
  for (const auto& call : writer.calls) EXPECT_EQ(call.rfind("ungate", 0), std::string::npos);
  for (const auto& [k, c] : writer.claims) {
    if (k != "ns/theirs") {
      EXPECT_FALSE(c.status.allocation.has_value()) << k;
    }
  }
  EXPECT_TRUE(writer.claims.at("ns/theirs").status.allocation.has_value());
  EXPECT_EQ(EventsWithReason("DoubleAllocationRepaired"), 2);  // claim and pod
  EXPECT_TRUE(queue.urgent.count("pod:ns/p"));
  EXPECT_EQ(Repairs(registry, "repaired"), 1);
  EXPECT_EQ(writer.pods.at("ns/p").spec.scheduling_gates.size(), 1u) << "still gated";
}

// The auditor never writes itself (a deallocation could land after the pod's release): it queues
// the gated pod, whose own sync takes the claim back before the gate comes off.
TEST_F(DoubleBookingTest, AuditorQueuesTheGatedSideWhoseSyncGivesItBack) {
  Foreign("ours", "dev-7", "gated", /*bound=*/false);
  Foreign("theirs", "dev-7", "running", /*bound=*/true);
  writer.calls.clear();
  EXPECT_EQ(ctrl.Audit(), 1u);
  EXPECT_TRUE(writer.calls.empty());
  EXPECT_TRUE(queue.urgent.count("pod:ns/gated"));
  EXPECT_FALSE(queue.urgent.count("pod:ns/running"));
  EXPECT_EQ(EventsWithReason("DeviceAllocatedTwice"), 0);
  ASSERT_TRUE(ctrl.SyncPod("ns", "gated").ok());
  EXPECT_FALSE(writer.claims.at("ns/ours").status.allocation.has_value());
  EXPECT_TRUE(writer.claims.at("ns/theirs").status.allocation.has_value());
  EXPECT_EQ(writer.pods.at("ns/gated").spec.scheduling_gates.size(), 1u) << "still gated";
  Sync();
  EXPECT_EQ(ctrl.Audit(), 0u);
}

TEST_F(DoubleBookingTest, AllGatedKeepsTheOldestAllocation) {
  Foreign("young", "dev-7", "a", /*bound=*/false, "2026-01-01T00:00:09Z");
  Foreign("old", "dev-7", "b", /*bound=*/false, "2026-01-01T00:00:01Z");
  EXPECT_EQ(ctrl.Audit(), 1u);
  ASSERT_TRUE(ctrl.SyncPod("ns", "b").ok());  // the oldest: released with its device
  ASSERT_TRUE(ctrl.SyncPod("ns", "a").ok());
  EXPECT_TRUE(writer.claims.at("ns/old").status.allocation.has_value());
  EXPECT_FALSE(writer.claims.at("ns/young").status.allocation.has_value());
  EXPECT_TRUE(writer.pods.at("ns/b").spec.scheduling_gates.empty());
  EXPECT_EQ(writer.pods.at("ns/a").spec.scheduling_gates.size(), 1u);
}

TEST_F(DoubleBookingTest, SharedClaimIsReportedNotTakenBack) {
  Foreign("shared", "dev-7", "a", /*bound=*/false);
  api::Pod second = writer.pods.at("ns/a");
  second.metadata.name = "a2";
  second.metadata.uid = "uid-a2";
  AddPod(second);
  Foreign("theirs", "dev-7", "running", /*bound=*/true);
  writer.calls.clear();
  EXPECT_EQ(ctrl.Audit(), 1u);
  EXPECT_TRUE(queue.urgent.empty());
  EXPECT_EQ(EventsWithReason("DeviceAllocatedTwice"), 3);
  EXPECT_TRUE(writer.claims.at("ns/shared").status.allocation.has_value());
}

TEST_F(DoubleBookingTest, BothRunningIsReportedOnEveryPodOnceNeverWritten) {
  Foreign("one", "dev-7", "a", /*bound=*/true);
  Foreign("two", "dev-7", "b", /*bound=*/true);
  writer.calls.clear();
  EXPECT_EQ(ctrl.Audit(), 1u);
  EXPECT_TRUE(writer.calls.empty());
  ASSERT_EQ(EventsWithReason("DeviceAllocatedTwice"), 2);
  std::set<std::string> pods;
  for (const auto& e : events.events) pods.insert(e.target.name);
  EXPECT_EQ(pods, (std::set<std::string>{"a", "b"}));
  EXPECT_EQ(Repairs(registry, "reported"), 1);
  EXPECT_EQ(ctrl.Audit(), 1u);
  EXPECT_EQ(EventsWithReason("DeviceAllocatedTwice"), 2) << "reported once per finding";
}

// Item 2 of issue #21: a pod bound while its claim was not reserved for it (a scheduler's lost
// write) gets the reservation, unless the allocation is for other nodes (then an Event).
TEST_F(DoubleBookingTest, BoundPodGetsTheReservationItsSchedulerDidNotWrite) {
  cache.UpsertNode(std::make_shared<const api::Node>(ReadyNode("node-1")));
  Foreign("here", "dev-1", "a", /*bound=*/true);
  Foreign("there", "dev-2", "b", /*bound=*/true);
  for (const char* name : {"here", "there"}) {
    api::ResourceClaim& c = writer.claims.at(std::string("ns/") + name);
    c.status.reserved_for.clear();
    api::NodeSelectorRequirement r;
    r.key = "metadata.name";
    r.operator_ = "In";
    r.values = {std::string(name) == "here" ? "node-0" : "node-1"};
    api::NodeSelectorTerm t;
    t.match_fields.push_back(r);
    c.status.allocation->node_selector = api::NodeSelector{};
    c.status.allocation->node_selector->node_selector_terms.push_back(t);
  }
  Sync();
  ASSERT_TRUE(ctrl.SyncPod("ns", "a").ok());
  ASSERT_EQ(writer.claims.at("ns/here").status.reserved_for.size(), 1u);
  EXPECT_EQ(writer.claims.at("ns/here").status.reserved_for[0].uid, "uid-a");
  writer.calls.clear();
  ASSERT_TRUE(ctrl.SyncPod("ns", "b").ok());
  EXPECT_TRUE(writer.calls.empty());
  EXPECT_TRUE(writer.claims.at("ns/there").status.reserved_for.empty());
  EXPECT_EQ(EventsWithReason("ClaimAllocatedElsewhere"), 1);
}

}  // namespace
}  // namespace draco::reconcilers
