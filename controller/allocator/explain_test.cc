// Explanations carry numbers (#17): requested vs remaining capacity, the shared counter that ran
// out with what is left and who holds it, the conflict between requests that fit alone, and
// the hint on CEL "no such key" errors, in text and JSON.
#include "controller/allocator/explain.h"

#include <gtest/gtest.h>

#include "controller/allocator/test_builders.h"

namespace draco::alloc {
namespace {

using testing::Claim;
using testing::GpuClass;

Qty Q(const std::string& s) { return Qty::Parse(s).value(); }

ResourceSlice NodeSlice(std::vector<Device> devices) {
  ResourceSlice s;
  s.name = "slice-n0";
  s.driver = "gpu.example.com";
  s.pool = "n0";
  s.resource_slice_count = 1;
  s.node_name = "n0";
  s.devices = std::move(devices);
  return s;
}

Device Dev(const std::string& name) {
  Device d;
  d.name = name;
  return d;
}

// A partition of gpu-0 drawing `memory` from counter set gpu-0-counters.
Device Partition(const std::string& name, const std::string& memory) {
  Device d = Dev(name);
  CounterConsumption cc;
  cc.counter_set = "gpu-0-counters";
  cc.counters.emplace_back("memory", Q(memory));
  d.consumes_counters.push_back(std::move(cc));
  return d;
}

// Pool n0: the devices in one slice, counter set gpu-0-counters (memory 80Gi) in another.
std::vector<ResourceSlice> PartitionedPool(std::vector<Device> devices) {
  ResourceSlice s = NodeSlice(std::move(devices));
  s.resource_slice_count = 2;
  ResourceSlice counters = NodeSlice({});
  counters.name = "counters-n0";
  counters.resource_slice_count = 2;
  CounterSet set;
  set.name = "gpu-0-counters";
  set.counters.emplace_back("memory", Q("80Gi"));
  counters.shared_counters.push_back(std::move(set));
  return {s, counters};
}

ResourceClaim Allocated(const std::string& name, const std::string& device) {
  ResourceClaim c = Claim(name, 1);
  c.allocation = AllocationResult{};
  DeviceRequestAllocationResult r;
  r.request = "gpus";
  r.driver = "gpu.example.com";
  r.pool = "n0";
  r.device = device;
  c.allocation->results.push_back(std::move(r));
  return c;
}

std::unique_ptr<Allocator> New(std::vector<ResourceSlice> slices,
                               const std::vector<ResourceClaim>& allocated = {}) {
  ComputeConfig cfg;
  cfg.selectors = NewCelSelectorCompiler();
  auto a = CreateAllocator(cfg, {GpuClass()}, std::move(slices), {}, allocated);
  EXPECT_TRUE(a.ok()) << a.status();
  return std::move(a).value();
}

const Node kNode{"n0", {}, {}};

// The taint stage names the taint that blocks the device (the first one no toleration of the
// request tolerates), not merely its first NoSchedule/NoExecute taint.
TEST(ExplainTest, TaintStageNamesTheUntoleratedTaint) {
  Device gpu = Dev("gpu-0");
  gpu.taints.push_back({"maintenance", "soon", "NoSchedule"});
  gpu.taints.push_back({"broken", "ecc", "NoExecute"});
  auto a = New({NodeSlice({gpu})});
  ResourceClaim c = Claim("c", 1);
  c.requests[0].exactly->tolerations.push_back({"maintenance", "Exists", "", "", std::nullopt});
  Explanation e = ComputeExplain(*a, kNode, {&c});
  ASSERT_EQ(e.outcome.kind, Outcome::Kind::kUnsatisfiable);
  const RequestFunnel& f = e.requests.at(0);
  ASSERT_EQ(f.stages.size(), 7u);
  EXPECT_EQ(f.stages[5].name, "after taints");
  EXPECT_EQ(f.stages[5].count, 0);
  EXPECT_EQ(f.stages[5].detail, "untolerated taint broken=ecc:NoExecute on 1; ");
}

TEST(ExplainTest, CapacityStageNamesRequestedAndRemainingPerCapacity) {
  Device gpu = Dev("gpu-0");
  gpu.allow_multiple_allocations = true;
  gpu.capacity.emplace_back("compute", DeviceCapacity{Q("100"), std::nullopt});
  gpu.capacity.emplace_back("memory", DeviceCapacity{Q("80Gi"), std::nullopt});
  ResourceClaim holder = Allocated("train", "gpu-0");
  auto& r = holder.allocation->results[0];
  r.share_id = "00000000-0000-4000-8000-000000000001";
  r.has_consumed_capacity = true;
  r.consumed_capacity = {{"compute", Q("40")}, {"memory", Q("32Gi")}};
  auto a = New({NodeSlice({gpu})}, {holder});
  ResourceClaim c = Claim("infer", 1);
  c.requests[0].exactly->has_capacity = true;
  c.requests[0].exactly->capacity_requests = {{"compute", Q("70")}, {"memory", Q("60Gi")}};
  Explanation e = ComputeExplain(*a, kNode, {&c});
  ASSERT_EQ(e.outcome.kind, Outcome::Kind::kUnsatisfiable);
  ASSERT_EQ(e.requests.size(), 1u);
  const RequestFunnel& f = e.requests[0];
  EXPECT_NE(f.verdict.find("1 lack the requested capacity: gpu-0 has compute 60 of 70 requested, "
                           "memory 48Gi of 60Gi"),
            std::string::npos)
      << f.verdict;
  ASSERT_EQ(f.capacity_shortfalls.size(), 1u);
  ASSERT_EQ(f.capacity_shortfalls[0].capacities.size(), 2u);
  const CapacityShortfall& mem = f.capacity_shortfalls[0].capacities[1];
  EXPECT_EQ(mem.name, "memory");
  EXPECT_EQ(mem.requested, "60Gi");
  EXPECT_EQ(mem.remaining, "48Gi");
  EXPECT_EQ(mem.total, "80Gi");
  std::string json = ExplanationToJson(e);
  EXPECT_NE(json.find(R"("capacityShortfalls":[{"pool":"gpu.example.com/n0","device":"gpu-0")"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find(R"({"name":"memory","requested":"60Gi","remaining":"48Gi","total":"80Gi"})"),
            std::string::npos)
      << json;
}

TEST(ExplainTest, CapacityStageListsTheClosestDevicesFirstAndCountsTheRest) {
  std::vector<Device> devices;
  for (const char* mem : {"10Gi", "50Gi", "20Gi", "40Gi"}) {
    Device d = Dev(std::string("gpu-") + mem);
    d.capacity.emplace_back("memory", DeviceCapacity{Q(mem), std::nullopt});
    devices.push_back(std::move(d));
  }
  auto a = New({NodeSlice(devices)});
  ResourceClaim c = Claim("c", 1);
  c.requests[0].exactly->has_capacity = true;
  c.requests[0].exactly->capacity_requests = {{"memory", Q("60Gi")}};
  Explanation e = ComputeExplain(*a, kNode, {&c});
  const RequestFunnel& f = e.requests.at(0);
  ASSERT_EQ(f.capacity_shortfalls.size(), 2u);
  EXPECT_EQ(f.capacity_shortfalls[0].device, "gpu-50Gi");
  EXPECT_EQ(f.capacity_shortfalls[1].device, "gpu-40Gi");
  EXPECT_EQ(f.capacity_more, 2);
  EXPECT_NE(f.verdict.find("gpu-50Gi has memory 50Gi of 60Gi requested; gpu-40Gi has memory 40Gi "
                           "of 60Gi requested; +2 more"),
            std::string::npos)
      << f.verdict;
}

TEST(ExplainTest, CounterStageNamesSetCounterAmountsAndHolder) {
  std::vector<Device> devices = {Partition("gpu-0-big", "72Gi")};
  for (int i = 0; i < 10; ++i) devices.push_back(Partition("gpu-0-p" + std::to_string(i), "40Gi"));
  auto a = New(PartitionedPool(devices), {Allocated("train-a-gpu", "gpu-0-big")});
  ResourceClaim c = Claim("c", 1);
  Explanation e = ComputeExplain(*a, kNode, {&c});
  ASSERT_EQ(e.outcome.kind, Outcome::Kind::kUnsatisfiable);
  const RequestFunnel& f = e.requests.at(0);
  EXPECT_NE(f.verdict.find("10 would exceed shared counters (partitions of devices in use): "
                           "counter set gpu-0-counters, counter memory: needs 40Gi, 8Gi of 80Gi "
                           "left (held by default/train-a-gpu 72Gi)"),
            std::string::npos)
      << f.verdict;
  ASSERT_EQ(f.counter_shortfalls.size(), 1u);
  const CounterShortfall& s = f.counter_shortfalls[0];
  EXPECT_EQ(s.devices, 10);
  EXPECT_EQ(s.device, "gpu-0-p0");
  EXPECT_EQ(s.left, "8Gi");
  ASSERT_EQ(s.holders.size(), 1u);
  EXPECT_EQ(s.holders[0].holder, "default/train-a-gpu");
  // The same through the shared-claims Create (claims kept, not copied).
  ComputeConfig cfg;
  cfg.selectors = NewCelSelectorCompiler();
  auto shared =
      CreateAllocator(cfg, BuildSnapshot(cfg.features, {GpuClass()}, PartitionedPool(devices), {}),
                      std::make_shared<const std::vector<ResourceClaim>>(
                          std::vector<ResourceClaim>{Allocated("train-a-gpu", "gpu-0-big")}));
  ASSERT_TRUE(shared.ok()) << shared.status();
  Explanation e2 = ComputeExplain(**shared, kNode, {&c});
  EXPECT_EQ(e2.requests.at(0).counter_shortfalls.at(0).holders.at(0).holder, "default/train-a-gpu");
  std::string json = ExplanationToJson(e);
  EXPECT_NE(json.find(R"("counterSet":"gpu-0-counters","counter":"memory","devices":10,)"
                      R"("device":"gpu-0-p0","needed":"40Gi","left":"8Gi","total":"80Gi",)"
                      R"("holders":[{"holder":"default/train-a-gpu","amount":"72Gi"}],)"
                      R"("moreHolders":0)"),
            std::string::npos)
      << json;
}

TEST(ExplainTest, CounterHoldersAreCappedLargestFirstAndIncludeCommittedClaims) {
  std::vector<Device> devices;
  for (const char* m : {"10Gi", "20Gi", "30Gi", "5Gi", "12Gi"}) {
    devices.push_back(Partition(std::string("held-") + m, m));
  }
  devices.push_back(Partition("wanted", "40Gi"));
  std::vector<ResourceClaim> allocated;
  for (const char* m : {"10Gi", "20Gi", "30Gi", "5Gi"}) {
    allocated.push_back(Allocated(std::string("c-") + m, std::string("held-") + m));
  }
  auto a = New(PartitionedPool(devices), allocated);
  ResourceClaim late = Allocated("late", "held-12Gi");
  ComputeCommit(*a, late, *late.allocation);  // in flight: named through Commit
  ResourceClaim c = Claim("c", 1);
  Explanation e = ComputeExplain(*a, kNode, {&c});
  const CounterShortfall& s = e.requests.at(0).counter_shortfalls.at(0);
  EXPECT_EQ(s.left, "3Gi");
  ASSERT_EQ(s.holders.size(), 3u);
  EXPECT_EQ(s.holders[0].holder, "default/c-30Gi");
  EXPECT_EQ(s.holders[1].holder, "default/c-20Gi");
  EXPECT_EQ(s.holders[2].holder, "default/late");
  EXPECT_EQ(s.more_holders, 2);
  EXPECT_NE(e.requests[0].verdict.find("(held by default/c-30Gi 30Gi, default/c-20Gi 20Gi, "
                                       "default/late 12Gi, +2 more)"),
            std::string::npos)
      << e.requests[0].verdict;
}

TEST(ExplainTest, CountClaimShortOfACounterNamesTheCounterNotTheResultLimit) {
  std::vector<Device> devices = {Partition("gpu-0-big", "20Gi")};
  for (int i = 0; i < 8; ++i) devices.push_back(Partition("gpu-0-p" + std::to_string(i), "10Gi"));
  auto a = New(PartitionedPool(devices), {Allocated("train", "gpu-0-big")});
  ResourceClaim c = Claim("big", 7);
  Explanation e = ComputeExplain(*a, kNode, {&c});
  ASSERT_EQ(e.outcome.kind, Outcome::Kind::kUnsatisfiable);
  ASSERT_EQ(e.conflicts.size(), 1u);
  const Conflict& k = e.conflicts[0];
  EXPECT_EQ(k.kind, Conflict::Kind::kCounter);
  ASSERT_TRUE(k.counter.has_value());
  EXPECT_EQ(k.counter->needed, "70Gi");
  EXPECT_EQ(k.counter->left, "60Gi");
  const std::string& v = e.requests.at(0).verdict;
  EXPECT_NE(v.find("enough devices pass every filter on their own (8 >= 7); request gpus of claim "
                   "default/big must take 7 devices drawing on counter set gpu-0-counters, "
                   "counter memory, which need at least 70Gi, 60Gi of 80Gi left (held by "
                   "default/train 20Gi)"),
            std::string::npos)
      << v;
  EXPECT_EQ(v.find("32"), std::string::npos) << v;
  EXPECT_NE(ExplanationToJson(e).find(R"("conflicts":[{"kind":"counter","requests":)"
                                      R"(["default/big/gpus"],"needed":7,"counter":{)"),
            std::string::npos)
      << ExplanationToJson(e);
}

ResourceClaim TwoRequests(int64_t a, int64_t b) {
  ResourceClaim c = Claim("pair", a);
  c.requests[0].name = c.requests[0].exactly->name = "a";
  DeviceRequest r = c.requests[0];
  r.name = r.exactly->name = "b";
  r.exactly->count = b;
  c.requests.push_back(r);
  return c;
}

TEST(ExplainTest, RequestsThatShareTooFewDevicesAreNamed) {
  auto a = New({NodeSlice({Dev("gpu-0"), Dev("gpu-1"), Dev("gpu-2")})});
  ResourceClaim c = TwoRequests(2, 2);
  Explanation e = ComputeExplain(*a, kNode, {&c});
  ASSERT_EQ(e.outcome.kind, Outcome::Kind::kUnsatisfiable);
  ASSERT_FALSE(e.conflicts.empty());
  EXPECT_EQ(e.conflicts[0].kind, Conflict::Kind::kDevices);
  EXPECT_EQ(e.conflicts[0].needed, 4);
  EXPECT_EQ(e.conflicts[0].available, 3);
  EXPECT_NE(e.requests.at(1).verdict.find("requests a and b of claim default/pair together need 4 "
                                          "devices, 3 pass their filters"),
            std::string::npos)
      << e.requests[1].verdict;
}

TEST(ExplainTest, MatchAttributeAcrossRequestsNamesTheAttributeAndValues) {
  std::vector<Device> devices;
  for (int numa : {0, 0, 1}) {
    Device d = Dev("gpu-" + std::to_string(devices.size()));
    Attribute at;
    at.kind = Attribute::Kind::kInt;
    at.i = numa;
    d.attributes.emplace_back("numa", at);
    devices.push_back(std::move(d));
  }
  auto a = New({NodeSlice(devices)});
  ResourceClaim c = TwoRequests(2, 1);
  c.requests[1].exactly->selectors.push_back("device.attributes[\"gpu.example.com\"].numa == 1");
  DeviceConstraint k;
  k.requests = {"a", "b"};
  k.match_attribute = "gpu.example.com/numa";
  c.constraints.push_back(k);
  Explanation e = ComputeExplain(*a, kNode, {&c});
  ASSERT_EQ(e.outcome.kind, Outcome::Kind::kUnsatisfiable);
  ASSERT_FALSE(e.conflicts.empty());
  EXPECT_EQ(e.conflicts[0].kind, Conflict::Kind::kMatchAttribute);
  EXPECT_EQ(e.conflicts[0].attribute, "gpu.example.com/numa");
  EXPECT_EQ(e.conflicts[0].text,
            "matchAttribute gpu.example.com/numa over requests a and b of claim default/pair: no "
            "single value has enough devices for all of them (a needs 2: 0 on 2, 1 on 1; b needs "
            "1: 1 on 1)");
}

TEST(ExplainTest, ResultLimitIsMentionedOnlyWhenTheSearchHitIt) {
  std::vector<Device> devices;
  for (int i = 0; i < 31; ++i) devices.push_back(Dev("gpu-" + std::to_string(i)));
  auto a = New({NodeSlice(devices)});
  ResourceClaim c = TwoRequests(1, 3);
  // Request a: 30 devices first, else one device with a model nobody has.
  RequestSpec big = *c.requests[0].exactly, small = big;
  big.name = "big";
  big.count = 30;
  small.name = "small";
  small.selectors.push_back("device.attributes[\"gpu.example.com\"].?model.orValue(\"\") == \"x\"");
  c.requests[0].exactly.reset();
  c.requests[0].first_available = {big, small};
  Explanation e = ComputeExplain(*a, kNode, {&c});
  ASSERT_EQ(e.outcome.kind, Outcome::Kind::kUnsatisfiable);
  bool limit = false;
  for (const Conflict& k : e.conflicts) limit = limit || k.kind == Conflict::Kind::kResultLimit;
  EXPECT_TRUE(limit) << ExplanationToText(e) << ExplanationToJson(e);
  EXPECT_NE(ExplanationToText(e).find("limit of 32 devices per claim"), std::string::npos);

  // Without the limit in play the text does not mention it.
  ResourceClaim two = TwoRequests(2, 2);
  Explanation e2 =
      ComputeExplain(*New({NodeSlice({Dev("gpu-0"), Dev("gpu-1"), Dev("gpu-2")})}), kNode, {&two});
  EXPECT_EQ(ExplanationToText(e2).find("32"), std::string::npos) << ExplanationToText(e2);
}

TEST(ExplainTest, CelNoSuchKeyErrorsCarryTheHint) {
  auto a = New({NodeSlice({Dev("gpu-0")})});
  ResourceClaim c = Claim("c", 1);
  c.requests[0].exactly->selectors.push_back("device.attributes[\"gpu.example.com\"].model == 1");
  Explanation e = ComputeExplain(*a, kNode, {&c});
  ASSERT_EQ(e.outcome.kind, Outcome::Kind::kError);
  EXPECT_NE(e.outcome.message.find("no such key"), std::string::npos) << e.outcome.message;
  EXPECT_NE(e.outcome.message.find("has()"), std::string::npos) << e.outcome.message;
  ASSERT_FALSE(e.requests.at(0).cel_errors.empty());
  EXPECT_NE(e.requests[0].cel_errors[0].find(".?name.orValue(default)"), std::string::npos);
}

TEST(ExplainTest, CelHintIsAddedOnceAndOnlyToMissingKeys) {
  std::string once = AddCelKeyHint("no such key: model");
  EXPECT_NE(once, "no such key: model");
  EXPECT_EQ(AddCelKeyHint(once), once);
  EXPECT_EQ(AddCelKeyHint("division by zero"), "division by zero");
}

}  // namespace
}  // namespace draco::alloc
