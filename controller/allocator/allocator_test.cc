// API-level tests of the allocator (the upstream semantics are covered case by case by
// tests/differential against the oracle).
#include "controller/allocator/allocator.h"

#include <gtest/gtest.h>

#include "controller/allocator/compute_api.h"
#include "controller/allocator/explain.h"
#include "controller/allocator/scenario.h"
#include "controller/allocator/test_builders.h"

namespace draco::alloc {
namespace {

using testing::Claim;
using testing::GpuClass;

ResourceSlice Slice(const std::string& node, int devices) {
  ResourceSlice s;
  s.name = "slice-" + node;
  s.driver = "gpu.example.com";
  s.pool = node;
  s.resource_slice_count = 1;
  s.node_name = node;
  for (int i = 0; i < devices; ++i) {
    Device d;
    d.name = "gpu-" + std::to_string(i);
    Attribute a;
    a.kind = Attribute::Kind::kInt;
    a.i = i % 2;
    d.attributes.emplace_back("numa", a);
    s.devices.push_back(std::move(d));
  }
  return s;
}

DeviceRequestAllocationResult Result(const std::string& device) {
  DeviceRequestAllocationResult r;
  r.request = "gpus";
  r.driver = "gpu.example.com";
  r.pool = "n0";
  r.device = device;
  return r;
}

std::unique_ptr<Allocator> New(std::vector<ResourceSlice> slices,
                               std::vector<ResourceClaim> allocated = {}) {
  ComputeConfig cfg;
  cfg.selectors = NewCelSelectorCompiler();
  auto a = CreateAllocator(cfg, {GpuClass()}, std::move(slices), {}, allocated);
  EXPECT_TRUE(a.ok()) << a.status();
  return std::move(a).value();
}

TEST(AllocatorTest, CommittedDevicesAreNeverHandedOutTwice) {
  auto a = New({Slice("n0", 2)});
  Node n0{"n0", {}, {}};
  ResourceClaim c1 = Claim("c1", 1), c2 = Claim("c2", 1), c3 = Claim("c3", 1);
  SearchOutcome o1 = ComputeAllocate(*a, n0, {&c1});
  ASSERT_EQ(o1.kind, Outcome::Kind::kAllocated);
  ComputeCommit(*a, o1.results[0]);
  SearchOutcome o2 = ComputeAllocate(*a, n0, {&c2});
  ASSERT_EQ(o2.kind, Outcome::Kind::kAllocated);
  EXPECT_NE(o1.results[0].results[0].device, o2.results[0].results[0].device);
  ComputeCommit(*a, o2.results[0]);
  EXPECT_EQ(ComputeAllocate(*a, n0, {&c3}).kind, Outcome::Kind::kUnsatisfiable);
}

TEST(AllocatorTest, AllocatedClaimsOccupyDevices) {
  ResourceClaim done = Claim("done", 1);
  done.allocation = AllocationResult{};
  done.allocation->results.push_back(Result("gpu-0"));
  auto a = New({Slice("n0", 2)}, {done});
  ResourceClaim c = Claim("c", 1);
  SearchOutcome o = ComputeAllocate(*a, Node{"n0", {}, {}}, {&c});
  ASSERT_EQ(o.kind, Outcome::Kind::kAllocated);
  EXPECT_EQ(o.results[0].results[0].device, "gpu-1");
  ASSERT_TRUE(o.results[0].node_selector.has_value());
  EXPECT_EQ(o.results[0].node_selector->terms[0].match_fields[0].values[0], "n0");
}

TEST(AllocatorTest, PicksTheFirstNodeThatFits) {
  auto a = New({Slice("n0", 1), Slice("n1", 3)});
  std::vector<Node> nodes(2);
  nodes[0].name = "n0";
  nodes[1].name = "n1";
  ResourceClaim c = Claim("c", 2);
  SearchOutcome o = ComputeAllocateOnAnyNode(*a, nodes, {&c});
  ASSERT_EQ(o.kind, Outcome::Kind::kAllocated);
  EXPECT_EQ(o.node, "n1");
  EXPECT_EQ(o.results[0].results.size(), 2u);
}

TEST(AllocatorTest, UnsatisfiableCountIsAnsweredWithoutExhaustiveSearch) {
  auto a = New({Slice("n0", 31)});
  ResourceClaim c = Claim("c", 32);
  SearchOutcome o = ComputeAllocate(*a, Node{"n0", {}, {}}, {&c});
  EXPECT_EQ(o.kind, Outcome::Kind::kUnsatisfiable);
  EXPECT_LT(o.search_steps, 100);  // upstream: C(31, k) combinations, seconds of work
}

TEST(AllocatorTest, ExplanationNamesTheEliminatingStage) {
  ResourceClaim done = Claim("done", 1);
  done.allocation = AllocationResult{};
  done.allocation->results.push_back(Result("gpu-0"));
  auto a = New({Slice("n0", 2)}, {done});
  ResourceClaim c = Claim("c", 2);
  Explanation e = ComputeExplain(*a, Node{"n0", {}, {}}, {&c});
  EXPECT_EQ(e.outcome.kind, Outcome::Kind::kUnsatisfiable);
  ASSERT_EQ(e.requests.size(), 1u);
  const RequestFunnel& f = e.requests[0];
  EXPECT_EQ(f.stages[0].count, 2);
  EXPECT_EQ(f.stages[3].name, "free");
  EXPECT_EQ(f.stages[3].count, 1);
  EXPECT_NE(f.verdict.find("eliminated at free"), std::string::npos) << f.verdict;
  EXPECT_NE(ExplanationToJson(e).find("\"funnel\""), std::string::npos);
  EXPECT_NE(ExplanationToText(e).find("needs 2"), std::string::npos);
}

TEST(AllocatorTest, CelErrorsAreFatalAndQuoted) {
  auto a = New({Slice("n0", 1)});
  ResourceClaim c = Claim("c", 1);
  c.requests[0].exactly->selectors.push_back("device.attributes[\"gpu.example.com\"].missing == 1");
  Explanation e = ComputeExplain(*a, Node{"n0", {}, {}}, {&c});
  EXPECT_EQ(e.outcome.kind, Outcome::Kind::kError);
  EXPECT_NE(e.outcome.message.find("CEL runtime error"), std::string::npos) << e.outcome.message;
  ASSERT_EQ(e.requests.size(), 1u);
  ASSERT_FALSE(e.requests[0].cel_errors.empty());
}

TEST(ScenarioTest, RunsOracleProtocolLines) {
  RunOptions opts;
  opts.selectors = NewCelSelectorCompiler();
  std::string line = R"({"id":"x","node":{"metadata":{"name":"n0"}},
    "classes":[{"metadata":{"name":"gpu"},"spec":{}}],
    "slices":[{"metadata":{"name":"s"},"spec":{"driver":"d.example.com",
      "pool":{"name":"p","generation":0,"resourceSliceCount":1},"nodeName":"n0",
      "devices":[{"name":"a"}]}}],
    "claims":[{"metadata":{"name":"c","namespace":"default"},
      "spec":{"devices":{"requests":[{"name":"r","exactly":{"deviceClassName":"gpu"}}]}}}]})";
  std::string compact;
  for (char ch : line) {
    if (ch != '\n') compact += ch;
  }
  EXPECT_EQ(
      RunScenarioLine(compact, opts),
      R"({"id":"x","results":[{"devices":{"results":[{"request":"r","driver":"d.example.com",)"
      R"("pool":"p","device":"a"}]},"nodeSelector":{"nodeSelectorTerms":[{"matchFields":[)"
      R"({"key":"metadata.name","operator":"In","values":["n0"]}]}]}}]})");
  EXPECT_NE(RunScenarioLine("{", opts).find("inputError"), std::string::npos);
}

}  // namespace
}  // namespace draco::alloc
