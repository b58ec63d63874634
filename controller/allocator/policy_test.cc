// AllocationPolicy: governance (priority, names, label selectors), strategies (BinPack, Spread
// vs FirstFit), namespace limits (maxDevices, maxCapacity incl. committed and in-flight usage)
// and the shared Snapshot (cheap Create, per-slice updates).
#include <gtest/gtest.h>

#include "controller/allocator/allocator.h"
#include "controller/allocator/compute_api.h"
#include "controller/allocator/explain.h"
#include "controller/allocator/from_api.h"
#include "controller/api/codec.h"

namespace draco::alloc {
namespace {

// The controller's path: api::Decode, then the CRD's structural rules in ToAllocPolicy.
StatusOr<AllocationPolicy> DecodeAllocationPolicy(const std::string& json) {
  auto p = api::Decode<api::AllocationPolicy>(json);
  if (!p.ok()) return p.status();
  return ToAllocPolicy(*p);
}

ResourceSlice Slice(const std::string& node, int devices, int64_t mem_gi = 80) {
  ResourceSlice s;
  s.name = "slice-" + node;
  s.driver = "gpu.example.com";
  s.pool = node;
  s.resource_slice_count = 1;
  s.node_name = node;
  for (int i = 0; i < devices; ++i) {
    Device d;
    d.name = "gpu-" + std::to_string(i);
    DeviceCapacity c;
    c.value = Qty::FromInt64(mem_gi * 1024 * 1024 * 1024, api::Quantity::Format::kBinarySI);
    d.capacity.emplace_back("memory", c);
    s.devices.push_back(std::move(d));
  }
  return s;
}

DeviceClass Class(const std::string& name, std::map<std::string, std::string> labels = {}) {
  DeviceClass c;
  c.name = name;
  c.labels = std::move(labels);
  c.selectors.push_back("device.driver == \"gpu.example.com\"");
  return c;
}

ResourceClaim Claim(const std::string& ns, const std::string& name, int64_t count,
                    const std::string& cls = "gpu") {
  ResourceClaim c;
  c.name = name;
  c.namespace_name = ns;
  DeviceRequest r;
  r.name = "gpus";
  r.exactly = RequestSpec{};
  r.exactly->name = "gpus";
  r.exactly->device_class_name = cls;
  r.exactly->count = count;
  c.requests.push_back(std::move(r));
  DefaultClaim(c);
  return c;
}

AllocationPolicy Policy(const std::string& name, Strategy st, int32_t prio = 0) {
  AllocationPolicy p;
  p.name = name;
  p.class_names = std::vector<std::string>{"gpu"};
  p.strategy = st;
  p.priority = prio;
  return p;
}

ResourceClaim Existing(const std::string& ns, const std::string& node, const std::string& dev) {
  ResourceClaim c = Claim(ns, "existing", 1);
  c.allocation = AllocationResult{};
  DeviceRequestAllocationResult r;
  r.request = "gpus";
  r.driver = "gpu.example.com";
  r.pool = node;
  r.device = dev;
  c.allocation->results.push_back(r);
  return c;
}

std::unique_ptr<Allocator> New(std::vector<AllocationPolicy> policies,
                               std::vector<ResourceClaim> allocated = {},
                               std::vector<DeviceClass> classes = {Class("gpu")}) {
  ComputeConfig cfg;
  cfg.selectors = NewCelSelectorCompiler();
  cfg.policies = std::move(policies);
  auto a =
      CreateAllocator(cfg, std::move(classes), {Slice("n0", 4), Slice("n1", 4)}, {}, allocated);
  EXPECT_TRUE(a.ok()) << a.status();
  return std::move(a).value();
}

const std::vector<Node> kNodes = {{"n0", {}, {}}, {"n1", {}, {}}};

// Allocates `n` single-GPU claims one by one (committing each) and returns "node/device" picks.
std::vector<std::string> Fill(Allocator& a, const std::string& ns, int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) {
    ResourceClaim c = Claim(ns, "c" + std::to_string(i), 1);
    SearchOutcome o = ComputeAllocateOnAnyNode(a, kNodes, {&c});
    if (o.kind != Outcome::Kind::kAllocated) {
      out.push_back("none: " + o.message);
      continue;
    }
    ComputeCommit(a, c, o.results[0]);
    out.push_back(o.node + "/" + o.results[0].results[0].device);
  }
  return out;
}

TEST(PolicyTest, NoPolicyAndFirstFitAreUpstreamOrder) {
  std::vector<std::string> want = {"n0/gpu-1", "n0/gpu-2", "n0/gpu-3"};
  auto plain = New({}, {Existing("a", "n1", "gpu-0"), Existing("a", "n0", "gpu-0")});
  EXPECT_EQ(Fill(*plain, "b", 3), want);
  auto ff = New({Policy("ff", Strategy::kFirstFit)},
                {Existing("a", "n1", "gpu-0"), Existing("a", "n0", "gpu-0")});
  EXPECT_EQ(Fill(*ff, "b", 3), want);
}

TEST(PolicyTest, BinPackPrefersTheMostAllocatedNode) {
  auto plain = New({}, {Existing("a", "n1", "gpu-0")});
  EXPECT_EQ(Fill(*plain, "b", 2), (std::vector<std::string>{"n0/gpu-0", "n0/gpu-1"}));
  auto a = New({Policy("pack", Strategy::kBinPack)}, {Existing("a", "n1", "gpu-0")});
  EXPECT_EQ(Fill(*a, "b", 4),
            (std::vector<std::string>{"n1/gpu-1", "n1/gpu-2", "n1/gpu-3", "n0/gpu-0"}));
}

TEST(PolicyTest, SpreadPrefersTheLeastAllocatedNode) {
  auto a = New({Policy("spread", Strategy::kSpread)}, {Existing("a", "n0", "gpu-0")});
  EXPECT_EQ(Fill(*a, "b", 3), (std::vector<std::string>{"n1/gpu-0", "n0/gpu-1", "n1/gpu-1"}));
}

TEST(PolicyTest, BinPackOrdersPoolsWithinANode) {
  // One node, two pools: the second pool already has an allocation, so BinPack takes it first.
  ComputeConfig cfg;
  cfg.selectors = NewCelSelectorCompiler();
  cfg.policies = {Policy("pack", Strategy::kBinPack)};
  ResourceSlice p0 = Slice("n0", 2), p1 = Slice("n0", 2);
  p0.pool = "pool-a";
  p1.pool = "pool-b";
  p1.name = "slice-n0-b";
  auto a = CreateAllocator(cfg, {Class("gpu")}, {p0, p1}, {}, {Existing("a", "pool-b", "gpu-0")});
  ASSERT_TRUE(a.ok());
  ResourceClaim c = Claim("b", "c", 1);
  SearchOutcome o = ComputeAllocate(**a, kNodes[0], {&c});
  ASSERT_EQ(o.kind, Outcome::Kind::kAllocated);
  EXPECT_EQ(o.results[0].results[0].pool, "pool-b");
  cfg.policies = {Policy("spread", Strategy::kSpread)};
  auto s = CreateAllocator(cfg, {Class("gpu")}, {p0, p1}, {}, {Existing("a", "pool-b", "gpu-0")});
  o = ComputeAllocate(**s, kNodes[0], {&c});
  EXPECT_EQ(o.results[0].results[0].pool, "pool-a");
}

TEST(PolicyTest, HighestPriorityThenSmallestNameGoverns) {
  // "pack" (priority 1) beats "spread" (priority 0).
  auto a = New({Policy("spread", Strategy::kSpread), Policy("pack", Strategy::kBinPack, 1)},
               {Existing("a", "n1", "gpu-0")});
  EXPECT_EQ(Fill(*a, "b", 1), (std::vector<std::string>{"n1/gpu-1"}));
  // Equal priority: "a-spread" < "b-pack".
  auto b = New({Policy("b-pack", Strategy::kBinPack), Policy("a-spread", Strategy::kSpread)},
               {Existing("a", "n0", "gpu-0")});
  EXPECT_EQ(Fill(*b, "b", 1), (std::vector<std::string>{"n1/gpu-0"}));
}

TEST(PolicyTest, LabelSelectorGovernsOnlyMatchingClasses) {
  AllocationPolicy p = Policy("pack", Strategy::kBinPack);
  p.class_names.reset();
  p.has_label_selector = true;
  p.match_expressions.push_back({"tier", "In", {"fast"}});
  EXPECT_TRUE(p.Selects(Class("x", {{"tier", "fast"}})));
  EXPECT_FALSE(p.Selects(Class("x", {{"tier", "slow"}})));
  EXPECT_FALSE(p.Selects(Class("x")));
  // Class "gpu" has no labels: not governed, stays FirstFit.
  auto a = New({p}, {Existing("a", "n1", "gpu-0")});
  EXPECT_EQ(Fill(*a, "b", 1), (std::vector<std::string>{"n0/gpu-0"}));
  auto b = New({p}, {Existing("a", "n1", "gpu-0")}, {Class("gpu", {{"tier", "fast"}})});
  EXPECT_EQ(Fill(*b, "b", 1), (std::vector<std::string>{"n1/gpu-1"}));
}

TEST(PolicyTest, MaxDevicesCountsCommittedAndInFlight) {
  AllocationPolicy p = Policy("quota", Strategy::kFirstFit);
  p.namespace_limits.push_back({"team", 3, {}});
  auto a = New({p}, {Existing("team", "n1", "gpu-0")});
  // In flight: one claim for 3 devices exceeds 3 - 1 = 2 (not fatal: unsatisfiable).
  ResourceClaim big = Claim("team", "big", 3);
  SearchOutcome o = ComputeAllocateOnAnyNode(*a, kNodes, {&big});
  EXPECT_EQ(o.kind, Outcome::Kind::kUnsatisfiable);
  EXPECT_NE(o.message.find("AllocationPolicy quota"), std::string::npos) << o.message;
  EXPECT_NE(o.message.find("maxDevices limit 3"), std::string::npos) << o.message;
  EXPECT_NE(o.message.find("used 3"), std::string::npos) << o.message;
  // Two claims in one call also count together.
  ResourceClaim c1 = Claim("team", "x", 1), c2 = Claim("team", "y", 2);
  EXPECT_EQ(ComputeAllocateOnAnyNode(*a, kNodes, {&c1, &c2}).kind, Outcome::Kind::kUnsatisfiable);
  EXPECT_EQ(Fill(*a, "team", 3)[1], "n0/gpu-1");
  EXPECT_EQ(Fill(*a, "team", 1)[0].rfind("none: ", 0), 0u);
  // Other namespaces are not limited (no "*" entry); the same allocator without the policy is.
  EXPECT_EQ(Fill(*a, "other", 1)[0], "n0/gpu-2");
  auto plain = New({}, {Existing("team", "n1", "gpu-0")});
  ResourceClaim big2 = Claim("team", "big", 3);
  EXPECT_EQ(ComputeAllocateOnAnyNode(*plain, kNodes, {&big2}).kind, Outcome::Kind::kAllocated);
}

TEST(PolicyTest, StarEntryAppliesPerNamespaceAndMaxCapacity) {
  AllocationPolicy p = Policy("mem", Strategy::kFirstFit);
  NamespaceLimit star{"*", std::nullopt, {}};
  star.max_capacity.emplace_back("memory", *Qty::Parse("200Gi"));
  p.namespace_limits.push_back(star);
  auto a = New({p});
  // 80Gi each: two fit (160Gi), the third would be 240Gi > 200Gi; separately per namespace.
  auto got = Fill(*a, "a", 3);
  EXPECT_EQ(got[0], "n0/gpu-0");
  EXPECT_EQ(got[1], "n0/gpu-1");
  EXPECT_NE(got[2].find("maxCapacity[memory] limit 200Gi"), std::string::npos) << got[2];
  EXPECT_NE(got[2].find("used 160Gi, requested 80Gi"), std::string::npos) << got[2];
  EXPECT_EQ(Fill(*a, "b", 2)[1], "n0/gpu-3");
}

TEST(PolicyTest, ExplainNamesPolicyLimitUsedAndRequested) {
  AllocationPolicy p = Policy("quota", Strategy::kFirstFit);
  p.namespace_limits.push_back({"team", 1, {}});
  auto a = New({p}, {Existing("team", "n1", "gpu-0")});
  ResourceClaim c = Claim("team", "c", 1);
  Explanation e = ComputeExplain(*a, kNodes[0], {&c});
  EXPECT_EQ(e.outcome.kind, Outcome::Kind::kUnsatisfiable);
  std::string text = ExplanationToText(e);
  EXPECT_NE(text.find("within namespace limits"), std::string::npos) << text;
  EXPECT_NE(text.find("AllocationPolicy quota: namespace team maxDevices 1, used 1, requested 1"),
            std::string::npos)
      << text;
}

TEST(PolicyTest, DecodesTheCrdShape) {
  const std::string d(R"({"apiVersion":"draco.dev/v1alpha1","kind":"AllocationPolicy",
    "metadata":{"name":"p"},"spec":{"deviceClassSelector":{"labelSelector":{
    "matchLabels":{"a":"b"},"matchExpressions":[{"key":"k","operator":"Exists"}]}},
    "strategy":"Spread","priority":7,"namespaceLimits":[{"namespace":"*","maxDevices":2,
    "maxCapacity":{"memory":"10Gi"}}]}})");
  auto p = DecodeAllocationPolicy(d);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->strategy, Strategy::kSpread);
  EXPECT_EQ(p->priority, 7);
  ASSERT_EQ(p->namespace_limits.size(), 1u);
  EXPECT_EQ(*p->namespace_limits[0].max_devices, 2);
  EXPECT_EQ(p->namespace_limits[0].max_capacity[0].second.ToString(), "10Gi");
  EXPECT_EQ(p->LimitFor("anything"), &p->namespace_limits[0]);
  EXPECT_FALSE(DecodeAllocationPolicy(R"({"metadata":{"name":"p"},"spec":{"deviceClassSelector":{
    "names":["x"],"labelSelector":{"matchLabels":{"a":"b"}}}}})")
                   .ok());
  EXPECT_FALSE(DecodeAllocationPolicy(R"({"metadata":{"name":"p"},"spec":{"deviceClassSelector":{
    "names":["x"]},"strategy":"Random"}})")
                   .ok());
}

TEST(SnapshotTest, SharedSnapshotAllocatorsAreIndependent) {
  Features f;
  auto snap = BuildSnapshot(f, {Class("gpu")}, {Slice("n0", 2)}, {});
  ComputeConfig cfg;
  cfg.selectors = NewCelSelectorCompiler();
  auto a = CreateAllocator(cfg, snap, std::vector<ResourceClaim>{});
  auto b = CreateAllocator(cfg, snap, std::vector<ResourceClaim>{});
  ASSERT_TRUE(a.ok() && b.ok());
  ResourceClaim c = Claim("x", "c", 2);
  SearchOutcome o = ComputeAllocate(**a, kNodes[0], {&c});
  ASSERT_EQ(o.kind, Outcome::Kind::kAllocated);
  ComputeCommit(**a, o.results[0]);
  EXPECT_EQ(ComputeAllocate(**a, kNodes[0], {&c}).kind, Outcome::Kind::kUnsatisfiable);
  EXPECT_EQ(ComputeAllocate(**b, kNodes[0], {&c}).kind, Outcome::Kind::kAllocated);
  // A third allocator started from a's state sees a's commit; b's state is still empty.
  auto from_a = CreateAllocatorFromState(cfg, snap, (*a)->State());
  ASSERT_TRUE(from_a.ok()) << from_a.status();
  EXPECT_EQ(ComputeAllocate(**from_a, kNodes[0], {&c}).kind, Outcome::Kind::kUnsatisfiable);
  auto from_b = CreateAllocatorFromState(cfg, snap, (*b)->State());
  EXPECT_EQ(ComputeAllocate(**from_b, kNodes[0], {&c}).kind, Outcome::Kind::kAllocated);
  // A state rebases onto another snapshot by device identity: a's commit still occupies both
  // devices of n0 after n0's slice grew to 3 devices, so only one more fits.
  auto grown = SnapshotWithSlice(*snap, Slice("n0", 3));
  auto rebased = CreateAllocatorFromState(cfg, grown, (*a)->State());
  ASSERT_TRUE(rebased.ok()) << rebased.status();
  EXPECT_EQ(ComputeAllocate(**rebased, kNodes[0], {&c}).kind, Outcome::Kind::kUnsatisfiable);
  ResourceClaim one = Claim("x", "one", 1);
  SearchOutcome o1 = ComputeAllocate(**rebased, kNodes[0], {&one});
  ASSERT_EQ(o1.kind, Outcome::Kind::kAllocated);
  EXPECT_EQ(o1.results[0].results[0].device, "gpu-2");
  // States are bound to their policies.
  ComputeConfig with_policy = cfg;
  with_policy.policies.push_back(Policy("p", Strategy::kBinPack));
  EXPECT_FALSE(CreateAllocatorFromState(with_policy, snap, (*a)->State()).ok());
}

TEST(PolicyTest, StateCarriesNamespaceUsage) {
  AllocationPolicy p = Policy("quota", Strategy::kFirstFit);
  p.namespace_limits.push_back({"team", 1, {}});
  Features f;
  auto snap = BuildSnapshot(f, {Class("gpu")}, {Slice("n0", 4)}, {});
  ComputeConfig cfg;
  cfg.selectors = NewCelSelectorCompiler();
  cfg.policies = {p};
  auto a = CreateAllocator(cfg, snap, std::vector<ResourceClaim>{Existing("team", "n0", "gpu-0")});
  ASSERT_TRUE(a.ok());
  auto b = CreateAllocatorFromState(cfg, snap, (*a)->State());
  ASSERT_TRUE(b.ok()) << b.status();
  ResourceClaim c = Claim("team", "c", 1);
  EXPECT_EQ(ComputeAllocate(**b, kNodes[0], {&c}).kind, Outcome::Kind::kUnsatisfiable);
}

TEST(SnapshotTest, WithSliceSharesUnchangedSlicesAndSeesTheChange) {
  Features f;
  auto snap = BuildSnapshot(f, {Class("gpu")}, {Slice("n0", 1), Slice("n1", 1)}, {});
  auto grown = SnapshotWithSlice(*snap, Slice("n1", 3));
  EXPECT_EQ(snap->num_devices(), 2);
  EXPECT_EQ(grown->num_devices(), 4);
  EXPECT_TRUE(grown->SharesSlice(*snap, 0));
  EXPECT_FALSE(grown->SharesSlice(*snap, 1));
  ComputeConfig cfg;
  cfg.selectors = NewCelSelectorCompiler();
  ResourceClaim c = Claim("x", "c", 3);
  EXPECT_EQ(
      ComputeAllocate(**CreateAllocator(cfg, snap, std::vector<ResourceClaim>{}), kNodes[1], {&c})
          .kind,
      Outcome::Kind::kUnsatisfiable);
  EXPECT_EQ(
      ComputeAllocate(**CreateAllocator(cfg, grown, std::vector<ResourceClaim>{}), kNodes[1], {&c})
          .kind,
      Outcome::Kind::kAllocated);
  auto removed = grown->WithoutSlice("slice-n1");
  EXPECT_EQ(removed->num_devices(), 1);
  EXPECT_EQ(removed->num_slices(), 1u);
  // Mismatched taint-rule feature gate is rejected.
  cfg.features.device_taint_rules = false;
  EXPECT_FALSE(CreateAllocator(cfg, snap, std::vector<ResourceClaim>{}).ok());
}

}  // namespace
}  // namespace draco::alloc
