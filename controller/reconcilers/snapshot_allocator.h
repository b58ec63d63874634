// SnapshotAllocator: the ClaimAllocator over draco's structured-parameters allocator
// (controller/allocator), kept incrementally in step with the ClusterCache.
//
// The alloc::Allocator snapshot (classes, slices, taint rules, allocated devices) is built once and
// then maintained: allocations that appear in the cache (by draco or by anyone else, e.g.
// kube-scheduler) are committed from the cache's allocation log; draco's own results are committed
// the moment they are chosen (in flight). The snapshot is rebuilt when slices, classes or taint
// rules changed, after a failed write (Settle with written=false), and when an attempt fails on a
// snapshot that predates a deallocation (freed devices are picked up lazily; a stale snapshot can
// only over-report use). A rebuild reads allocations from the cache, which does not show what is
// still in flight, so in-flight results are kept aside until Settle() and added to every rebuild:
// without that, a rebuild between choosing a device and the cache showing the write would hand
// the device out a second time.
//
// AllocationPolicies (draco.dev, from the cache) are part of the snapshot inputs: a policy change
// rebuilds the snapshot, and every committed allocation (own or observed) counts against the
// governing policy's namespace limits. Strategies BinPack/Spread order the candidate nodes.
//
// Node choice: candidate nodes are tried round-robin from a rotating start (spreading pods like
// kube-scheduler's default spreading does), first fit.
//
// Not thread-safe (see ClaimAllocator): the controller serialises calls.
#pragma once

#include <memory>
#include <unordered_map>
#include <unordered_set>

#include "controller/allocator/allocator.h"
#include "controller/reconcilers/cluster_cache.h"
#include "controller/reconcilers/interfaces.h"

namespace draco::reconcilers {

class SnapshotAllocator : public ClaimAllocator {
 public:
  // `cache` must outlive the allocator. config.selectors is required for CEL selectors.
  SnapshotAllocator(ClusterCache& cache, alloc::Allocator::Config config);
  AllocateResponse Allocate(const AllocateRequest& request) override;
  void Settle(const std::vector<ClaimPtr>& claims, bool written) override;

  int64_t rebuilds() const { return rebuilds_; }

 private:
  Status EnsureSnapshot(bool include_deallocations);
  AllocateResponse AllocateOnce(const AllocateRequest& request, bool include_deallocations);

  ClusterCache& cache_;
  alloc::Allocator::Config config_;
  std::shared_ptr<const alloc::Snapshot> snapshot_;  // slices, classes, taint rules
  std::unique_ptr<alloc::Allocator> alloc_;
  CacheGenerations built_{};
  uint64_t log_pos_ = 0;
  std::unordered_set<std::string> committed_;  // claim UIDs in the snapshot
  // Claims allocated by Allocate and not settled yet, by UID, with their allocation.
  struct InFlight {
    ClaimPtr claim;
    api::AllocationResult result;
  };
  std::unordered_map<std::string, InFlight> in_flight_;
  bool dirty_ = true;
  size_t next_start_ = 0;
  int64_t rebuilds_ = 0;
};

}  // namespace draco::reconcilers
