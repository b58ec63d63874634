#include "controller/reconcilers/cluster_cache.h"

#include <atomic>
#include <thread>

#include <gtest/gtest.h>

namespace draco::reconcilers {
namespace {

ClaimPtr Claim(const std::string& name, const std::string& rv,
               std::vector<std::string> devices = {}, bool shared = false,
               const std::string& owner_uid = "") {
  api::ResourceClaim c;
  c.metadata.name = name;
  c.metadata.namespace_ = "ns";
  c.metadata.uid = "uid-" + name;
  c.metadata.resource_version = rv;
  if (!owner_uid.empty()) {
    api::OwnerReference o;
    o.api_version = "v1";
    o.kind = "Pod";
    o.name = "pod";
    o.uid = owner_uid;
    o.controller = true;
    c.metadata.owner_references.push_back(o);
    c.metadata.annotations[std::string(kPodClaimNameAnnotation)] = "gpu";
  }
  if (!devices.empty()) {
    c.status.allocation = api::AllocationResult{};
    for (const auto& d : devices) {
      api::DeviceRequestAllocationResult r;
      r.driver = "drv";
      r.pool = "node-0";
      r.device = d;
      if (shared) r.share_id = "s-" + name;
      c.status.allocation->devices.results.push_back(r);
    }
  }
  return std::make_shared<const api::ResourceClaim>(c);
}

// Found by e2e/chaos/soak.sh: the answer to draco's last write of a claim (the finalizer
// removal) arrived after the watch had delivered the claim's deletion, and the cache kept the
// claim forever, its devices allocated for draco's allocator (64 devices after 37 minutes).
TEST(ClusterCacheTest, AnswerAfterTheWatchedDeletionDoesNotBringTheClaimBack) {
  ClusterCache cache;
  cache.UpsertClaim(Claim("a", "10", {"d0"}));
  cache.DeleteClaim("ns", "a");                 // the watch: the garbage collector deleted it
  cache.AssumeClaim(Claim("a", "11", {"d0"}));  // then the answer to our update
  EXPECT_EQ(cache.GetClaim("ns", "a"), nullptr);
  EXPECT_TRUE(cache.Claims().empty());
  EXPECT_TRUE(cache.ClaimsUsingDevice({"drv", "node-0", "d0"}).empty());
  // A new claim of the same name (another UID) is stored as usual.
  api::ResourceClaim again = *Claim("a", "12");
  again.metadata.uid = "uid-a-2";
  cache.AssumeClaim(std::make_shared<const api::ResourceClaim>(again));
  ASSERT_NE(cache.GetClaim("ns", "a"), nullptr);
}

TEST(ClusterCacheTest, AnswerThatRemovedTheLastFinalizerOfADeletedClaimRemovesIt) {
  ClusterCache cache;
  api::ResourceClaim deleting = *Claim("a", "10", {"d0"});
  deleting.metadata.deletion_timestamp = "2026-01-01T00:00:00Z";
  deleting.metadata.finalizers = {std::string(kDeleteProtectionFinalizer)};
  cache.UpsertClaim(std::make_shared<const api::ResourceClaim>(deleting));
  api::ResourceClaim last = deleting;
  last.metadata.finalizers.clear();
  last.metadata.resource_version = "11";
  cache.AssumeClaim(std::make_shared<const api::ResourceClaim>(last));
  EXPECT_EQ(cache.GetClaim("ns", "a"), nullptr);
  EXPECT_TRUE(cache.ClaimsUsingDevice({"drv", "node-0", "d0"}).empty());
  // The watch's late update of that version does not resurrect it for long: its deletion follows.
  cache.UpsertClaim(std::make_shared<const api::ResourceClaim>(last));
  cache.DeleteClaim("ns", "a");
  EXPECT_TRUE(cache.Claims().empty());
}

TEST(ClusterCacheTest, AnswerAfterTheWatchedDeletionDoesNotBringThePodBack) {
  ClusterCache cache;
  api::Pod p;
  p.metadata.name = "p";
  p.metadata.namespace_ = "ns";
  p.metadata.uid = "uid-p";
  p.metadata.resource_version = "10";
  p.spec.node_name = "node-0";
  cache.UpsertPod(std::make_shared<const api::Pod>(p));
  EXPECT_EQ(cache.FeasibilitySnapshot("").pods.size(), 1u);
  cache.DeletePod("ns", "p");
  p.metadata.resource_version = "11";
  cache.AssumePod(std::make_shared<const api::Pod>(p));
  EXPECT_EQ(cache.GetPod("ns", "p"), nullptr);
  EXPECT_TRUE(cache.FeasibilitySnapshot("").pods.empty());  // not placed on node-0 any more
}

TEST(ClusterCacheTest, WaitClaimsObservedIsWokenByItsOwnClaimsOnly) {
  ClusterCache cache;
  FakeClock clock;
  for (const char* n : {"a", "b", "c"}) {
    cache.UpsertClaim(Claim(n, "10"));
    cache.AssumeClaim(Claim(n, "20", {std::string("d-") + n}));
  }
  std::atomic<int> ab{0}, c{0};  // 0 waiting, 1 observed, 2 timed out
  std::thread wait_ab([&] {
    ab = cache.WaitClaimsObserved({cache.GetClaim("ns", "a"), cache.GetClaim("ns", "b")}, clock,
                                  clock.Now() + std::chrono::seconds(10))
             ? 1
             : 2;
  });
  std::thread wait_c([&] {
    c = cache.WaitClaimsObserved({cache.GetClaim("ns", "c")}, clock,
                                 clock.Now() + std::chrono::seconds(10))
            ? 1
            : 2;
  });
  while (clock.Waiters() < 2) std::this_thread::yield();
  cache.UpsertClaim(Claim("a", "20", {"d-a"}));  // only half of what wait_ab needs
  cache.UpsertClaim(Claim("b", "15"));           // an older version: not yet
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(ab.load(), 0);
  EXPECT_EQ(clock.Waiters(), 2);
  cache.UpsertClaim(Claim("b", "20", {"d-b"}));
  wait_ab.join();
  EXPECT_EQ(ab.load(), 1);
  EXPECT_EQ(c.load(), 0);  // nobody delivered c
  clock.Step(std::chrono::seconds(11));
  wait_c.join();
  EXPECT_EQ(c.load(), 2);
  // Nothing is left registered: a later event for c finds no waiter and a new wait returns at once.
  cache.UpsertClaim(Claim("c", "20", {"d-c"}));
  EXPECT_TRUE(cache.WaitClaimsObserved({cache.GetClaim("ns", "c")}, clock, clock.Now()));
}

TEST(ClusterCacheTest, AssumedNewerVersionWinsOverOlderInformerEvent) {
  ClusterCache cache;
  cache.AssumeClaim(Claim("a", "20", {"d0"}));
  EXPECT_FALSE(cache.UpsertClaim(Claim("a", "10")));
  EXPECT_TRUE(cache.GetClaim("ns", "a")->status.allocation.has_value());
  EXPECT_TRUE(cache.UpsertClaim(Claim("a", "20", {"d0"})));
  EXPECT_TRUE(cache.UpsertClaim(Claim("a", "21")));
  EXPECT_FALSE(cache.GetClaim("ns", "a")->status.allocation.has_value());
  EXPECT_EQ(cache.Generations().deallocations, 1u);
}

TEST(ClusterCacheTest, ClaimObservedOnlyOnceTheWatchDeliveredTheAssumedVersion) {
  ClusterCache cache;
  EXPECT_TRUE(cache.UpsertClaim(Claim("a", "10")));
  EXPECT_TRUE(cache.ClaimObserved(*cache.GetClaim("ns", "a")));
  cache.AssumeClaim(Claim("a", "20", {"d0"}));  // draco's own write
  EXPECT_FALSE(cache.ClaimObserved(*cache.GetClaim("ns", "a")));
  EXPECT_FALSE(cache.UpsertClaim(Claim("a", "15")));  // an older event: still not observed
  EXPECT_FALSE(cache.ClaimObserved(*cache.GetClaim("ns", "a")));
  EXPECT_TRUE(cache.UpsertClaim(Claim("a", "20", {"d0"})));
  EXPECT_TRUE(cache.ClaimObserved(*cache.GetClaim("ns", "a")));
  cache.DeleteClaim("ns", "a");
  EXPECT_FALSE(cache.ClaimObserved(*Claim("a", "20")));
}

TEST(ClusterCacheTest, AllocatedViewIsIncrementalAndAuditsDoubleAllocation) {
  ClusterCache cache;
  cache.UpsertClaim(Claim("a", "1", {"d0", "d1"}));
  cache.UpsertClaim(Claim("b", "2", {"d2"}));
  EXPECT_EQ(cache.ClaimsUsingDevice({"drv", "node-0", "d1"}), std::vector<std::string>{"ns/a"});
  EXPECT_TRUE(cache.DoubleAllocatedDevices().empty());
  cache.UpsertClaim(Claim("c", "3", {"d1"}));
  auto doubles = cache.DoubleAllocatedDevices();
  ASSERT_EQ(doubles.size(), 1u);
  EXPECT_EQ(doubles[0], "drv/node-0/d1: ns/a, ns/c");
  cache.DeleteClaim("ns", "c");
  EXPECT_TRUE(cache.DoubleAllocatedDevices().empty());
  // Shared devices (shareID on every result) are not double allocations.
  cache.UpsertClaim(Claim("s1", "4", {"d9"}, true));
  cache.UpsertClaim(Claim("s2", "5", {"d9"}, true));
  EXPECT_TRUE(cache.DoubleAllocatedDevices().empty());
  // Re-upserting a claim does not duplicate its uses.
  cache.UpsertClaim(Claim("a", "6", {"d0", "d1"}));
  EXPECT_EQ(cache.ClaimsUsingDevice({"drv", "node-0", "d0"}).size(), 1u);
}

TEST(ClusterCacheTest, OwnerIndexAndGeneratedClaimLookup) {
  ClusterCache cache;
  cache.UpsertClaim(Claim("gen", "1", {}, false, "pod-uid"));
  cache.UpsertClaim(Claim("other", "1"));
  EXPECT_EQ(cache.ClaimsOwnedByPod("pod-uid").size(), 1u);
  EXPECT_EQ(cache.FindGeneratedClaim("pod-uid", "gpu")->metadata.name, "gen");
  EXPECT_EQ(cache.FindGeneratedClaim("pod-uid", "other"), nullptr);
  cache.DeleteClaim("ns", "gen");
  EXPECT_TRUE(cache.ClaimsOwnedByPod("pod-uid").empty());
}

TEST(ClusterCacheTest, PodsByClaimAndNodeUsage) {
  ClusterCache cache;
  api::Pod p;
  p.metadata.name = "p";
  p.metadata.namespace_ = "ns";
  p.metadata.uid = "u";
  api::PodResourceClaim pc;
  pc.name = "x";
  pc.resource_claim_name = "shared";
  p.spec.resource_claims.push_back(pc);
  api::Container c;
  c.resources.requests["cpu"] = *api::Quantity::Parse("1");
  p.spec.containers.push_back(c);
  cache.UpsertPod(std::make_shared<const api::Pod>(p));
  EXPECT_EQ(cache.PodsForClaim("ns", "shared").size(), 1u);
  // Placed pods as the filters see them: on the node draco nominated, then where it is bound;
  // a finished pod occupies nothing. Requests are precomputed per pod version.
  auto placed = [&cache]() {
    feasibility::Snapshot s = cache.FeasibilitySnapshot("other/pod");
    EXPECT_LE(s.pods.size(), 1u);
    return s.pods;
  };
  EXPECT_TRUE(placed().empty());
  cache.NominatePod("ns/p", "node-0");
  ASSERT_EQ(placed().size(), 1u);
  EXPECT_EQ(placed()[0].node, "node-0");
  ASSERT_NE(placed()[0].requests, nullptr);
  EXPECT_EQ(placed()[0].requests->milli_cpu, 1000);
  EXPECT_TRUE(cache.FeasibilitySnapshot("ns/p").pods.empty());  // the pod being scheduled
  p.spec.node_name = "node-1";
  p.spec.containers[0].resources.requests["cpu"] = *api::Quantity::Parse("2");
  p.metadata.resource_version = "2";
  cache.UpsertPod(std::make_shared<const api::Pod>(p));
  ASSERT_EQ(placed().size(), 1u);  // bound: counted once, nomination gone
  EXPECT_EQ(placed()[0].node, "node-1");
  EXPECT_EQ(placed()[0].requests->milli_cpu, 2000);
  p.spec.node_name = "";
  p.metadata.resource_version = "3";
  cache.UpsertPod(std::make_shared<const api::Pod>(p));
  EXPECT_TRUE(placed().empty());  // the nomination was dropped when the pod was bound
  p.spec.node_name = "node-1";
  p.status.phase = "Succeeded";
  p.metadata.resource_version = "4";
  cache.UpsertPod(std::make_shared<const api::Pod>(p));
  EXPECT_TRUE(placed().empty());
  cache.DeletePod("ns", "p");
  EXPECT_TRUE(cache.PodsForClaim("ns", "shared").empty());
}

TEST(ClusterCacheTest, AllocationLogFeedsIncrementalConsumers) {
  ClusterCache cache;
  uint64_t end = 0;
  cache.UpsertClaim(Claim("a", "1"));
  EXPECT_TRUE(cache.AllocationsSince(0, &end).empty());
  cache.UpsertClaim(Claim("a", "2", {"d0"}));
  cache.UpsertClaim(Claim("b", "3", {"d1"}));
  auto got = cache.AllocationsSince(0, &end);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1]->metadata.name, "b");
  EXPECT_TRUE(cache.AllocationsSince(end, &end).empty());
}

TEST(ClusterCacheTest, InventoryCountsPoolsAndClaims) {
  ClusterCache cache;
  SliceEntry s;
  s.name = "s";
  s.driver = "drv";
  s.pool = "node-0";
  s.node_name = "node-0";
  s.device_count = 8;
  cache.UpsertSlice(s);
  cache.UpsertClaim(Claim("a", "1", {"d0", "d1"}, false, "pod"));
  auto inv = cache.Inventory();
  ASSERT_EQ(inv.pools.size(), 1u);
  EXPECT_EQ(inv.pools[0].allocated, 2);
  EXPECT_EQ(inv.pools[0].free, 6);
  EXPECT_EQ(inv.claims_allocated_template, 1);
}

// Counters may be declared in one slice of a pool and consumed by devices of another (v1
// partitionable devices); a device shared by two claims consumes once.
TEST(ClusterCacheTest, InventoryCountsCounterUsePerPool) {
  ClusterCache cache;
  auto counter = [](const char* v) { return api::Counter{*api::Quantity::Parse(v), {}}; };
  auto counters = std::make_shared<api::ResourceSlice>();
  counters->metadata.name = "counters";
  counters->spec.driver = "drv";
  counters->spec.pool.name = "node-0";
  counters->spec.node_name = "node-0";
  api::CounterSet set;
  set.name = "gpu-0";
  set.counters = {{"memory", counter("80Gi")}, {"sm", counter("100")}};
  counters->spec.shared_counters.push_back(set);
  cache.UpsertSlice(MakeSliceEntry(counters));
  auto parts = std::make_shared<api::ResourceSlice>();
  parts->metadata.name = "parts";
  parts->spec.driver = "drv";
  parts->spec.pool.name = "node-0";
  parts->spec.node_name = "node-0";
  for (const char* d : {"d0", "d1", "d2"}) {
    api::Device dev;
    dev.name = d;
    api::DeviceCounterConsumption use;
    use.counter_set = "gpu-0";
    use.counters = {{"memory", counter("20Gi")}, {"sm", counter("30")}};
    dev.consumes_counters.push_back(use);
    parts->spec.devices.push_back(dev);
  }
  cache.UpsertSlice(MakeSliceEntry(parts));
  cache.UpsertClaim(Claim("a", "1", {"d0", "d1"}, true));
  cache.UpsertClaim(Claim("b", "2", {"d1"}, true));
  auto inv = cache.Inventory();
  ASSERT_EQ(inv.pools.size(), 1u);
  EXPECT_EQ(inv.pools[0].allocated, 2);
  EXPECT_EQ(inv.pools[0].free, 1);
  ASSERT_EQ(inv.pools[0].counters.size(), 2u);
  const auto& mem = inv.pools[0].counters[0];
  EXPECT_EQ(mem.counter_set, "gpu-0");
  EXPECT_EQ(mem.counter, "memory");
  EXPECT_DOUBLE_EQ(mem.capacity, 80.0 * (1 << 30));
  EXPECT_DOUBLE_EQ(mem.used, 40.0 * (1 << 30));
  EXPECT_EQ(inv.pools[0].counters[1].counter, "sm");
  EXPECT_DOUBLE_EQ(inv.pools[0].counters[1].used, 60);
}

// Each node version's allocatable is parsed once, when cached, and handed to the node filter
// only for that version.
TEST(ClusterCacheTest, NodeAllocatableIsParsedPerNodeVersion) {
  ClusterCache cache;
  api::Node n;
  n.metadata.name = "n1";
  n.status.allocatable["cpu"] = api::Quantity::Parse("2").value();
  auto v1 = std::make_shared<const api::Node>(n);
  cache.UpsertNode(v1);
  auto got = cache.NodeAllocatable({v1});
  ASSERT_EQ(got.size(), 1u);
  ASSERT_NE(got[0], nullptr);
  EXPECT_EQ(got[0]->milli_cpu, 2000);
  n.status.allocatable["cpu"] = api::Quantity::Parse("4").value();
  auto v2 = std::make_shared<const api::Node>(n);
  EXPECT_EQ(cache.NodeAllocatable({v2})[0], nullptr);  // not the cached version
  cache.UpsertNode(v2);
  EXPECT_EQ(cache.NodeAllocatable({v2})[0]->milli_cpu, 4000);
  feasibility::Snapshot s = cache.FeasibilitySnapshot("", /*with_nodes=*/true);
  ASSERT_EQ(s.node_allocatable.size(), 1u);
  EXPECT_EQ(s.node_allocatable[0]->milli_cpu, 4000);
  cache.DeleteNode("n1");
  EXPECT_EQ(cache.NodeAllocatable({v2})[0], nullptr);
}

// The scheduler-pods index holds only unbound, ungated pods with something still to allocate, and
// follows their claims' allocations.
TEST(ClusterCacheTest, SchedulerPodsFollowPodsAndTheirClaims) {
  ClusterCache cache;
  auto keys = [&cache] {
    std::vector<std::string> out;
    for (const auto& p : cache.SchedulerPods()) out.push_back(p->metadata.name);
    return out;
  };
  api::ResourceClaim c;
  c.metadata.namespace_ = "ns";
  c.metadata.name = "c";
  c.metadata.uid = "uc";
  c.metadata.resource_version = "1";
  cache.UpsertClaim(std::make_shared<const api::ResourceClaim>(c));
  api::Pod p;
  p.metadata.namespace_ = "ns";
  p.metadata.name = "p";
  p.metadata.uid = "up";
  p.metadata.resource_version = "1";
  api::PodResourceClaim pc;
  pc.name = "dev";
  pc.resource_claim_name = "c";
  p.spec.resource_claims.push_back(pc);
  cache.UpsertPod(std::make_shared<const api::Pod>(p));
  EXPECT_EQ(keys(), std::vector<std::string>{"p"});
  EXPECT_TRUE(cache.HasSchedulerPods());
  c.metadata.resource_version = "2";
  c.status.allocation = api::AllocationResult{};
  cache.UpsertClaim(std::make_shared<const api::ResourceClaim>(c));
  EXPECT_TRUE(keys().empty()) << "its claim is allocated: nothing left to choose";
  cache.DeleteClaim("ns", "c");
  EXPECT_TRUE(keys().empty()) << "a missing claim: the scheduler waits for it";
  c.metadata.resource_version = "3";
  c.status.allocation.reset();
  cache.UpsertClaim(std::make_shared<const api::ResourceClaim>(c));
  EXPECT_EQ(keys(), std::vector<std::string>{"p"});
  p.metadata.resource_version = "2";
  p.spec.node_name = "n0";
  cache.UpsertPod(std::make_shared<const api::Pod>(p));
  EXPECT_TRUE(keys().empty()) << "bound";
  api::Pod ext;
  ext.metadata.namespace_ = "ns";
  ext.metadata.name = "ext";
  ext.metadata.uid = "ue";
  api::Container ctr;
  ctr.resources.limits["example.com/gpu"] = *api::Quantity::Parse("1");
  ext.spec.containers.push_back(ctr);
  cache.UpsertPod(std::make_shared<const api::Pod>(ext));
  EXPECT_EQ(keys(), std::vector<std::string>{"ext"}) << "no special claim yet";
  cache.DeletePod("ns", "ext");
  EXPECT_FALSE(cache.HasSchedulerPods());
}

TEST(ResourceVersionTest, IntegerOrdering) {
  EXPECT_TRUE(ResourceVersionOlder("9", "10"));
  EXPECT_FALSE(ResourceVersionOlder("10", "9"));
  EXPECT_FALSE(ResourceVersionOlder("abc", "10"));
}

}  // namespace
}  // namespace draco::reconcilers
