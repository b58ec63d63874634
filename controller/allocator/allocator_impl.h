// Internal data structures of the allocator (not part of the public API; shared by
// allocator.cc and explain.cc).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "controller/allocator/allocator.h"

namespace draco::alloc {

inline constexpr int kMaxResultsPerClaim = 32;  // AllocationResultsMaxSize

// A pool as gathered for one node (upstream's Pool).
struct PoolView {
  int pool_key = -1;
  bool incomplete = false;
  bool invalid = false;
  std::string invalid_reason;
  std::vector<int> targeting;      // slice indices, sorted by slice name
  std::vector<int> not_targeting;  // slice indices
  // Counter sets of the pool, flattened: set s owns counters [set_offset[s], set_offset[s+1]).
  std::vector<int> counter_set_slices;  // (slice index << 8 | set index) per set
  std::vector<std::string> set_names;
  std::vector<int> set_offset;
  std::vector<std::string> counter_names;
  std::vector<Amount> counter_values;
  // Available counters (shared values minus allocated consumption), cached per state epoch.
  std::vector<Amount> available;
  uint64_t available_epoch = ~0ull;
};

struct Candidate {
  int slice = 0;
  int device = 0;  // index in slice
  int gid = 0;     // global device index
  int pool = 0;    // index in NodePools::pools
  // Flattened counter consumption: (flat counter index, amount).
  std::vector<std::pair<int, Amount>> consumption;
};

struct NodePools {
  Status error;
  std::vector<PoolView> pools;
  std::vector<Candidate> cands;  // devices of usable pools, in upstream search order
  std::vector<std::string> obsolete;
  std::map<std::string, std::string> labels;  // for cache validation
};

// State of one (driver, pool, device) identity in the allocated state.
struct IdentityState {
  bool exclusive = false;
  int shares = 0;  // AllocatedSharedDeviceIDs entries
  bool has_aggregate = false;
  std::vector<std::pair<std::string, Amount>> aggregate;  // summed consumedCapacity
};

// Read-only list of shared slices, indexable like a vector of slices.
class SliceList {
 public:
  const ResourceSlice& operator[](size_t i) const { return *ptrs_[i]; }
  size_t size() const { return ptrs_.size(); }
  std::vector<std::shared_ptr<const ResourceSlice>> ptrs_;
};

// The immutable, indexed cluster snapshot behind alloc::Snapshot (see allocator.h).
struct Snapshot::Data {
  Features features;
  std::vector<DeviceTaintRule> taint_rules;
  std::vector<DeviceClass> classes;
  std::unordered_map<std::string, int> class_by_name;
  SliceList slices;  // taint rules already merged
  std::vector<int> slice_pool_key;
  std::vector<int> slice_gid_base;
  std::unordered_map<std::string, std::vector<int>> node_slices;
  std::vector<int> shared_slices;
  struct PoolKey {
    std::string driver, pool;
    std::vector<int> slices;
  };
  std::vector<PoolKey> pool_keys;
  std::unordered_map<std::string, int> pool_key_index;
  std::vector<int> gid_identity;
  std::vector<int> identity_gid;  // first gid of each identity
  std::unordered_map<std::string, int> identity_index;
  int64_t num_devices = 0;

  // (Re)builds every index from `classes` and `slices`.
  void Index();
};

struct AllocatedState::Data {
  std::shared_ptr<const Snapshot> snapshot;
  std::vector<std::string> policy_names;
  std::vector<IdentityState> identities;
  std::vector<uint64_t> pool_epoch;
  std::map<std::pair<int, std::string>, std::pair<int64_t, std::map<std::string, Amount>>> usage;
};

class Allocator::Impl {
 public:
  Impl(Config config, std::shared_ptr<const Snapshot> snap)
      : config_(std::move(config)),
        snap_(std::move(snap)),
        d_(snap_->data()),
        classes_(d_.classes),
        class_by_name_(d_.class_by_name),
        slices_(d_.slices),
        slice_pool_key_(d_.slice_pool_key),
        slice_gid_base_(d_.slice_gid_base),
        node_slices_(d_.node_slices),
        shared_slices_(d_.shared_slices),
        pool_keys_(d_.pool_keys),
        pool_key_index_(d_.pool_key_index),
        gid_identity_(d_.gid_identity),
        identity_index_(d_.identity_index),
        num_devices_(d_.num_devices) {}

  Config config_;
  std::shared_ptr<const Snapshot> snap_;
  const Snapshot::Data& d_;
  // Immutable parts (views into the shared snapshot).
  const std::vector<DeviceClass>& classes_;
  const std::unordered_map<std::string, int>& class_by_name_;
  const SliceList& slices_;
  const std::vector<int>& slice_pool_key_;
  const std::vector<int>& slice_gid_base_;
  const std::unordered_map<std::string, std::vector<int>>& node_slices_;
  const std::vector<int>& shared_slices_;
  using PoolKey = Snapshot::Data::PoolKey;
  const std::vector<PoolKey>& pool_keys_;
  const std::unordered_map<std::string, int>& pool_key_index_;
  const std::vector<int>& gid_identity_;
  const std::unordered_map<std::string, int>& identity_index_;
  const int64_t num_devices_;

  // Mutable allocation state.
  std::vector<IdentityState> identities_;
  std::vector<uint64_t> pool_epoch_;  // bumped when allocated state of a pool changes

  // Per-node gathered pools.
  std::unordered_map<std::string, std::unique_ptr<NodePools>> node_cache_;

  // Class selector results per class: per gid 0 unknown, 1 false, 2 true, 3 error.
  std::vector<std::vector<uint8_t>> class_sel_;
  std::vector<std::unordered_map<int, std::string>> class_sel_err_;
  // Compiled selectors (or compile errors) by expression.
  struct Compiled {
    std::shared_ptr<const CompiledSelector> sel;
    Status error;
  };
  std::unordered_map<std::string, Compiled> compiled_;

  // CEL views of devices, built on first use (per gid).
  std::vector<std::shared_ptr<const PreparedDevice>> prepared_;

  std::mt19937_64 rng_{std::random_device{}()};
  int64_t share_counter_ = 0;

  // Helpers used by the search and the explainer.
  const NodePools& GatherPools(const Node& node);
  const Compiled& Compile(const std::string& expr);
  // Class selectors for device `gid`: 1 false, 2 true, 3 error (message in `err`).
  uint8_t ClassSelect(int class_idx, int gid, std::string* err);
  const PreparedDevice* Prepared(int gid);
  int SliceOfGid(int gid) const;
  const Device& DeviceOf(const Candidate& c) const { return slices_[c.slice].devices[c.device]; }
  const IdentityState& Identity(int gid) const { return identities_[gid_identity_[gid]]; }
  bool IsDeviceAllocated(int gid) const {
    const IdentityState& s = Identity(gid);
    return s.exclusive || s.shares > 0 || s.has_aggregate;
  }
  const std::vector<Amount>& AvailableCounters(PoolView& pool);
  std::string NewShareId();
  // Records `result` as allocated; with `claim`, also counts it against namespace limits.
  void AddAllocation(const AllocationResult& result, const ResourceClaim* claim);

  // --- AllocationPolicy ---
  struct Usage {
    int64_t devices = 0;
    std::map<std::string, Amount> capacity;
  };
  std::vector<int> class_policy_;                       // per class: governing policy index, or -1
  std::map<std::pair<int, std::string>, Usage> usage_;  // committed, per (policy, namespace)
  void InitPolicies();
  // Governing policy of a class index (-1: none).
  int PolicyOf(int class_idx) const {
    return class_idx < 0 || class_policy_.empty() ? -1 : class_policy_[size_t(class_idx)];
  }
  // Device class of result `request` ("req" or "req/sub") in `claim`, or "".
  static std::string ClassOfRequest(const ResourceClaim& claim, std::string_view request);
  // capacity[name] of the device with identity key parts, or 0.
  Amount DeviceCapacity(int gid, const std::string& name) const;
  // Strategy for ordering nodes for these claims (first governed non-FirstFit request).
  Strategy ClaimsStrategy(const std::vector<const ResourceClaim*>& claims) const;
  // Allocated devices on node-local slices of `node`.
  int64_t NodeAllocatedCount(const std::string& node) const;
  Status PreFilter(const std::vector<const ResourceClaim*>& claims, std::string* reason) const;
  Outcome Run(const Node& node, const std::vector<const ResourceClaim*>& claims,
              Explanation* explain);
};

}  // namespace draco::alloc
