#include "controller/reconcilers/binding_conditions.h"

#include <gtest/gtest.h>
#include <prometheus/registry.h>

#include "controller/reconcilers/controller.h"
#include "controller/reconcilers/testing_fakes.h"
#include "controller/reconcilers/testing_objects.h"

namespace draco::reconcilers {
namespace {

using std::chrono::seconds;
using testing::FakeAllocator;
using testing::FakeEvents;
using testing::FakeQueue;
using testing::FakeWriter;
using testing::GpuTemplate;

constexpr std::chrono::milliseconds kTimeout = seconds(60);

api::Condition Cond(const std::string& type, const std::string& status,
                    const std::string& reason = "", const std::string& message = "") {
  api::Condition c;
  c.type = type;
  c.status = status;
  c.reason = reason;
  c.message = message;
  return c;
}

api::DeviceRequestAllocationResult Device(const std::string& name, bool binding) {
  api::DeviceRequestAllocationResult d;
  d.request = "gpu";
  d.driver = "drv";
  d.pool = "pool";
  d.device = name;
  if (binding) {
    d.binding_conditions = {"Attached", "Ready"};
    d.binding_failure_conditions = {"AttachFailed"};
  }
  return d;
}

// `status`: conditions per device name.
void SetStatus(api::ResourceClaim& c, const std::string& device,
               std::vector<api::Condition> conditions) {
  api::AllocatedDeviceStatus s;
  s.driver = "drv";
  s.pool = "pool";
  s.device = device;
  s.conditions = std::move(conditions);
  c.status.devices.push_back(s);
}

const auto kAllocated = *ParseTimestamp("2026-01-02T03:04:05Z");

api::ResourceClaim Claim(std::vector<api::DeviceRequestAllocationResult> devices,
                         bool timestamp = true) {
  api::ResourceClaim c;
  c.metadata.name = "c";
  c.status.allocation = api::AllocationResult{};
  c.status.allocation->devices.results = std::move(devices);
  if (timestamp) c.status.allocation->allocation_timestamp = FormatTimestamp(kAllocated);
  return c;
}

TEST(CheckBindingConditionsTest, ReadyWithoutAllocationOrBindingConditions) {
  api::ResourceClaim none;
  EXPECT_EQ(CheckBindingConditions(none, kAllocated, kTimeout).state, BindingState::kReady);
  EXPECT_EQ(CheckBindingConditions(Claim({Device("a", false)}), kAllocated + seconds(999), kTimeout)
                .state,
            BindingState::kReady);
}

TEST(CheckBindingConditionsTest, PendingUntilEveryConditionIsTrue) {
  api::ResourceClaim c = Claim({Device("a", true)});
  // No device status yet: pending on the first condition, deadline = timestamp + timeout.
  BindingCheck b = CheckBindingConditions(c, kAllocated + seconds(5), kTimeout);
  EXPECT_EQ(b.state, BindingState::kPending);
  EXPECT_EQ(b.device, "drv/pool/a");
  EXPECT_EQ(b.condition, "Attached");
  ASSERT_TRUE(b.deadline.has_value());
  EXPECT_EQ(*b.deadline, kAllocated + kTimeout);
  SetStatus(c, "a", {Cond("Attached", "True"), Cond("Ready", "False")});
  b = CheckBindingConditions(c, kAllocated + seconds(5), kTimeout);
  EXPECT_EQ(b.state, BindingState::kPending);
  EXPECT_EQ(b.condition, "Ready");
  EXPECT_EQ(DescribeBindingCheck(b, kTimeout),
            "device drv/pool/a: binding condition Ready is not True yet");
  c.status.devices[0].conditions[1].status = "True";
  b = CheckBindingConditions(c, kAllocated + seconds(5), kTimeout);
  EXPECT_EQ(b.state, BindingState::kReady);
  EXPECT_EQ(DescribeBindingCheck(b, kTimeout), "");
}

TEST(CheckBindingConditionsTest, StatusOfAnotherDeviceDoesNotCount) {
  api::ResourceClaim c = Claim({Device("a", true)});
  SetStatus(c, "b", {Cond("Attached", "True"), Cond("Ready", "True")});
  EXPECT_EQ(CheckBindingConditions(c, kAllocated, kTimeout).state, BindingState::kPending);
}

TEST(CheckBindingConditionsTest, FailureWinsOverPendingDevices) {
  api::ResourceClaim c = Claim({Device("a", true), Device("b", true)});
  SetStatus(c, "b", {Cond("AttachFailed", "True", "FabricError", "no path to node")});
  BindingCheck b = CheckBindingConditions(c, kAllocated, kTimeout);
  EXPECT_EQ(b.state, BindingState::kFailed);
  EXPECT_EQ(b.device, "drv/pool/b");
  EXPECT_EQ(b.condition, "AttachFailed");
  EXPECT_EQ(DescribeBindingCheck(b, kTimeout),
            "device drv/pool/b: binding failure condition AttachFailed is True (FabricError: no "
            "path to node)");
  // A failure condition that is False is no failure.
  c.status.devices[0].conditions[0].status = "False";
  EXPECT_EQ(CheckBindingConditions(c, kAllocated, kTimeout).state, BindingState::kPending);
}

TEST(CheckBindingConditionsTest, TimesOutAfterTheDeadline) {
  api::ResourceClaim c = Claim({Device("a", true)});
  EXPECT_EQ(CheckBindingConditions(c, kAllocated + kTimeout, kTimeout).state,
            BindingState::kPending);  // kube-scheduler: deadline strictly before now
  BindingCheck b = CheckBindingConditions(c, kAllocated + kTimeout + seconds(1), kTimeout);
  EXPECT_EQ(b.state, BindingState::kTimedOut);
  EXPECT_EQ(DescribeBindingCheck(b, kTimeout),
            "device drv/pool/a: binding condition Attached is still not True 60s after the "
            "allocation (binding timeout)");
  // Ready devices never time out.
  SetStatus(c, "a", {Cond("Attached", "True"), Cond("Ready", "True")});
  EXPECT_EQ(CheckBindingConditions(c, kAllocated + seconds(999), kTimeout).state,
            BindingState::kReady);
}

TEST(CheckBindingConditionsTest, NoTimestampNeverTimesOut) {
  api::ResourceClaim c = Claim({Device("a", true)}, /*timestamp=*/false);
  BindingCheck b = CheckBindingConditions(c, kAllocated + seconds(99999), kTimeout);
  EXPECT_EQ(b.state, BindingState::kPending);
  EXPECT_FALSE(b.deadline.has_value());
}

// The controller with a driver whose devices have binding conditions.
class BindingControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cache.UpsertTemplate(std::make_shared<const api::ResourceClaimTemplate>(GpuTemplate()));
    api::Node n;
    n.metadata.name = "node-0";
    n.metadata.labels = {{"kubernetes.io/hostname", "node-0"}};
    api::NodeCondition ready;
    ready.type = "Ready";
    ready.status = "True";
    n.status.conditions.push_back(ready);
    n.status.allocatable["pods"] = *api::Quantity::Parse("110");
    cache.UpsertNode(std::make_shared<const api::Node>(n));
    allocator.binding_conditions = {"Attached"};
    allocator.binding_failure_conditions = {"AttachFailed"};
    api::Pod p;
    p.metadata.name = "train";
    p.metadata.namespace_ = "ns";
    p.metadata.uid = "uid-train";
    p.metadata.resource_version = "1";
    api::PodResourceClaim pc;
    pc.name = "gpu";
    pc.resource_claim_template_name = "tmpl";
    p.spec.resource_claims.push_back(pc);
    api::PodSchedulingGate gate;
    gate.name = std::string(kSchedulingGate);
    p.spec.scheduling_gates.push_back(gate);
    p.status.phase = "Pending";
    writer.pods["ns/train"] = p;
    cache.UpsertPod(std::make_shared<const api::Pod>(p));
  }

  ControllerOptions Options() {
    ControllerOptions o;
    o.observe_timeout = Clock::Duration::zero();
    o.binding_timeout = seconds(60);
    return o;
  }

  // Plays the informer.
  void Sync() { testing::PlayInformer(writer, cache); }
  api::ResourceClaim& TheClaim() { return writer.claims.begin()->second; }
  // Plays the driver: sets the device's conditions (a status update, new resourceVersion).
  void DriverReports(std::vector<api::Condition> conds) {
    api::ResourceClaim& c = TheClaim();
    const auto& d = c.status.allocation->devices.results.at(0);
    c.status.devices.clear();
    api::AllocatedDeviceStatus s;
    s.driver = d.driver;
    s.pool = d.pool;
    s.device = d.device;
    s.conditions = std::move(conds);
    c.status.devices.push_back(s);
    c.metadata.resource_version = std::to_string(std::stoi(c.metadata.resource_version) + 1);
    Sync();
  }
  std::string NowStamp() { return FormatTimestamp(clock.WallNow()); }
  bool Gated() { return !writer.pods.at("ns/train").spec.scheduling_gates.empty(); }
  std::string Message(const std::string& reason) {
    for (const auto& e : events.events) {
      if (e.reason == reason) return e.message;
    }
    return "";
  }
  int CountEvents(const std::string& reason, const std::string& kind) {
    int n = 0;
    for (const auto& e : events.events) n += e.reason == reason && e.target.kind == kind;
    return n;
  }

  ClusterCache cache;
  FakeWriter writer;
  FakeAllocator allocator;
  FakeEvents events;
  FakeQueue queue;
  FakeClock clock;
};

TEST_F(BindingControllerTest, PodStaysGatedUntilTheConditionsAreTrue) {
  Controller ctrl{cache, writer, allocator, events, queue, clock, nullptr, Options()};
  auto r = ctrl.SyncPod("ns", "train");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(writer.claims.size(), 1u);
  EXPECT_TRUE(TheClaim().status.allocation.has_value());
  EXPECT_TRUE(Gated());
  EXPECT_EQ(CountEvents("BindingConditionsPending", "Pod"), 1);
  // Woken just after the deadline (the FakeClock does not move: the whole timeout is left).
  ASSERT_TRUE(r->requeue_after.has_value());
  EXPECT_GT(*r->requeue_after, seconds(60));
  EXPECT_LT(*r->requeue_after, seconds(61));
  Sync();
  ASSERT_TRUE(ctrl.SyncPod("ns", "train").ok());  // still pending: no write, no allocation
  EXPECT_TRUE(Gated());
  EXPECT_EQ(allocator.calls, 1);
  DriverReports({Cond("Attached", "True")});
  ASSERT_TRUE(ctrl.SyncPod("ns", "train").ok());
  EXPECT_FALSE(Gated());
  EXPECT_EQ(allocator.calls, 1);
  EXPECT_EQ(TheClaim().status.allocation->devices.results[0].device, "dev-0");
}

TEST_F(BindingControllerTest, FailedConditionDeallocatesAndDracoAllocatesAgain) {
  prometheus::Registry registry;
  metrics::ControllerMetrics m(registry, {"pod"});
  Controller ctrl{cache, writer, allocator, events, queue, clock, &m, Options()};
  ASSERT_TRUE(ctrl.SyncPod("ns", "train").ok());
  Sync();
  DriverReports({Cond("AttachFailed", "True", "FabricError", "no path")});
  queue.added.clear();
  ASSERT_TRUE(ctrl.SyncPod("ns", "train").ok());
  // Deallocated (allocation, device status and reservation cleared) and, in the same pass,
  // allocated again by draco's allocator; the pod keeps its gate.
  EXPECT_EQ(writer.Count("status"), 3);  // allocation, deallocation, allocation
  EXPECT_EQ(allocator.calls, 2);
  ASSERT_TRUE(TheClaim().status.allocation.has_value());
  EXPECT_EQ(TheClaim().status.allocation->devices.results[0].device, "dev-1");
  EXPECT_TRUE(TheClaim().status.devices.empty());
  EXPECT_TRUE(Gated());
  EXPECT_EQ(CountEvents("BindingConditionsFailed", "Pod"), 1);
  EXPECT_EQ(CountEvents("BindingConditionsFailed", "ResourceClaim"), 1);
  EXPECT_NE(Message("BindingConditionsFailed").find("AttachFailed is True (FabricError: no path)"),
            std::string::npos)
      << Message("BindingConditionsFailed");
  m.IncBindingConditionsDeallocation(/*timeout=*/false);  // this one + the controller's
  bool counted = false;
  for (const auto& f : registry.Collect()) {
    if (f.name != "draco_binding_conditions_deallocations_total") continue;
    for (const auto& mm : f.metric) {
      counted = counted || (mm.label.at(0).value == "failed" && mm.counter.value == 2);
    }
  }
  EXPECT_TRUE(counted);
  // The new device attaches: released.
  Sync();
  DriverReports({Cond("Attached", "True")});
  ASSERT_TRUE(ctrl.SyncPod("ns", "train").ok());
  EXPECT_FALSE(Gated());
  EXPECT_EQ(TheClaim().status.allocation->devices.results[0].device, "dev-1");
}

TEST_F(BindingControllerTest, TimeoutDeallocatesAndDracoAllocatesAgain) {
  Controller ctrl{cache, writer, allocator, events, queue, clock, nullptr, Options()};
  ASSERT_TRUE(ctrl.SyncPod("ns", "train").ok());
  Sync();
  DriverReports({Cond("Attached", "False")});
  clock.Step(seconds(30));
  ASSERT_TRUE(ctrl.SyncPod("ns", "train").ok());
  EXPECT_TRUE(TheClaim().status.allocation.has_value());  // not yet
  clock.Step(seconds(31));
  ASSERT_TRUE(ctrl.SyncPod("ns", "train").ok());
  EXPECT_EQ(CountEvents("BindingConditionsTimeout", "Pod"), 1);
  EXPECT_EQ(CountEvents("BindingConditionsTimeout", "ResourceClaim"), 1);
  ASSERT_TRUE(TheClaim().status.allocation.has_value());
  EXPECT_EQ(TheClaim().status.allocation->allocation_timestamp, NowStamp());
  EXPECT_EQ(TheClaim().status.allocation->devices.results[0].device, "dev-1");
  EXPECT_TRUE(Gated());
}

TEST_F(BindingControllerTest, ClaimReservedForAnotherConsumerIsNotTakenBack) {
  Controller ctrl{cache, writer, allocator, events, queue, clock, nullptr, Options()};
  ASSERT_TRUE(ctrl.SyncPod("ns", "train").ok());
  api::ResourceClaimConsumerReference other;
  other.resource = "pods";
  other.name = "other";
  other.uid = "uid-other";
  TheClaim().status.reserved_for.push_back(other);
  DriverReports({Cond("AttachFailed", "True")});
  ASSERT_TRUE(ctrl.SyncPod("ns", "train").ok());
  EXPECT_TRUE(TheClaim().status.allocation.has_value());
  EXPECT_TRUE(Gated());
  EXPECT_EQ(CountEvents("BindingConditionsFailed", "Pod"), 1);
  EXPECT_NE(Message("BindingConditionsFailed").find("reserved for other consumers"),
            std::string::npos);
}

TEST_F(BindingControllerTest, ConflictingDeallocationIsRetriedFromFreshState) {
  Controller ctrl{cache, writer, allocator, events, queue, clock, nullptr, Options()};
  ASSERT_TRUE(ctrl.SyncPod("ns", "train").ok());
  DriverReports({Cond("AttachFailed", "True")});
  writer.fail_next.insert("conflict:status");
  auto r = ctrl.SyncPod("ns", "train");
  EXPECT_FALSE(r.ok());  // the worker retries with backoff
  EXPECT_TRUE(TheClaim().status.allocation.has_value());
  EXPECT_EQ(CountEvents("BindingConditionsFailed", "Pod"), 0);
  EXPECT_TRUE(Gated());
  ASSERT_TRUE(ctrl.SyncPod("ns", "train").ok());
  EXPECT_EQ(CountEvents("BindingConditionsFailed", "Pod"), 1);
  EXPECT_EQ(TheClaim().status.allocation->devices.results[0].device, "dev-1");
  EXPECT_TRUE(Gated());
}

TEST_F(BindingControllerTest, DisabledReleasesAtOnce) {
  ControllerOptions o = Options();
  o.binding_conditions = false;
  Controller ctrl{cache, writer, allocator, events, queue, clock, nullptr, o};
  ASSERT_TRUE(ctrl.SyncPod("ns", "train").ok());
  EXPECT_FALSE(Gated());
  EXPECT_EQ(CountEvents("BindingConditionsPending", "Pod"), 0);
}

}  // namespace
}  // namespace draco::reconcilers
