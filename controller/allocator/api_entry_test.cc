// The public, api-typed entry points (allocator.h): API objects in, api::AllocationResult out,
// conversion inside; Snapshot::Build with a previous snapshot reuses unchanged slices'
// conversions; Commit(claim, result) after an Allocate; claims defaulted or taken as given.
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "controller/allocator/allocator.h"

namespace draco::alloc {
namespace {

using SlicePtr = std::shared_ptr<const api::ResourceSlice>;

// Slice "slice-<node>" of driver gpu.example.com, pool <node>, one device per name, local to
// <node>.
SlicePtr NodeSlice(const std::string& node, std::vector<std::string> devices) {
  auto s = std::make_shared<api::ResourceSlice>();
  s->metadata.name = "slice-" + node;
  s->spec.driver = "gpu.example.com";
  s->spec.pool.name = node;
  s->spec.pool.resource_slice_count = 1;
  s->spec.node_name = node;
  for (auto& d : devices) {
    api::Device dev;
    dev.name = std::move(d);
    s->spec.devices.push_back(std::move(dev));
  }
  return s;
}

api::DeviceClass GpuClass() {
  api::DeviceClass c;
  c.metadata.name = "gpu";
  api::DeviceSelector sel;
  sel.cel = api::CELDeviceSelector{"device.driver == \"gpu.example.com\"", {}};
  c.spec.selectors.push_back(sel);
  return c;
}

// Claim `name` asking for one "gpu" device, as written (no allocationMode, no count).
api::ResourceClaim Claim(const std::string& name) {
  api::ResourceClaim c;
  c.metadata.name = name;
  c.metadata.namespace_ = "ns";
  api::DeviceRequest r;
  r.name = "gpu";
  r.exactly.emplace();
  r.exactly->device_class_name = "gpu";
  c.spec.devices.requests.push_back(r);
  return c;
}

api::Node Node(const std::string& name) {
  api::Node n;
  n.metadata.name = name;
  return n;
}

Allocator::Config Cfg() {
  Allocator::Config cfg;
  cfg.selectors = NewCelSelectorCompiler();
  return cfg;
}

std::string Picked(const Outcome& o) {
  if (o.kind != Outcome::Kind::kAllocated) return std::string(OutcomeKindName(o.kind));
  const auto& d = o.results.at(0).devices.results.at(0);
  return o.node + ":" + d.pool + "/" + d.device;
}

TEST(ApiEntryTest, BuildReusesTheConversionOfTheSameSliceObjects) {
  SlicePtr n0 = NodeSlice("n0", {"gpu-0"}), n1 = NodeSlice("n1", {"gpu-0"});
  auto first = Snapshot::Build(Features{}, {GpuClass()}, {n0, n1}, {});
  ASSERT_EQ(first->num_slices(), 2u);
  EXPECT_EQ(first->num_devices(), 2);
  // n1 changed (a new object): only it is converted again.
  SlicePtr n1b = NodeSlice("n1", {"gpu-0", "gpu-1"});
  auto second = Snapshot::Build(Features{}, {GpuClass()}, {n0, n1b}, {}, first.get());
  EXPECT_TRUE(second->SharesSlice(*first, 0));
  EXPECT_FALSE(second->SharesSlice(*first, 1));
  EXPECT_EQ(second->num_devices(), 3);
  // Without a previous snapshot every slice is converted.
  auto fresh = Snapshot::Build(Features{}, {GpuClass()}, {n0, n1b}, {});
  EXPECT_FALSE(fresh->SharesSlice(*second, 0));
  // A snapshot derived with WithSlice converts the new slice only.
  auto derived = second->WithSlice(*NodeSlice("n2", {"gpu-0"}));
  EXPECT_TRUE(derived->SharesSlice(*second, 0));
  EXPECT_EQ(derived->num_devices(), 4);
}

TEST(ApiEntryTest, AllocatesApiClaimsAndCommitsTheirResults) {
  SlicePtr n0 = NodeSlice("n0", {"gpu-0"}), n1 = NodeSlice("n1", {"gpu-0"});
  api::Node node0 = Node("n0"), node1 = Node("n1");
  auto a = Allocator::Create(Cfg(), {GpuClass()}, {n0, n1}, {}, {});
  ASSERT_TRUE(a.ok()) << a.status();
  api::ResourceClaim c1 = Claim("c1"), c2 = Claim("c2"), c3 = Claim("c3");
  Outcome o1 = (*a)->AllocateOnAnyNode({&node0, &node1}, {&c1});
  EXPECT_EQ(Picked(o1), "n0:n0/gpu-0");
  EXPECT_EQ(o1.results[0].devices.results[0].request, "gpu");
  (*a)->Commit(c1, o1.results[0]);
  Outcome o2 = (*a)->AllocateOnAnyNode({&node0, &node1}, {&c2});
  EXPECT_EQ(Picked(o2), "n1:n1/gpu-0");
  (*a)->Commit(c2, o2.results[0]);
  EXPECT_EQ(Picked((*a)->AllocateOnAnyNode({&node0, &node1}, {&c3})), "unsatisfiable");
  // Another allocator never saw c1: the result is converted there, and counted all the same.
  auto b = Allocator::Create(Cfg(), {GpuClass()}, {n0, n1}, {}, {});
  ASSERT_TRUE(b.ok()) << b.status();
  (*b)->Commit(c1, o1.results[0]);
  EXPECT_EQ(Picked((*b)->AllocateOnAnyNode({&node0, &node1}, {&c3})), "n1:n1/gpu-0");
  // Explain takes the same api objects.
  Explanation e = (*a)->Explain(node0, {&c3});
  EXPECT_EQ(e.node, "n0");
  EXPECT_EQ(e.outcome.kind, Outcome::Kind::kUnsatisfiable);
}

TEST(ApiEntryTest, AllocatedClaimsAndCommittedClaimsHoldTheirDevices) {
  SlicePtr n0 = NodeSlice("n0", {"gpu-0", "gpu-1"});
  api::Node node0 = Node("n0");
  api::ResourceClaim held = Claim("held");
  held.status.allocation.emplace();
  api::DeviceRequestAllocationResult r;
  r.request = "gpu";
  r.driver = "gpu.example.com";
  r.pool = "n0";
  r.device = "gpu-0";
  held.status.allocation->devices.results.push_back(r);
  auto snap = Snapshot::Build(Features{}, {GpuClass()}, {n0}, {});
  auto a = Allocator::Create(Cfg(), snap, {&held});
  ASSERT_TRUE(a.ok()) << a.status();
  api::ResourceClaim c = Claim("c");
  EXPECT_EQ(Picked((*a)->Allocate(node0, {&c})), ":n0/gpu-1");
  // An allocation observed later (Commit with the claim's status.allocation).
  api::ResourceClaim other = held;
  other.metadata.name = "other";
  other.status.allocation->devices.results[0].device = "gpu-1";
  auto b = Allocator::Create(Cfg(), snap, {&held});
  ASSERT_TRUE(b.ok()) << b.status();
  (*b)->Commit(other);
  EXPECT_EQ(Picked((*b)->Allocate(node0, {&c})), "unsatisfiable");
}

TEST(ApiEntryTest, ClaimsAreDefaultedUnlessTakenAsGiven) {
  SlicePtr n0 = NodeSlice("n0", {"gpu-0"});
  api::Node node0 = Node("n0");
  api::ResourceClaim c = Claim("c");
  Allocator::Config cfg = Cfg();
  auto defaulted = Allocator::Create(cfg, {GpuClass()}, {n0}, {}, {});
  ASSERT_TRUE(defaulted.ok());
  EXPECT_EQ(Picked((*defaulted)->Allocate(node0, {&c})), ":n0/gpu-0");
  cfg.default_claims = false;
  auto given = Allocator::Create(cfg, {GpuClass()}, {n0}, {}, {});
  ASSERT_TRUE(given.ok());
  Outcome o = (*given)->Allocate(node0, {&c});
  EXPECT_EQ(o.kind, Outcome::Kind::kError);
  EXPECT_NE(o.message.find("unsupported count mode"), std::string::npos) << o.message;
}

TEST(ApiEntryTest, InvalidPoliciesAreRejectedByCreate) {
  api::AllocationPolicy p;
  p.metadata.name = "p";
  EXPECT_FALSE(ValidatePolicy(p).ok());
  Allocator::Config cfg = Cfg();
  cfg.policies.push_back(p);
  auto a = Allocator::Create(cfg, {GpuClass()}, {}, {}, {});
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().message(), "AllocationPolicy p: spec is required");
  p.spec.emplace();
  p.spec->device_class_selector.emplace();
  p.spec->device_class_selector->names = std::vector<std::string>{"gpu"};
  p.spec->strategy = "BinPack";
  EXPECT_TRUE(ValidatePolicy(p).ok());
}

}  // namespace
}  // namespace draco::alloc
