#include "controller/reconcilers/scheduler_holds.h"

#include <set>

#include <gtest/gtest.h>

#include "controller/reconcilers/snapshot_allocator.h"
#include "controller/reconcilers/testing_groups.h"
#include "controller/reconcilers/testing_objects.h"

namespace draco::reconcilers {
namespace {

api::DeviceRequestAllocationResult Result(const std::string& pool, const std::string& device) {
  api::DeviceRequestAllocationResult r;
  r.request = "r";
  r.driver = "drv";
  r.pool = pool;
  r.device = device;
  return r;
}

alloc::Allocator::Config Config() {
  alloc::Allocator::Config c;
  c.selectors = alloc::NewCelSelectorCompiler();
  return c;
}

// Two Ready nodes n0, n1 with four devices d0..d3 each (driver drv), class "gpu".
class SchedulerHoldsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cache.UpsertClass(testing::GpuClass("device.driver == \"drv\""));
    for (const std::string node : {"n0", "n1"}) {
      cache.UpsertSlice(
          MakeSliceEntry(std::make_shared<const api::ResourceSlice>(testing::NodeSlice(node, 4))));
      cache.UpsertNode(std::make_shared<const api::Node>(testing::ReadyNode(node)));
    }
  }
  // Claim ns/<name> asking for `count` devices of class gpu.
  static api::ResourceClaim Claim(const std::string& name, int64_t count = 1) {
    api::ResourceClaim c;
    c.metadata.name = name;
    c.metadata.namespace_ = "ns";
    c.metadata.uid = "uid-" + name;
    c.metadata.resource_version = "1";
    api::DeviceRequest r;
    r.name = "r";
    r.exactly = api::ExactDeviceRequest{};
    r.exactly->device_class_name = "gpu";
    r.exactly->count = count;
    c.spec.devices.requests.push_back(r);
    return c;
  }
  // An ungated pending pod ns/<name> using claim ns/<claim>.
  static api::Pod UngatedPod(const std::string& name, const std::string& claim) {
    api::Pod p = testing::GatedPod(name);
    p.spec.scheduling_gates.clear();
    p.spec.resource_claims[0].resource_claim_template_name.reset();
    p.spec.resource_claims[0].resource_claim_name = claim;
    return p;
  }
  void Store(const api::ResourceClaim& c) {
    cache.UpsertClaim(std::make_shared<const api::ResourceClaim>(c));
  }
  void Store(const api::Pod& p) { cache.UpsertPod(std::make_shared<const api::Pod>(p)); }
  SchedulerHolds Compute() {
    std::string key;
    auto waiting = WaitingForScheduler(cache, cache.SchedulerPods(), &key);
    auto snap = alloc::Snapshot::Build(alloc::Features{}, cache.DeviceClasses(), cache.Slices(),
                                       cache.TaintRules());
    std::vector<const api::ResourceClaim*> allocated;
    auto claims = cache.Claims();
    for (const auto& c : claims) {
      if (c->status.allocation) allocated.push_back(c.get());
    }
    return ComputeSchedulerHolds(cache, Config(), snap, allocated, waiting);
  }
  static std::set<std::string> Devices(const SchedulerHolds& h) {
    std::set<std::string> out;
    for (const auto& c : h.claims) {
      for (const auto& r : c.status.allocation->devices.results)
        out.insert(r.pool + "/" + r.device);
    }
    return out;
  }
  ClusterCache cache;
};

TEST(InSchedulersHandsTest, UnboundUngatedPodsWithDraDemandOnly) {
  api::Pod p = testing::GatedPod("p");
  EXPECT_FALSE(InSchedulersHands(p)) << "draco's own gated pod";
  p.spec.scheduling_gates.clear();
  EXPECT_TRUE(InSchedulersHands(p));
  api::Pod other_gate = p;
  other_gate.spec.scheduling_gates.emplace_back();
  other_gate.spec.scheduling_gates.back().name = "example.com/queue";
  EXPECT_FALSE(InSchedulersHands(other_gate)) << "not scheduled while any gate is on";
  api::Pod bound = p;
  bound.spec.node_name = "n0";
  EXPECT_FALSE(InSchedulersHands(bound));
  api::Pod done = p;
  done.status.phase = "Succeeded";
  EXPECT_FALSE(InSchedulersHands(done));
  api::Pod deleting = p;
  deleting.metadata.deletion_timestamp = "2026-12-07T00:00:00Z";
  EXPECT_FALSE(InSchedulersHands(deleting));
  api::Pod plain = p;
  plain.spec.resource_claims.clear();
  EXPECT_FALSE(InSchedulersHands(plain));
  api::Container c;
  c.name = "c";
  c.resources.limits["example.com/gpu"] = *api::Quantity::Parse("1");
  plain.spec.containers.push_back(c);
  EXPECT_TRUE(InSchedulersHands(plain)) << "extended resource a DeviceClass may serve";
  plain.spec.containers[0].resources.limits = {{"cpu", *api::Quantity::Parse("1")}};
  EXPECT_FALSE(InSchedulersHands(plain));
}

TEST_F(SchedulerHoldsTest, HoldsTheSchedulersFirstFitChoicesOnEveryFittingNode) {
  Store(Claim("c"));
  Store(UngatedPod("p", "c"));
  SchedulerHolds h = Compute();
  // Upstream first fit per node, kRoundsPerNode deep: d0 and d1 of each node.
  EXPECT_EQ(Devices(h), (std::set<std::string>{"n0/d0", "n0/d1", "n1/d0", "n1/d1"}));
  EXPECT_EQ(h.devices, 4u);
  EXPECT_EQ(h.pods, (std::vector<std::string>{"ns/p"}));
  EXPECT_NE(DescribeHolds(h).find("4 device(s) held for 1 pod(s)"), std::string::npos)
      << DescribeHolds(h);
}

TEST_F(SchedulerHoldsTest, LaterPodsHoldPastEarlierOnesAndNodeAffinityLimitsTheNodes) {
  Store(Claim("a"));
  Store(Claim("b"));
  Store(UngatedPod("pa", "a"));
  api::Pod pb = UngatedPod("pb", "b");
  pb.spec.node_selector = {{"kubernetes.io/hostname", "n1"}};
  Store(pb);
  SchedulerHolds h = Compute();
  EXPECT_EQ(Devices(h),
            (std::set<std::string>{"n0/d0", "n0/d1", "n1/d0", "n1/d1", "n1/d2", "n1/d3"}));
  EXPECT_EQ(h.pods, (std::vector<std::string>{"ns/pa", "ns/pb"}));
}

TEST_F(SchedulerHoldsTest, NothingHeldForAllocatedBoundGatedOrUnplaceablePods) {
  api::ResourceClaim done = Claim("done");
  done.status.allocation = api::AllocationResult{};
  done.status.allocation->devices.results.push_back(Result("n0", "d3"));
  Store(done);
  Store(UngatedPod("allocated", "done"));  // released by draco, waits for binding only
  api::Pod bound = UngatedPod("bound", "x");
  bound.spec.node_name = "n0";
  Store(Claim("x"));
  Store(bound);
  Store(testing::GatedPod("gated"));
  Store(Claim("huge", 5));  // no node has five devices: its scheduler cannot place it either
  Store(UngatedPod("unplaceable", "huge"));
  Store(UngatedPod("missing", "not-created-yet"));
  SchedulerHolds h = Compute();
  EXPECT_TRUE(h.claims.empty()) << DescribeHolds(h);
  EXPECT_EQ(DescribeHolds(h), "");
}

TEST_F(SchedulerHoldsTest, ATemplateClaimNotCreatedYetHoldsAsItsTemplateGives) {
  // The scheduler allocates the claim the moment it exists (created by draco or upstream's
  // controller), possibly from a cache behind draco's writes: it holds before that.
  api::ResourceClaimTemplate t = testing::GpuTemplate("gpu");
  cache.UpsertTemplate(std::make_shared<const api::ResourceClaimTemplate>(t));
  api::Pod p = testing::GatedPod("early");
  p.spec.scheduling_gates.clear();
  Store(p);
  SchedulerHolds h = Compute();
  EXPECT_EQ(h.devices, static_cast<size_t>(2 * kRoundsPerNode)) << DescribeHolds(h);
  // Without the template nothing can be planned: nothing held.
  cache.DeleteTemplate("ns", "tmpl");
  EXPECT_TRUE(Compute().claims.empty());
}

TEST_F(SchedulerHoldsTest, DracoNeverAllocatesAHeldDeviceAndGetsItBackWhenThePodIsPlaced) {
  SnapshotAllocator allocator(cache, Config());
  Store(Claim("theirs"));
  Store(UngatedPod("p", "theirs"));
  std::vector<NodePtr> nodes = cache.Nodes();
  std::set<std::string> mine;
  for (int i = 0; i < 4; ++i) {
    auto c = std::make_shared<const api::ResourceClaim>(Claim("mine" + std::to_string(i)));
    Store(*c);
    AllocateResponse r = allocator.Allocate(AllocateRequest{"", {c}, nodes, ""});
    ASSERT_EQ(r.kind, AllocateResponse::Kind::kAllocated) << r.message;
    const auto& d = r.results[0].devices.results[0];
    mine.insert(d.pool + "/" + d.device);
  }
  EXPECT_EQ(mine, (std::set<std::string>{"n0/d2", "n0/d3", "n1/d2", "n1/d3"}));
  EXPECT_EQ(allocator.HeldDevices(), 4u);
  auto fifth = std::make_shared<const api::ResourceClaim>(Claim("mine4"));
  AllocateResponse full = allocator.Allocate(AllocateRequest{"", {fifth}, nodes, ""});
  EXPECT_EQ(full.kind, AllocateResponse::Kind::kUnschedulable);
  EXPECT_NE(full.message.find("held for 1 pod(s) another scheduler is placing (ns/p)"),
            std::string::npos)
      << full.message;
  // The scheduler allocates n0/d0 to the pod's claim and binds it: the other holds end.
  api::ResourceClaim theirs = Claim("theirs");
  theirs.metadata.resource_version = "2";
  theirs.status.allocation = api::AllocationResult{};
  theirs.status.allocation->devices.results.push_back(Result("n0", "d0"));
  Store(theirs);
  api::Pod bound = UngatedPod("p", "theirs");
  bound.metadata.resource_version = "2";
  bound.spec.node_name = "n0";
  Store(bound);
  AllocateResponse again = allocator.Allocate(AllocateRequest{"", {fifth}, nodes, ""});
  ASSERT_EQ(again.kind, AllocateResponse::Kind::kAllocated) << again.message;
  const auto& d = again.results[0].devices.results[0];
  EXPECT_NE(d.pool + "/" + d.device, "n0/d0");
  EXPECT_EQ(allocator.HeldDevices(), 0u);
}

}  // namespace
}  // namespace draco::reconcilers
