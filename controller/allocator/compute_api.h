// Allocator-internal: the compute-form entry points behind allocator.h. The public, api-typed
// entry points convert their inputs (from_api.h) and call these; the allocator's own tests, its
// benchmark and the oracle scenario protocol's fast paths call them directly with hand-built
// compute objects. Not for use outside controller/allocator.
//
// Semantics, costs and thread-safety are those of the public entry points of the same name
// (allocator.h); the compute objects are taken as given (no defaulting: call DefaultClaim).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "controller/allocator/allocator.h"
#include "controller/allocator/compute_model.h"

namespace draco::alloc {

// Outcome in the compute form (the search's result; Outcome carries it converted).
struct SearchOutcome {
  using Kind = Outcome::Kind;
  Kind kind = Kind::kUnsatisfiable;
  std::vector<AllocationResult> results;  // kAllocated: one per claim
  std::string message;
  std::string node;
  int64_t search_steps = 0;
};
Outcome ToOutcome(SearchOutcome o);

// Allocator::Config with the policies in the compute form (ToAllocPolicy).
struct ComputeConfig {
  Features features;
  std::shared_ptr<SelectorCompiler> selectors;
  bool prune = true;
  bool scheduler_prefilter = true;
  std::chrono::milliseconds timeout{0};
  bool deterministic_share_ids = false;
  bool default_claims = true;
  std::vector<AllocationPolicy> policies;
};
StatusOr<ComputeConfig> ToComputeConfig(const Allocator::Config& config);

// `slices` are shared, never copied (except where a taint rule applies); null entries ignored.
std::shared_ptr<const Snapshot> BuildSnapshot(
    const Features& features, std::vector<DeviceClass> classes,
    std::vector<std::shared_ptr<const ResourceSlice>> slices,
    std::vector<DeviceTaintRule> taint_rules);
std::shared_ptr<const Snapshot> BuildSnapshot(const Features& features,
                                              std::vector<DeviceClass> classes,
                                              std::vector<ResourceSlice> slices,
                                              std::vector<DeviceTaintRule> taint_rules);
// Snapshot::WithSlice with a shared compute slice (not copied unless a taint rule applies; null =
// no change).
std::shared_ptr<const Snapshot> SnapshotWithSlice(const Snapshot& snapshot,
                                                  std::shared_ptr<const ResourceSlice> slice);
std::shared_ptr<const Snapshot> SnapshotWithSlice(const Snapshot& snapshot, ResourceSlice slice);

StatusOr<std::unique_ptr<Allocator>> CreateAllocator(ComputeConfig config,
                                                     std::shared_ptr<const Snapshot> snapshot,
                                                     const std::vector<ResourceClaim>& allocated);
// Keeps `allocated` (shared, must not be mutated afterwards) instead of reading it now: without
// namespace limits nothing is read in Create; the first two pools an Allocate uses are resolved
// by scanning the claims for that pool, later pools after one grouping pass.
StatusOr<std::unique_ptr<Allocator>> CreateAllocator(
    ComputeConfig config, std::shared_ptr<const Snapshot> snapshot,
    std::shared_ptr<const std::vector<ResourceClaim>> allocated);
StatusOr<std::unique_ptr<Allocator>> CreateAllocator(ComputeConfig config,
                                                     std::vector<DeviceClass> classes,
                                                     std::vector<ResourceSlice> slices,
                                                     std::vector<DeviceTaintRule> taint_rules,
                                                     const std::vector<ResourceClaim>& allocated);
StatusOr<std::unique_ptr<Allocator>> CreateAllocator(
    ComputeConfig config, std::vector<DeviceClass> classes,
    std::vector<std::shared_ptr<const ResourceSlice>> slices,
    std::vector<DeviceTaintRule> taint_rules,
    std::shared_ptr<const std::vector<ResourceClaim>> allocated);

// Allocator::CreateFromState with the compute config.
StatusOr<std::unique_ptr<Allocator>> CreateAllocatorFromState(
    ComputeConfig config, std::shared_ptr<const Snapshot> snapshot,
    const std::shared_ptr<const AllocatedState>& state);

SearchOutcome ComputeAllocate(Allocator& a, const Node& node,
                              const std::vector<const ResourceClaim*>& claims);
SearchOutcome ComputeAllocateOnAnyNode(Allocator& a, std::span<const Node> candidates,
                                       const std::vector<const ResourceClaim*>& claims,
                                       size_t start = 0);
Explanation ComputeExplain(Allocator& a, const Node& node,
                           const std::vector<const ResourceClaim*>& claims);
// Without a claim, namespace limits do not count the allocation.
void ComputeCommit(Allocator& a, const AllocationResult& result);
void ComputeCommit(Allocator& a, const ResourceClaim& claim, const AllocationResult& result);

}  // namespace draco::alloc
