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
// Scheduler holds (scheduler_holds.h): while pods with DRA demand are in a scheduler's hands, the
// devices their scheduler may be choosing at this moment are treated as allocated (they are part
// of every rebuild), so draco never hands out a device kube-scheduler may be giving to one of
// those pods at the same time. They are recomputed when those pods, the allocator inputs, the
// deallocations or the set of nodes change; with no such pod this costs one index lookup per call.
//
// Node choice: candidate nodes are tried round-robin from a rotating start (spreading pods like
// kube-scheduler's default spreading does), first fit.
//
// Not thread-safe (see ClaimAllocator): the controller serialises calls.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <unordered_map>
#include <unordered_set>

#include "controller/allocator/allocator.h"
#include "controller/reconcilers/cluster_cache.h"
#include "controller/reconcilers/interfaces.h"
#include "controller/reconcilers/scheduler_holds.h"

namespace draco::reconcilers {

class SnapshotAllocator : public ClaimAllocator {
 public:
  // `cache` (and `metrics`, may be null) must outlive the allocator. config.selectors is required
  // for CEL selectors.
  SnapshotAllocator(ClusterCache& cache, alloc::Allocator::Config config,
                    metrics::ControllerMetrics* metrics = nullptr);
  AllocateResponse Allocate(const AllocateRequest& request) override;
  void Settle(const std::vector<ClaimPtr>& claims, bool written) override;
  size_t HeldDevices() const override { return held_devices_.load(); }

  int64_t rebuilds() const { return rebuilds_; }
  // The devices held for pods in a scheduler's hands, as of the last Allocate.
  const SchedulerHolds& holds() const { return holds_; }

 private:
  Status EnsureSnapshot(bool include_deallocations);
  // Builds snapshot_ from the cache's classes, slices and taint rules when they changed.
  void EnsureInputs(const CacheGenerations& gen);
  // Every claim the cache shows allocated plus the in-flight ones (`ptrs`), with the objects
  // behind them and their UIDs.
  struct AllocatedView {
    std::vector<ClaimPtr> cached;
    std::vector<api::ResourceClaim> in_flight;
    std::vector<const api::ResourceClaim*> ptrs;
    std::unordered_set<std::string> uids;
  };
  AllocatedView Allocated() const;
  // Recomputes holds_ when its inputs changed; a changed set of held devices marks a rebuild.
  void RefreshHolds();
  AllocateResponse AllocateOnce(const AllocateRequest& request, bool include_deallocations);

  ClusterCache& cache_;
  alloc::Allocator::Config config_;
  std::shared_ptr<const alloc::Snapshot> snapshot_;  // slices, classes, taint rules
  std::unique_ptr<alloc::Allocator> alloc_;
  CacheGenerations built_{};
  uint64_t snapshot_inputs_ = 0;  // the inputs generation snapshot_ was built from
  uint64_t log_pos_ = 0;
  std::unordered_set<std::string> committed_;  // claim UIDs in the snapshot
  // Claims allocated by Allocate and not settled yet, by UID, with their allocation.
  struct InFlight {
    ClaimPtr claim;
    api::AllocationResult result;
  };
  std::unordered_map<std::string, InFlight> in_flight_;
  SchedulerHolds holds_;
  std::string holds_key_;  // the inputs holds_ was computed from
  std::chrono::steady_clock::time_point holds_time_{};
  metrics::ControllerMetrics* metrics_;
  std::atomic<size_t> held_devices_{0};  // holds_.devices, for other threads
  bool dirty_ = true;
  size_t next_start_ = 0;
  int64_t rebuilds_ = 0;
};

}  // namespace draco::reconcilers
