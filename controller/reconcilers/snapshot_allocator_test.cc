#include "controller/reconcilers/snapshot_allocator.h"

#include <set>
#include <utility>

#include <gtest/gtest.h>

#include "controller/reconcilers/testing_groups.h"

namespace draco::reconcilers {
namespace {

class SnapshotAllocatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cache.UpsertClass(testing::GpuClass("device.driver == \"drv\""));
    for (const std::string node : {"n0", "n1"}) {
      cache.UpsertSlice(
          MakeSliceEntry(std::make_shared<const api::ResourceSlice>(testing::NodeSlice(node, 2))));
      api::Node n;
      n.metadata.name = node;
      n.metadata.labels = {{"kubernetes.io/hostname", node}};
      nodes.push_back(std::make_shared<const api::Node>(n));
    }
  }
  ClaimPtr Claim(const std::string& name, int rv = 1) {
    api::ResourceClaim c;
    c.metadata.name = name;
    c.metadata.namespace_ = "ns";
    c.metadata.uid = "uid-" + name;
    c.metadata.resource_version = std::to_string(rv);
    api::DeviceRequest r;
    r.name = "r";
    r.exactly = api::ExactDeviceRequest{};
    r.exactly->device_class_name = "gpu";
    c.spec.devices.requests.push_back(r);
    return std::make_shared<const api::ResourceClaim>(c);
  }
  // Allocates `name` and records it in the cache as the informer would.
  AllocateResponse AllocateAndStore(const std::string& name) {
    ClaimPtr c = Claim(name);
    cache.UpsertClaim(c);
    AllocateResponse r = allocator.Allocate(AllocateRequest{"", {c}, nodes, ""});
    if (r.kind == AllocateResponse::Kind::kAllocated) {
      api::ResourceClaim stored = *c;
      stored.metadata.resource_version = "2";
      stored.status.allocation = r.results[0];
      cache.UpsertClaim(std::make_shared<const api::ResourceClaim>(stored));
      allocator.Settle({c}, /*written=*/true);
    }
    return r;
  }
  // Allocates `name` without writing it anywhere: the allocation is in flight.
  std::pair<ClaimPtr, std::string> AllocateInFlight(const std::string& name) {
    ClaimPtr c = Claim(name);
    cache.UpsertClaim(c);
    AllocateResponse r = allocator.Allocate(AllocateRequest{"", {c}, nodes, ""});
    EXPECT_EQ(r.kind, AllocateResponse::Kind::kAllocated) << r.message;
    if (r.kind != AllocateResponse::Kind::kAllocated) return {c, ""};
    const auto& d = r.results[0].devices.results[0];
    return {c, d.pool + "/" + d.device};
  }
  static std::string Device(const AllocateResponse& r) {
    const auto& d = r.results.at(0).devices.results.at(0);
    return d.pool + "/" + d.device;
  }
  ClusterCache cache;
  std::vector<NodePtr> nodes;
  SnapshotAllocator allocator{cache, [] {
                                alloc::Allocator::Config c;
                                c.selectors = alloc::NewCelSelectorCompiler();
                                return c;
                              }()};
};

TEST_F(SnapshotAllocatorTest, NeverHandsOutADeviceTwiceAndReusesFreedOnes) {
  std::set<std::string> devices;
  for (int i = 0; i < 4; ++i) {
    auto r = AllocateAndStore("c" + std::to_string(i));
    ASSERT_EQ(r.kind, AllocateResponse::Kind::kAllocated) << r.message;
    const auto& d = r.results[0].devices.results[0];
    EXPECT_TRUE(devices.insert(d.pool + "/" + d.device).second) << d.pool << "/" << d.device;
    ASSERT_TRUE(r.results[0].node_selector.has_value());
  }
  auto full = AllocateAndStore("c4");
  EXPECT_EQ(full.kind, AllocateResponse::Kind::kUnschedulable);
  EXPECT_FALSE(full.message.empty());
  EXPECT_EQ(allocator.rebuilds(), 1);
  // Deallocate c1: the next attempt fails on the stale snapshot, rebuilds once and succeeds.
  auto c1 = cache.GetClaim("ns", "c1");
  api::ResourceClaim freed = *c1;
  freed.metadata.resource_version = "3";
  freed.status.allocation.reset();
  cache.UpsertClaim(std::make_shared<const api::ResourceClaim>(freed));
  auto again = AllocateAndStore("c5");
  ASSERT_EQ(again.kind, AllocateResponse::Kind::kAllocated) << again.message;
  EXPECT_EQ(allocator.rebuilds(), 2);
}

// A rebuild (here: forced by a deallocation after a failed attempt) reads allocations from the
// cache, where an in-flight one is not visible yet; it must still count.
TEST_F(SnapshotAllocatorTest, InFlightAllocationsSurviveARebuild) {
  auto [a, a_dev] = AllocateInFlight("a");
  std::set<std::string> used = {a_dev};
  for (const char* n : {"b", "c", "d"}) {
    auto r = AllocateAndStore(n);
    ASSERT_EQ(r.kind, AllocateResponse::Kind::kAllocated) << r.message;
    EXPECT_TRUE(used.insert(Device(r)).second) << Device(r);
  }
  // b is deallocated; the stale snapshot fails, is rebuilt, and e gets b's device.
  api::ResourceClaim freed = *cache.GetClaim("ns", "b");
  freed.metadata.resource_version = "3";
  const auto& b_res = freed.status.allocation->devices.results.at(0);
  const std::string b_dev = b_res.pool + "/" + b_res.device;
  freed.status.allocation.reset();
  cache.UpsertClaim(std::make_shared<const api::ResourceClaim>(freed));
  const int64_t rebuilds = allocator.rebuilds();
  auto e = AllocateAndStore("e");
  ASSERT_EQ(e.kind, AllocateResponse::Kind::kAllocated) << e.message;
  EXPECT_EQ(allocator.rebuilds(), rebuilds + 1);
  EXPECT_EQ(Device(e), b_dev);
  EXPECT_NE(Device(e), a_dev);
  // a (still in flight), c, d, e hold all four devices.
  EXPECT_EQ(AllocateAndStore("f").kind, AllocateResponse::Kind::kUnschedulable);
  // Once a's write is in the cache and settled, nothing changes; a is still counted.
  api::ResourceClaim written = *a;
  written.metadata.resource_version = "2";
  written.status.allocation = api::AllocationResult{};
  api::DeviceRequestAllocationResult res;
  res.request = "r";
  res.driver = "drv";
  res.pool = a_dev.substr(0, a_dev.find('/'));
  res.device = a_dev.substr(a_dev.find('/') + 1);
  written.status.allocation->devices.results.push_back(res);
  cache.UpsertClaim(std::make_shared<const api::ResourceClaim>(written));
  allocator.Settle({a}, /*written=*/true);
  EXPECT_EQ(AllocateAndStore("g").kind, AllocateResponse::Kind::kUnschedulable);
}

// A failed write frees the devices of that attempt only, not those of other in-flight attempts.
TEST_F(SnapshotAllocatorTest, FailedWriteFreesOnlyItsOwnDevices) {
  auto [a, a_dev] = AllocateInFlight("a");
  auto [b, b_dev] = AllocateInFlight("b");
  ASSERT_NE(a_dev, b_dev);
  allocator.Settle({b}, /*written=*/false);  // b's write failed: rebuild on the next call
  std::set<std::string> got;
  for (const char* n : {"c", "d", "e"}) {
    auto r = AllocateAndStore(n);
    ASSERT_EQ(r.kind, AllocateResponse::Kind::kAllocated) << n << ": " << r.message;
    EXPECT_NE(Device(r), a_dev) << n;
    got.insert(Device(r));
  }
  EXPECT_EQ(got.size(), 3u);
  EXPECT_TRUE(got.count(b_dev)) << "b's device was not freed";
  EXPECT_EQ(AllocateAndStore("f").kind, AllocateResponse::Kind::kUnschedulable);
}

TEST_F(SnapshotAllocatorTest, AllocationsByOthersAreCommittedFromTheCache) {
  ASSERT_EQ(AllocateAndStore("mine").kind, AllocateResponse::Kind::kAllocated);
  // kube-scheduler allocates three devices behind draco's back.
  int n = 0;
  for (const auto& [pool, dev] : std::vector<std::pair<std::string, std::string>>{
           {"n0", "d0"}, {"n0", "d1"}, {"n1", "d0"}, {"n1", "d1"}}) {
    if (!cache.ClaimsUsingDevice({"drv", pool, dev}).empty()) continue;
    if (n == 3) break;
    api::ResourceClaim c = *Claim("foreign" + std::to_string(n++));
    c.status.allocation = api::AllocationResult{};
    api::DeviceRequestAllocationResult res;
    res.request = "r";
    res.driver = "drv";
    res.pool = pool;
    res.device = dev;
    c.status.allocation->devices.results.push_back(res);
    cache.UpsertClaim(std::make_shared<const api::ResourceClaim>(c));
  }
  EXPECT_EQ(AllocateAndStore("late").kind, AllocateResponse::Kind::kUnschedulable);
  EXPECT_EQ(allocator.rebuilds(), 1);  // incremental, no rebuild needed
}

TEST_F(SnapshotAllocatorTest, BadClassSelectorIsAFatalErrorWithTheCelMessage) {
  cache.UpsertClass(testing::GpuClass("device.attributes[\"drv\"].model == \"x\""));
  auto r = AllocateAndStore("c");
  EXPECT_EQ(r.kind, AllocateResponse::Kind::kError);
  EXPECT_NE(r.message.find("model"), std::string::npos) << r.message;
}

// AllocationPolicy `name` governing class "gpu".
api::AllocationPolicy GpuPolicy(const std::string& name, const std::string& strategy) {
  api::AllocationPolicy p;
  p.metadata.name = name;
  p.spec.emplace();
  p.spec->device_class_selector.emplace();
  p.spec->device_class_selector->names = std::vector<std::string>{"gpu"};
  p.spec->strategy = strategy;
  return p;
}

api::AllocationPolicy Quota(int64_t max_devices) {
  api::AllocationPolicy p = GpuPolicy("quota", "");
  api::NamespaceLimit l;
  l.namespace_ = "ns";
  l.max_devices = max_devices;
  p.spec->namespace_limits.push_back(l);
  return p;
}

TEST_F(SnapshotAllocatorTest, PolicyLimitsCountOwnInFlightAndObservedAllocations) {
  cache.UpsertPolicy(Quota(2));
  // An allocation made by someone else counts once observed in the cache.
  api::ResourceClaim foreign = *Claim("foreign");
  foreign.status.allocation = api::AllocationResult{};
  api::DeviceRequestAllocationResult res;
  res.request = "r";
  res.driver = "drv";
  res.pool = "n1";
  res.device = "d1";
  foreign.status.allocation->devices.results.push_back(res);
  cache.UpsertClaim(std::make_shared<const api::ResourceClaim>(foreign));
  // Own allocation: in flight (not yet in the cache) must count as well.
  ClaimPtr a = Claim("a");
  auto ra = allocator.Allocate(AllocateRequest{"", {a}, nodes, ""});
  ASSERT_EQ(ra.kind, AllocateResponse::Kind::kAllocated) << ra.message;
  auto rb = allocator.Allocate(AllocateRequest{"", {Claim("b")}, nodes, ""});
  EXPECT_EQ(rb.kind, AllocateResponse::Kind::kUnschedulable);
  EXPECT_NE(rb.message.find("AllocationPolicy quota"), std::string::npos) << rb.message;
  EXPECT_NE(rb.message.find("namespace ns"), std::string::npos) << rb.message;
}

TEST_F(SnapshotAllocatorTest, PolicyChangesRebuildTheSnapshot) {
  cache.UpsertPolicy(Quota(1));
  ASSERT_EQ(AllocateAndStore("a").kind, AllocateResponse::Kind::kAllocated);
  EXPECT_EQ(AllocateAndStore("b").kind, AllocateResponse::Kind::kUnschedulable);
  int64_t before = allocator.rebuilds();
  cache.UpsertPolicy(Quota(3));  // raised: b now fits
  EXPECT_EQ(AllocateAndStore("b").kind, AllocateResponse::Kind::kAllocated);
  EXPECT_EQ(allocator.rebuilds(), before + 1);
  cache.DeletePolicy("quota");  // no policy: no limit at all
  EXPECT_EQ(AllocateAndStore("c").kind, AllocateResponse::Kind::kAllocated);
  EXPECT_EQ(AllocateAndStore("d").kind, AllocateResponse::Kind::kAllocated);
}

TEST_F(SnapshotAllocatorTest, BinPackPolicyKeepsFillingTheUsedNode) {
  cache.UpsertPolicy(GpuPolicy("pack", "BinPack"));
  // Without a policy the rotating start spreads pods over n0 and n1; BinPack fills one node.
  auto r1 = AllocateAndStore("a");
  auto r2 = AllocateAndStore("b");
  ASSERT_EQ(r1.kind, AllocateResponse::Kind::kAllocated);
  ASSERT_EQ(r2.kind, AllocateResponse::Kind::kAllocated);
  EXPECT_EQ(r1.node, r2.node);
}

}  // namespace
}  // namespace draco::reconcilers
