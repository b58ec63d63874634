// alloc_bench: draco's counterpart of `oracle bench-alloc`. Reads `oracle allocate` scenario lines
// on stdin; per line runs the scenario `-iters N` times and prints the median times:
//   ns          CreateAllocator(config, classes, slices, taint rules, allocated claims) +
//               Allocate, cold caches. Slices and allocated claims are the already-decoded objects
//               handed over by shared pointer (the oracle likewise gets decoded slice pointers);
//               classes and taint rules are copied, taint rules merged, the snapshot built and the
//               allocated claims read (per pool, as Allocate needs them) inside the timed region.
//               The oracle's allocated-device set is computed from the claims outside its timed
//               region.
//   sharedNs    Allocator::Create over a Snapshot and AllocatedState built once + Allocate (cold
//               allocator caches): what a controller pays per fresh allocator when it keeps one
//               shared snapshot and allocated state (the snapshot keeps what allocators learned
//               about its devices: pool indexes, CEL device views, class-selector results); the
//               "cold" column of tests/bench/allocator_vs_oracle.sh
//   updateNs    Snapshot::WithSlice (one slice replaced) + CreateFromState rebasing the shared
//               allocated state onto the new snapshot + Allocate: a slice changed
//   allocateNs  Allocate alone on an allocator built once (warm per-node/selector caches), which
//               is what a long-running controller pays per pod and node
// fillUp lines: ns is the whole fill-up (fresh allocator), perClaimNs = ns / claims.
// -profile cold|shared: runs only that column, 200 times per line, and prints nothing (a loop to
// attach a profiler to).
// -phases: also prints the cold column's phases (Snapshot::Build, Create, first Allocate) and the
// time to merely read every allocated claim once (a memory-bound floor) to stderr.
// Also prints the outcome, search steps and the allocator's index bytes per device (what the warm
// allocator has built: lazily indexed pools, per-device caches, per-node candidate lists).
#include <algorithm>
#include <chrono>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "controller/allocator/compute_api.h"
#include "controller/allocator/from_api.h"
#include "controller/allocator/scenario.h"

namespace {

using Clock = std::chrono::steady_clock;
using draco::alloc::Allocator;
using draco::alloc::ComputeConfig;
using draco::alloc::Outcome;
using draco::alloc::SearchOutcome;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

// The scenario in the allocator's compute form (converted once, outside the timed regions).
struct Compute {
  std::string id, mode;
  std::optional<draco::alloc::Node> node;
  std::vector<draco::alloc::Node> nodes;
  std::vector<draco::alloc::DeviceClass> classes;
  std::vector<draco::alloc::ResourceSlice> slices;
  std::vector<draco::alloc::ResourceClaim> allocated_claims, claims;
  std::vector<draco::alloc::DeviceTaintRule> taint_rules;
  draco::alloc::Features features;
};

Compute ToCompute(const draco::alloc::Scenario& s) {
  using namespace draco::alloc;
  Compute c;
  c.id = s.id;
  c.mode = s.mode;
  if (s.node) c.node = ToAllocNode(*s.node);
  for (const auto& n : s.nodes) c.nodes.push_back(ToAllocNode(n));
  for (const auto& k : s.classes) c.classes.push_back(ToAllocClass(k));
  for (const auto& sl : s.slices) c.slices.push_back(ToAllocSlice(*sl));
  for (const auto& k : s.allocated_claims) c.allocated_claims.push_back(ToAllocClaim(k));
  for (const auto& k : s.claims) c.claims.push_back(ToAllocClaim(k));
  for (const auto& r : s.taint_rules) c.taint_rules.push_back(ToAllocTaintRule(r));
  c.features = s.features;
  return c;
}

int main(int argc, char** argv) {
  int iters = 20;
  bool phases = false;  // -phases: also print the cold column's phases to stderr
  std::string profile;  // -profile cold|shared
  for (int i = 1; i < argc; ++i) {
    if (i + 1 < argc && std::strcmp(argv[i], "-iters") == 0) {
      iters = std::max(1, std::atoi(argv[i + 1]));
    }
    if (std::strcmp(argv[i], "-phases") == 0) phases = true;
    if (i + 1 < argc && std::strcmp(argv[i], "-profile") == 0) profile = argv[i + 1];
  }
  auto selectors = draco::alloc::NewCelSelectorCompiler();
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    auto s = draco::alloc::ParseScenario(line);
    if (!s.ok()) {
      std::cout << "{\"inputError\":\"" << s.status().message() << "\"}\n";
      continue;
    }
    const Compute sc = ToCompute(*s);
    if (sc.claims.empty()) continue;  // CEL-only lines (S3c)
    ComputeConfig cfg;
    cfg.features = sc.features;
    cfg.selectors = selectors;
    cfg.timeout = std::chrono::milliseconds(10000);
    std::vector<const draco::alloc::ResourceClaim*> claims;
    for (const auto& c : sc.claims) claims.push_back(&c);
    draco::alloc::Node node = sc.node.value_or(draco::alloc::Node{});
    // The decoded slices, owned once (the oracle likewise gets decoded slice pointers).
    std::vector<std::shared_ptr<const draco::alloc::ResourceSlice>> owned;
    for (const auto& sl : sc.slices) {
      owned.push_back(std::make_shared<const draco::alloc::ResourceSlice>(sl));
    }
    // Likewise the decoded allocated claims (read inside the timed region, not copied).
    auto allocated_ptr =
        std::make_shared<const std::vector<draco::alloc::ResourceClaim>>(sc.allocated_claims);
    if (!profile.empty()) {
      auto snap = draco::alloc::BuildSnapshot(sc.features, sc.classes, owned, sc.taint_rules);
      auto state = (*CreateAllocator(cfg, snap, sc.allocated_claims))->State();
      for (int k = 0; k < 200; ++k) {
        auto a = profile == "cold"
                     ? CreateAllocator(cfg, sc.classes, owned, sc.taint_rules, allocated_ptr)
                     : CreateAllocatorFromState(cfg, snap, state);
        ComputeAllocate(**a, node, claims);
      }
      continue;
    }
    std::vector<double> cold, warm;
    std::string outcome;
    int64_t steps = 0;
    double bytes_per_device = 0;
    if (sc.mode == "fillUp") {
      int runs = std::min(iters, 3);
      for (int k = 0; k < runs; ++k) {
        auto ptrs = owned;
        auto t0 = Clock::now();
        auto a = CreateAllocator(cfg, sc.classes, std::move(ptrs), sc.taint_rules, allocated_ptr);
        int allocated = 0;
        for (size_t i = 0; i < claims.size(); ++i) {
          SearchOutcome o =
              ComputeAllocateOnAnyNode(**a, sc.nodes, {claims[i]}, i % sc.nodes.size());
          if (o.kind == Outcome::Kind::kAllocated) {
            ComputeCommit(**a, o.results[0]);
            ++allocated;
          }
        }
        cold.push_back(std::chrono::duration<double, std::nano>(Clock::now() - t0).count());
        outcome = "fillUp:" + std::to_string(allocated) + "/" + std::to_string(claims.size());
        bytes_per_device = (*a)->IndexBytesPerDevice();
      }
      double ns = Median(cold);
      std::cout << "{\"id\":\"" << sc.id << "\",\"iters\":" << runs << ",\"ns\":" << int64_t(ns)
                << ",\"perClaimNs\":" << int64_t(ns / double(claims.size())) << ",\"outcome\":\""
                << outcome << "\",\"bytesPerDevice\":" << int64_t(bytes_per_device) << "}"
                << std::endl;
      continue;
    }
    for (int k = 0; k < iters; ++k) {
      auto ptrs = owned;
      auto t0 = Clock::now();
      auto a = CreateAllocator(cfg, sc.classes, std::move(ptrs), sc.taint_rules, allocated_ptr);
      SearchOutcome o = ComputeAllocate(**a, node, claims);
      cold.push_back(std::chrono::duration<double, std::nano>(Clock::now() - t0).count());
      outcome = std::string(draco::alloc::OutcomeKindName(o.kind));
      steps = o.search_steps;
    }
    if (phases) {
      std::vector<double> build, create, first;
      for (int k = 0; k < iters; ++k) {
        auto ptrs = owned;
        auto t0 = Clock::now();
        auto sn =
            draco::alloc::BuildSnapshot(sc.features, sc.classes, std::move(ptrs), sc.taint_rules);
        auto t1 = Clock::now();
        auto a = CreateAllocator(cfg, sn, allocated_ptr);
        auto t2 = Clock::now();
        ComputeAllocate(**a, node, claims);
        auto t3 = Clock::now();
        build.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count());
        create.push_back(std::chrono::duration<double, std::nano>(t2 - t1).count());
        first.push_back(std::chrono::duration<double, std::nano>(t3 - t2).count());
      }
      std::vector<double> scan;
      size_t sink = 0;
      for (int k = 0; k < iters; ++k) {
        auto t0 = Clock::now();
        for (const auto& c : sc.allocated_claims) {
          if (!c.allocation) continue;
          for (const auto& r : c.allocation->results) sink += r.pool.size() + r.driver[0];
        }
        scan.push_back(std::chrono::duration<double, std::nano>(Clock::now() - t0).count());
      }
      std::cerr << sc.id << ": reading the allocated claims once " << int64_t(Median(scan))
                << (sink == 1 ? " " : "") << "; build " << int64_t(Median(build)) << " create "
                << int64_t(Median(create)) << " first allocate " << int64_t(Median(first))
                << " (ns medians)\n";
    }
    auto snap = draco::alloc::BuildSnapshot(sc.features, sc.classes, owned, sc.taint_rules);
    auto state = (*CreateAllocator(cfg, snap, sc.allocated_claims))->State();
    std::vector<double> shared, update;
    for (int k = 0; k < iters; ++k) {
      auto t0 = Clock::now();
      auto a = CreateAllocatorFromState(cfg, snap, state);
      ComputeAllocate(**a, node, claims);
      shared.push_back(std::chrono::duration<double, std::nano>(Clock::now() - t0).count());
    }
    if (!sc.slices.empty()) {
      // A new object with the content of the middle slice (an update event's decoded slice).
      auto changed =
          std::make_shared<const draco::alloc::ResourceSlice>(sc.slices[sc.slices.size() / 2]);
      for (int k = 0; k < iters; ++k) {
        auto t0 = Clock::now();
        auto next = SnapshotWithSlice(*snap, changed);
        auto a = CreateAllocatorFromState(cfg, next, state);
        ComputeAllocate(**a, node, claims);
        update.push_back(std::chrono::duration<double, std::nano>(Clock::now() - t0).count());
      }
    }
    auto a = CreateAllocator(cfg, sc.classes, owned, sc.taint_rules, allocated_ptr);
    ComputeAllocate(**a, node, claims);  // warm the per-node caches
    int warm_iters = std::max(iters, 50);
    for (int k = 0; k < warm_iters; ++k) {
      auto t0 = Clock::now();
      SearchOutcome o = ComputeAllocate(**a, node, claims);
      warm.push_back(std::chrono::duration<double, std::nano>(Clock::now() - t0).count());
    }
    bytes_per_device = (*a)->IndexBytesPerDevice();
    std::cout << "{\"id\":\"" << sc.id << "\",\"iters\":" << iters
              << ",\"ns\":" << int64_t(Median(cold)) << ",\"sharedNs\":" << int64_t(Median(shared))
              << ",\"updateNs\":" << int64_t(Median(update))
              << ",\"allocateNs\":" << int64_t(Median(warm)) << ",\"outcome\":\"" << outcome
              << "\",\"searchSteps\":" << steps
              << ",\"bytesPerDevice\":" << int64_t(bytes_per_device) << "}" << std::endl;
  }
  return 0;
}
