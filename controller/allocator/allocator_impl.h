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

class Allocator::Impl {
 public:
  Impl(Config config) : config_(std::move(config)) {}

  Config config_;
  std::vector<DeviceClass> classes_;
  std::unordered_map<std::string, int> class_by_name_;
  std::vector<ResourceSlice> slices_;
  std::vector<int> slice_pool_key_;
  std::vector<int> slice_gid_base_;
  std::unordered_map<std::string, std::vector<int>> node_slices_;
  std::vector<int> shared_slices_;
  struct PoolKey {
    std::string driver, pool;
    std::vector<int> slices;
  };
  std::vector<PoolKey> pool_keys_;
  std::unordered_map<std::string, int> pool_key_index_;
  std::vector<int> gid_identity_;
  std::vector<IdentityState> identities_;
  std::unordered_map<std::string, int> identity_index_;
  std::vector<uint64_t> pool_epoch_;  // bumped when allocated state of a pool changes
  int64_t num_devices_ = 0;

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
  void AddAllocation(const AllocationResult& result);
  Status PreFilter(const std::vector<const ResourceClaim*>& claims, std::string* reason) const;
  Outcome Run(const Node& node, const std::vector<const ResourceClaim*>& claims,
              Explanation* explain);
};

}  // namespace draco::alloc
