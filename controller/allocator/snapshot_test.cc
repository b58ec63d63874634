// Snapshot laziness and sharing: per-pool device indexes built on first use and shared by
// WithSlice/WithoutSlice, lazily resolved allocated claims, state rebasing onto derived snapshots,
// copy-on-write taint-rule merging and concurrent Allocators over one shared snapshot (this
// target also runs under ThreadSanitizer, see scripts/tsan-targets.txt).
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "controller/allocator/allocator.h"
#include "controller/allocator/allocator_impl.h"
#include "controller/allocator/compute_api.h"
#include "controller/allocator/test_builders.h"

namespace draco::alloc {
namespace {

using testing::Claim;
using testing::GpuClass;

constexpr char kDriver[] = "gpu.example.com";

ResourceSlice Slice(const std::string& pool, int devices, const std::string& node = "",
                    int64_t generation = 1, const std::string& suffix = "") {
  ResourceSlice s;
  s.name = "slice-" + pool + suffix;
  s.driver = kDriver;
  s.pool = pool;
  s.generation = generation;
  s.resource_slice_count = 1;
  s.node_name = node.empty() ? pool : node;
  for (int i = 0; i < devices; ++i) {
    Device d;
    d.name = "gpu-" + std::to_string(i);
    s.devices.push_back(std::move(d));
  }
  return s;
}

// An allocated claim holding `devices` of `pool`.
ResourceClaim Existing(const std::string& pool, std::vector<std::string> devices) {
  ResourceClaim c = Claim("existing-" + pool, int64_t(devices.size()));
  c.allocation = AllocationResult{};
  for (const auto& d : devices) {
    DeviceRequestAllocationResult r;
    r.request = "gpus";
    r.driver = kDriver;
    r.pool = pool;
    r.device = d;
    c.allocation->results.push_back(r);
  }
  return c;
}

ComputeConfig Cfg() {
  ComputeConfig cfg;
  cfg.selectors = NewCelSelectorCompiler();
  cfg.deterministic_share_ids = true;
  return cfg;
}

Node N(const std::string& name) { return Node{name, {}, {}}; }

// Devices allocated for a count-`count` claim on `node`, or "unsatisfiable"/"error: ...".
std::string Pick(Allocator& a, const std::string& node, int64_t count) {
  ResourceClaim c = Claim("c", count);
  SearchOutcome o = ComputeAllocate(a, N(node), {&c});
  if (o.kind == Outcome::Kind::kError) return "error: " + o.message;
  if (o.kind != Outcome::Kind::kAllocated) return std::string(OutcomeKindName(o.kind));
  std::string out;
  for (const auto& r : o.results[0].results) out += (out.empty() ? "" : ",") + r.device;
  return out;
}

TEST(SnapshotLazyTest, PoolsAreIndexedOnFirstUseOnly) {
  auto snap = BuildSnapshot(Features{}, {GpuClass()}, {Slice("n0", 2), Slice("n1", 2)}, {});
  EXPECT_FALSE(snap->IsPoolIndexed(kDriver, "n0"));
  EXPECT_FALSE(snap->IsPoolIndexed(kDriver, "n1"));
  auto a = CreateAllocator(Cfg(), snap, std::vector<ResourceClaim>{Existing("n1", {"gpu-0"})});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_FALSE(snap->IsPoolIndexed(kDriver, "n1"));  // claims are not resolved in Create
  EXPECT_EQ(Pick(**a, "n0", 1), "gpu-0");
  EXPECT_TRUE(snap->IsPoolIndexed(kDriver, "n0"));
  EXPECT_FALSE(snap->IsPoolIndexed(kDriver, "n1"));
  EXPECT_EQ(Pick(**a, "n1", 1), "gpu-1");
  EXPECT_TRUE(snap->IsPoolIndexed(kDriver, "n1"));
  EXPECT_EQ(Pick(**a, "n1", 2), "unsatisfiable");
}

TEST(SnapshotLazyTest, WithSliceAndWithoutSliceShareUntouchedPools) {
  auto snap =
      BuildSnapshot(Features{}, {GpuClass()}, {Slice("n0", 2), Slice("n1", 2), Slice("n2", 2)}, {});
  auto grown = SnapshotWithSlice(*snap, Slice("n1", 3));
  EXPECT_TRUE(grown->SharesPoolIndex(*snap, kDriver, "n0"));
  EXPECT_FALSE(grown->SharesPoolIndex(*snap, kDriver, "n1"));
  EXPECT_TRUE(grown->SharesPoolIndex(*snap, kDriver, "n2"));
  EXPECT_EQ(grown->num_devices(), 7);
  // A slice moving to another pool changes both pools.
  ResourceSlice moved = Slice("n9", 1);
  moved.name = "slice-n2";
  auto remapped = SnapshotWithSlice(*grown, moved);
  EXPECT_TRUE(remapped->SharesPoolIndex(*grown, kDriver, "n0"));
  EXPECT_TRUE(remapped->SharesPoolIndex(*grown, kDriver, "n1"));
  EXPECT_FALSE(remapped->SharesPoolIndex(*grown, kDriver, "n2"));
  EXPECT_EQ(remapped->num_devices(), 6);
  auto removed = remapped->WithoutSlice("slice-n0");
  EXPECT_FALSE(removed->SharesPoolIndex(*remapped, kDriver, "n0"));
  EXPECT_TRUE(removed->SharesPoolIndex(*remapped, kDriver, "n1"));
  EXPECT_TRUE(removed->SharesPoolIndex(*remapped, kDriver, "n9"));
  EXPECT_EQ(removed->num_devices(), 4);
  EXPECT_EQ(removed->num_slices(), 2u);
  // An index built through one snapshot is visible through every snapshot sharing it.
  auto a = CreateAllocator(Cfg(), removed, std::vector<ResourceClaim>{});
  EXPECT_EQ(Pick(**a, "n1", 3), "gpu-0,gpu-1,gpu-2");
  EXPECT_TRUE(grown->IsPoolIndexed(kDriver, "n1"));
  EXPECT_EQ(Pick(**a, "n0", 1), "unsatisfiable");  // gone
}

// Two slices of one pool (old and new generation) hold the same device names: one identity
// each, so a claim on the old generation's device occupies the new generation's device too.
// Runs with a small pool (linear lookups) and a large one (hashed index).
TEST(SnapshotLazyTest, DuplicateNamesAcrossGenerationsShareTheIdentity) {
  for (int n : {2, 20}) {
    SCOPED_TRACE(n);
    std::vector<ResourceSlice> slices = {Slice("p", n, "n0", 1, "-old"),
                                         Slice("p", n, "n0", 2, "-new")};
    std::vector<ResourceClaim> claims = {Existing("p", {"gpu-0"})};
    auto snap = BuildSnapshot(Features{}, {GpuClass()}, slices, {});
    auto eager = CreateAllocator(Cfg(), snap, claims);
    auto lazy =
        CreateAllocator(Cfg(), snap, std::make_shared<const std::vector<ResourceClaim>>(claims));
    ASSERT_TRUE(eager.ok() && lazy.ok());
    EXPECT_EQ(Pick(**eager, "n0", 1), "gpu-1");
    EXPECT_EQ(Pick(**lazy, "n0", 1), "gpu-1");
    EXPECT_EQ(Pick(**lazy, "n0", n), "unsatisfiable");
    EXPECT_EQ((*lazy)->State()->data().ident, (*eager)->State()->data().ident);
  }
}

// The shared-claims Create resolves the first pools by scanning, the later ones after grouping;
// every way of reading the claims gives the same state and the same allocations.
TEST(SnapshotLazyTest, LazyClaimResolutionMatchesEagerOnEveryPool) {
  std::vector<ResourceSlice> slices;
  std::vector<Node> nodes;
  std::vector<ResourceClaim> claims;
  for (int i = 0; i < 8; ++i) {
    std::string pool = "n" + std::to_string(i);
    slices.push_back(Slice(pool, 4 + i % 3));
    nodes.push_back(N(pool));
    std::vector<std::string> used;
    for (int k = 0; k < i % 4; ++k) used.push_back("gpu-" + std::to_string(2 * k % (4 + i % 3)));
    if (!used.empty()) claims.push_back(Existing(pool, used));
  }
  claims.push_back(Existing("unknown-pool", {"gpu-0"}));
  claims.push_back(Existing("n5", {"no-such-device"}));
  auto snap = BuildSnapshot(Features{}, {GpuClass()}, slices, {});
  auto shared = std::make_shared<const std::vector<ResourceClaim>>(claims);
  auto eager = CreateAllocator(Cfg(), snap, claims);
  auto lazy = CreateAllocator(Cfg(), snap, shared);
  auto untouched = CreateAllocator(Cfg(), snap, shared);  // State() before any pool is used
  ASSERT_TRUE(eager.ok() && lazy.ok() && untouched.ok());
  EXPECT_EQ((*untouched)->State()->data().ident, (*eager)->State()->data().ident);
  for (int round = 0; round < 2; ++round) {
    for (size_t i = 0; i < nodes.size(); ++i) {
      SCOPED_TRACE(nodes[i].name);
      EXPECT_EQ(Pick(**lazy, nodes[i].name, 1), Pick(**eager, nodes[i].name, 1));
      EXPECT_EQ(Pick(**lazy, nodes[i].name, 3), Pick(**eager, nodes[i].name, 3));
    }
  }
  EXPECT_EQ((*lazy)->State()->data().ident, (*eager)->State()->data().ident);
  // Commits after lazy resolution land on top of the claims.
  ResourceClaim c = Claim("c", 1);
  SearchOutcome o = ComputeAllocate(**lazy, N("n3"), {&c});
  ASSERT_EQ(o.kind, Outcome::Kind::kAllocated);
  ComputeCommit(**lazy, o.results[0]);
  ComputeCommit(**eager, o.results[0]);
  EXPECT_EQ((*lazy)->State()->data().ident, (*eager)->State()->data().ident);
}

// BinPack orders nodes by allocated devices: lazily read claims count for every node's pools.
TEST(SnapshotLazyTest, LazyClaimsFeedPolicyNodeOrdering) {
  AllocationPolicy p;
  p.name = "pack";
  p.class_names = std::vector<std::string>{"gpu"};
  p.strategy = Strategy::kBinPack;
  ComputeConfig cfg = Cfg();
  cfg.policies = {p};
  std::vector<Node> nodes = {N("n0"), N("n1"), N("n2"), N("n3")};
  auto snap = BuildSnapshot(Features{}, {GpuClass()},
                            {Slice("n0", 4), Slice("n1", 4), Slice("n2", 4), Slice("n3", 4)}, {});
  std::vector<ResourceClaim> claims = {Existing("n1", {"gpu-0"}),
                                       Existing("n2", {"gpu-1", "gpu-2"})};
  auto lazy =
      CreateAllocator(cfg, snap, std::make_shared<const std::vector<ResourceClaim>>(claims));
  auto eager = CreateAllocator(cfg, snap, claims);
  ASSERT_TRUE(lazy.ok() && eager.ok());
  ResourceClaim c = Claim("c", 1);
  for (auto* a : {lazy->get(), eager->get()}) {
    SearchOutcome o = ComputeAllocateOnAnyNode(*a, nodes, {&c});
    ASSERT_EQ(o.kind, Outcome::Kind::kAllocated);
    EXPECT_EQ(o.node, "n2");
    EXPECT_EQ(o.results[0].results[0].device, "gpu-0");
  }
}

TEST(SnapshotLazyTest, RebaseMovesInUseDevicesOfTheChangedSliceByName) {
  auto snap = BuildSnapshot(Features{}, {GpuClass()}, {Slice("n0", 2), Slice("n1", 3)}, {});
  auto a = CreateAllocator(
      Cfg(), snap,
      std::vector<ResourceClaim>{Existing("n0", {"gpu-1"}), Existing("n1", {"gpu-0", "gpu-2"})});
  ASSERT_TRUE(a.ok());
  auto state = (*a)->State();
  // n1 now publishes gpu-2 first, then gpu-1 and a new gpu-3; gpu-0 is gone.
  ResourceSlice n1 = Slice("n1", 0);
  for (const char* name : {"gpu-2", "gpu-1", "gpu-3"}) {
    Device d;
    d.name = name;
    n1.devices.push_back(d);
  }
  auto next = SnapshotWithSlice(*snap, n1);
  // Pool n0 grew a sibling pool before it in gid order: a new pool whose devices shift nothing.
  auto next2 = SnapshotWithSlice(*next, Slice("a-new", 1));
  for (const auto& target : {next, next2}) {
    auto b = CreateAllocatorFromState(Cfg(), target, state);
    ASSERT_TRUE(b.ok()) << b.status();
    EXPECT_EQ(Pick(**b, "n1", 2), "gpu-1,gpu-3");  // gpu-2 still in use
    EXPECT_EQ(Pick(**b, "n1", 3), "unsatisfiable");
    EXPECT_EQ(Pick(**b, "n0", 1), "gpu-0");  // gpu-1 still in use (block-copied pool)
    EXPECT_EQ(Pick(**b, "n0", 2), "unsatisfiable");
  }
  // A state rebased twice (next -> next2) equals the direct one.
  auto via = CreateAllocatorFromState(Cfg(), next, state);
  auto twice = CreateAllocatorFromState(Cfg(), next2, (*via)->State());
  auto direct = CreateAllocatorFromState(Cfg(), next2, state);
  EXPECT_EQ((*twice)->State()->data().ident, (*direct)->State()->data().ident);
  // A snapshot of another lineage (built separately) is matched by names.
  auto rebuilt = BuildSnapshot(Features{}, {GpuClass()}, {Slice("n1", 3), Slice("n0", 2)}, {});
  auto c = CreateAllocatorFromState(Cfg(), rebuilt, state);
  EXPECT_EQ(Pick(**c, "n1", 1), "gpu-1");
  EXPECT_EQ(Pick(**c, "n0", 1), "gpu-0");
}

// A long chain of updates (past the point where a derived snapshot re-creates its pool indexes)
// keeps carrying the allocated state, step by step and in one jump.
TEST(SnapshotLazyTest, LongUpdateChainsKeepTheState) {
  auto first = BuildSnapshot(Features{}, {GpuClass()}, {Slice("n0", 4), Slice("n1", 4)}, {});
  auto a = CreateAllocator(
      Cfg(), first,
      std::vector<ResourceClaim>{Existing("n0", {"gpu-0", "gpu-3"}), Existing("n1", {"gpu-1"})});
  auto state = (*a)->State();
  auto snap = first;
  auto stepwise = state;
  for (int i = 0; i < 40; ++i) {
    snap = SnapshotWithSlice(*snap, Slice("n1", 4 + i % 3));
    auto b = CreateAllocatorFromState(Cfg(), snap, stepwise);
    ASSERT_TRUE(b.ok()) << b.status();
    stepwise = (*b)->State();
  }
  EXPECT_LE(snap->data().index_blocks.size(), 17u);
  for (const auto& st : {stepwise, state}) {
    auto b = CreateAllocatorFromState(Cfg(), snap, st);
    ASSERT_TRUE(b.ok()) << b.status();
    EXPECT_EQ(Pick(**b, "n0", 2), "gpu-1,gpu-2");
    EXPECT_EQ(Pick(**b, "n0", 3), "unsatisfiable");
    EXPECT_EQ(Pick(**b, "n1", 3), "gpu-0,gpu-2,gpu-3");  // last slice: 4 + 39 % 3 = 4 devices
    EXPECT_EQ(Pick(**b, "n1", 4), "unsatisfiable");
  }
}

TEST(SnapshotLazyTest, TaintRulesCopyOnlyTheSlicesTheyApplyTo) {
  Features f;
  f.device_taint_rules = true;
  DeviceTaintRule rule;
  rule.name = "r";
  rule.has_selector = true;
  rule.pool = "n1";
  rule.device = "gpu-1";
  rule.taint.key = "broken";
  rule.taint.effect = "NoSchedule";
  auto s0 = std::make_shared<const ResourceSlice>(Slice("n0", 2));
  auto s1 = std::make_shared<const ResourceSlice>(Slice("n1", 2));
  auto snap = BuildSnapshot(f, {GpuClass()}, {s0, s1}, {rule});
  EXPECT_EQ(snap->data().slices.ptrs_[0], s0);  // shared, not copied
  EXPECT_NE(snap->data().slices.ptrs_[1], s1);  // copied and tainted
  EXPECT_TRUE(s1->devices[1].taints.empty());
  EXPECT_EQ(snap->data().slices[1].devices[1].taints.size(), 1u);
  ComputeConfig cfg = Cfg();
  cfg.features = f;
  auto a = CreateAllocator(cfg, snap, std::vector<ResourceClaim>{});
  EXPECT_EQ(Pick(**a, "n1", 2), "unsatisfiable");
  auto next = SnapshotWithSlice(*snap, Slice("n1", 3));
  auto b = CreateAllocator(cfg, next, std::vector<ResourceClaim>{});
  EXPECT_EQ(Pick(**b, "n1", 2), "gpu-0,gpu-2");  // the rule applies to the new slice too
}

// Many allocators over one fresh snapshot race to its lazy pool and node indexes.
TEST(SnapshotLazyTest, ConcurrentAllocatorsOverOneSnapshot) {
  std::vector<ResourceSlice> slices;
  std::vector<ResourceClaim> claims;
  for (int i = 0; i < 16; ++i) {
    std::string pool = "n" + std::to_string(i);
    slices.push_back(Slice(pool, i % 2 ? 20 : 4));
    claims.push_back(Existing(pool, {"gpu-" + std::to_string(i % 4)}));
  }
  auto shared = std::make_shared<const std::vector<ResourceClaim>>(claims);
  // Expected answers from a private snapshot.
  auto ref_snap = BuildSnapshot(Features{}, {GpuClass()}, slices, {});
  auto ref = CreateAllocator(Cfg(), ref_snap, claims);
  std::vector<std::string> want;
  for (int i = 0; i < 16; ++i) want.push_back(Pick(**ref, "n" + std::to_string(i), 2));
  auto ref_state = (*ref)->State();

  auto snap = BuildSnapshot(Features{}, {GpuClass()}, slices, {});
  ComputeConfig cfg = Cfg();  // one SelectorCompiler shared by all threads
  std::vector<std::string> got(4 * 16);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      auto a = t % 2 ? CreateAllocator(cfg, snap, shared)
                     : CreateAllocatorFromState(cfg, snap, ref_state);
      for (int k = 0; k < 16; ++k) {
        int i = (k + 4 * t) % 16;  // threads start on different pools
        got[size_t(16 * t + i)] = Pick(**a, "n" + std::to_string(i), 2);
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) {
    for (int i = 0; i < 16; ++i) EXPECT_EQ(got[size_t(16 * t + i)], want[size_t(i)]) << t << i;
  }
}

}  // namespace
}  // namespace draco::alloc
