// The 1.37 alpha allocator features (DRADeviceCompatibilityGroups, DRADerivedAttributes) and
// valueless attributes. Upstream's own test table covers them case by case
// (tests/differential/upstream_suite.sh); these pin the behaviour at the API.
#include <gtest/gtest.h>

#include "controller/allocator/allocator.h"
#include "controller/allocator/compute_api.h"
#include "controller/allocator/test_builders.h"

namespace draco::alloc {
namespace {

using testing::Claim;
using testing::GpuClass;

const Node kNode{"n0", {}, {}};

Attribute Str(const std::string& s) {
  Attribute a;
  a.kind = Attribute::Kind::kString;
  a.s = s;
  return a;
}

Device Gpu(const std::string& name, std::vector<std::string> groups = {}) {
  Device d;
  d.name = name;
  d.attributes.emplace_back("model", Str(name));
  CounterConsumption cc;
  cc.counter_set = "memory";
  cc.counters.emplace_back("gb", *Qty::Parse("1"));
  cc.compatibility_groups = std::move(groups);
  d.consumes_counters.push_back(std::move(cc));
  return d;
}

// Pool n0: the devices in one slice, the counter set "memory" (8 gb) in another.
std::vector<ResourceSlice> Pool(std::vector<Device> devices) {
  ResourceSlice s;
  s.name = "slice-n0";
  s.driver = "gpu.example.com";
  s.pool = "n0";
  s.resource_slice_count = 2;
  s.node_name = "n0";
  ResourceSlice counters = s;
  counters.name = "counters-n0";
  CounterSet set;
  set.name = "memory";
  set.counters.emplace_back("gb", *Qty::Parse("8"));
  counters.shared_counters.push_back(std::move(set));
  s.devices = std::move(devices);
  return {s, counters};
}

SearchOutcome AllocateOnN0(Features f, std::vector<Device> devices, const ResourceClaim& claim,
                           std::vector<ResourceClaim> allocated = {}) {
  ComputeConfig cfg;
  cfg.features = f;
  cfg.selectors = NewCelSelectorCompiler();
  auto a = CreateAllocator(cfg, {GpuClass()}, Pool(std::move(devices)), {}, allocated);
  EXPECT_TRUE(a.ok()) << a.status();
  if (!a.ok()) return SearchOutcome{Outcome::Kind::kError, {}, a.status().message(), "", 0};
  return ComputeAllocate(**a, kNode, {&claim});
}

std::vector<std::string> Devices(const SearchOutcome& o) {
  std::vector<std::string> out;
  for (const auto& r : o.results) {
    for (const auto& d : r.results) out.push_back(d.device);
  }
  return out;
}

TEST(AlphaFeaturesTest, ValuelessAttributeMakesTheDeviceUnusable) {
  Device d = Gpu("a");
  d.attributes.insert(d.attributes.begin(), {"broken", Attribute{}});  // no value at all
  ResourceClaim c = Claim("c", 1);
  SearchOutcome o = AllocateOnN0(Features{}, {d}, c);
  ASSERT_EQ(o.kind, Outcome::Kind::kError);
  EXPECT_NE(o.message.find("attribute broken: unsupported attribute value"), std::string::npos)
      << o.message;
}

TEST(AlphaFeaturesTest, CompatibilityGroupsMustIntersectOnACounterSet) {
  Features f;
  f.compatibility_groups = true;
  ResourceClaim two = Claim("c", 2);
  EXPECT_EQ(AllocateOnN0(f, {Gpu("a", {"x"}), Gpu("b", {"y"})}, two).kind,
            Outcome::Kind::kUnsatisfiable);
  SearchOutcome o = AllocateOnN0(f, {Gpu("a", {"x"}), Gpu("b", {"y"}), Gpu("c", {"y", "x"})}, two);
  ASSERT_EQ(o.kind, Outcome::Kind::kAllocated) << o.message;
  EXPECT_EQ(Devices(o), (std::vector<std::string>{"a", "c"}));
  // Devices without groups only go with devices without groups.
  EXPECT_EQ(AllocateOnN0(f, {Gpu("a"), Gpu("b", {"x"})}, two).kind, Outcome::Kind::kUnsatisfiable);
  EXPECT_EQ(AllocateOnN0(f, {Gpu("a"), Gpu("b")}, two).kind, Outcome::Kind::kAllocated);
}

// An allocated claim "done" holding device `device` of pool n0 for its request "gpus".
ResourceClaim ClaimAllocatedTo(const std::string& device) {
  ResourceClaim done = Claim("done", 1);
  done.allocation = AllocationResult{};
  DeviceRequestAllocationResult r;
  r.request = "gpus";
  r.driver = "gpu.example.com";
  r.pool = "n0";
  r.device = device;
  done.allocation->results.push_back(r);
  return done;
}

TEST(AlphaFeaturesTest, AllocatedPeersConstrainCompatibilityGroups) {
  Features f;
  f.compatibility_groups = true;
  ResourceClaim done = ClaimAllocatedTo("a");
  ResourceClaim one = Claim("c", 1);
  SearchOutcome o =
      AllocateOnN0(f, {Gpu("a", {"x"}), Gpu("b", {"y"}), Gpu("c", {"x"})}, one, {done});
  ASSERT_EQ(o.kind, Outcome::Kind::kAllocated) << o.message;
  EXPECT_EQ(Devices(o), (std::vector<std::string>{"c"}));
}

// The explanation counts what the search rejects: devices that share no compatibility group
// with the allocated peers on their counter set (stage "after capacity and counters").
TEST(AlphaFeaturesTest, ExplanationCountsDevicesIncompatibleWithAllocatedPeers) {
  Features f;
  f.compatibility_groups = true;
  ResourceClaim done = ClaimAllocatedTo("a");
  ComputeConfig cfg;
  cfg.features = f;
  cfg.selectors = NewCelSelectorCompiler();
  auto a = CreateAllocator(cfg, {GpuClass()},
                           Pool({Gpu("a", {"x"}), Gpu("b", {"y"}), Gpu("c", {"y"})}), {}, {done});
  ASSERT_TRUE(a.ok()) << a.status();
  ResourceClaim one = Claim("c", 1);
  Explanation e = ComputeExplain(**a, kNode, {&one});
  ASSERT_EQ(e.outcome.kind, Outcome::Kind::kUnsatisfiable);
  const RequestFunnel& fn = e.requests.at(0);
  ASSERT_GE(fn.stages.size(), 5u);
  EXPECT_EQ(fn.stages[3].name, "free");
  EXPECT_EQ(fn.stages[3].count, 2);
  EXPECT_EQ(fn.stages[4].name, "after capacity and counters");
  EXPECT_EQ(fn.stages[4].count, 0);
  EXPECT_EQ(fn.stages[4].detail,
            "2 share no compatibility group with the devices drawing on their counter sets; ");
}

TEST(AlphaFeaturesTest, CompatibilityGroupSlicesAreIgnoredWithTheGateOff) {
  ResourceClaim one = Claim("c", 1);
  EXPECT_EQ(AllocateOnN0(Features{}, {Gpu("a", {"x"})}, one).kind, Outcome::Kind::kUnsatisfiable);
}

// Two requests whose devices must agree on attribute `attr`.
ResourceClaim MatchingPair(const std::string& attr, const std::string& derived_expr) {
  ResourceClaim c = Claim("c", 1);
  c.requests.push_back(c.requests[0]);
  c.requests[1].name = "more";
  c.requests[1].exactly->name = "more";
  if (!derived_expr.empty()) {
    for (auto& r : c.requests) {
      r.exactly->has_derived_attributes = true;
      r.exactly->derived_attributes.emplace_back(attr, derived_expr);
    }
  }
  DeviceConstraint k;
  k.match_attribute = attr;
  c.constraints.push_back(k);
  return c;
}

TEST(AlphaFeaturesTest, DerivedAttributesReplaceDeviceAttributesForTheirRequest) {
  Features f;
  f.derived_attributes = true;
  // The devices' models differ, so matching on the device attribute fails...
  ResourceClaim plain = MatchingPair("gpu.example.com/model", "");
  EXPECT_EQ(AllocateOnN0(f, {Gpu("a"), Gpu("b")}, plain).kind, Outcome::Kind::kUnsatisfiable);
  // ...while a derived attribute of that name that ignores the model matches.
  ResourceClaim derived = MatchingPair("gpu.example.com/model", R"("same")");
  SearchOutcome o = AllocateOnN0(f, {Gpu("a"), Gpu("b")}, derived);
  ASSERT_EQ(o.kind, Outcome::Kind::kAllocated) << o.message;
  EXPECT_EQ(Devices(o), (std::vector<std::string>{"a", "b"}));
  // Derived values are typed: a string on one device and an int on another do not match.
  Device a = Gpu("a"), b = Gpu("b");
  a.attributes.insert(a.attributes.begin(), {"kind", Str("1")});
  Attribute one;
  one.kind = Attribute::Kind::kInt;
  one.i = 1;
  b.attributes.insert(b.attributes.begin(), {"kind", one});
  ResourceClaim mixed =
      MatchingPair("example.com/kind", R"(device.attributes["gpu.example.com"].kind)");
  EXPECT_EQ(AllocateOnN0(f, {a, b}, mixed).kind, Outcome::Kind::kUnsatisfiable);
}

TEST(AlphaFeaturesTest, DerivedAttributeErrorsAreFatal) {
  Features f;
  f.derived_attributes = true;
  ResourceClaim c = MatchingPair("example.com/x", R"(device.attributes["gpu.example.com"].nope)");
  SearchOutcome o = AllocateOnN0(f, {Gpu("a"), Gpu("b")}, c);
  ASSERT_EQ(o.kind, Outcome::Kind::kError);
  EXPECT_NE(o.message.find("evaluate derived attribute example.com/x on device "
                           "gpu.example.com/n0/a failed: no such key: nope"),
            std::string::npos)
      << o.message;
  ResourceClaim bad = MatchingPair("example.com/x", R"({"a": 1})");
  o = AllocateOnN0(f, {Gpu("a"), Gpu("b")}, bad);
  ASSERT_EQ(o.kind, Outcome::Kind::kError);
  EXPECT_NE(o.message.find("compile derived attribute example.com/x failed"), std::string::npos)
      << o.message;
}

TEST(AlphaFeaturesTest, DerivedAttributesNeedTheGate) {
  ResourceClaim c = MatchingPair("example.com/x", R"("same")");
  SearchOutcome o = AllocateOnN0(Features{}, {Gpu("a"), Gpu("b")}, c);
  ASSERT_EQ(o.kind, Outcome::Kind::kError);
  EXPECT_NE(o.message.find("cannot handle request with derived attributes, the feature is "
                           "disabled"),
            std::string::npos)
      << o.message;
}

}  // namespace
}  // namespace draco::alloc

namespace draco::alloc {
namespace {

TEST(AlphaFeaturesTest, ExplanationsSeeDerivedAttributes) {
  Features f;
  f.derived_attributes = true;
  ComputeConfig cfg;
  cfg.features = f;
  cfg.selectors = NewCelSelectorCompiler();
  // One device for two requests: unsatisfiable, but not for lack of the (derived) attribute.
  auto a = CreateAllocator(cfg, {GpuClass()}, Pool({Gpu("a")}), {}, {});
  ASSERT_TRUE(a.ok()) << a.status();
  ResourceClaim c = MatchingPair("example.com/x", R"("same")");
  Explanation e = ComputeExplain(**a, kNode, {&c});
  ASSERT_EQ(e.outcome.kind, Outcome::Kind::kUnsatisfiable);
  ASSERT_FALSE(e.requests.empty());
  for (const RequestFunnel& fn : e.requests) {
    for (const FunnelStage& st : fn.stages) {
      EXPECT_EQ(st.detail.find("lack the attribute"), std::string::npos) << st.detail;
    }
  }
}

}  // namespace
}  // namespace draco::alloc
