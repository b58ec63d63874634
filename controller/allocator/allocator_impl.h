// Internal data structures of the allocator (not part of the public API; shared by
// allocator*.cc, search*.cc and explain*.cc).
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "controller/allocator/allocator.h"
#include "controller/allocator/compute_api.h"
#include "controller/allocator/prepared_cache.h"
#include "controller/allocator/selector.h"

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
  int ident = 0;   // canonical gid (allocated-state slot of its identity)
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

// Allocated state of one (driver, pool, device) identity, as read by the search.
struct IdentityView {
  bool exclusive = false;
  int shares = 0;  // AllocatedSharedDeviceIDs entries
  bool has_aggregate = false;
  const std::vector<std::pair<std::string, Amount>>* aggregate = nullptr;  // summed consumption
};

// Summed consumed capacity of shared devices, by canonical gid.
using AggregateMap = std::unordered_map<int, std::vector<std::pair<std::string, Amount>>>;

// Compact per-identity state word: bit 0 exclusive, bit 1 has aggregate, bits 2.. shares.
inline constexpr uint32_t kExclusiveBit = 1;
inline constexpr uint32_t kAggregateBit = 2;
inline constexpr uint32_t kShareUnit = 4;

// Read-only list of shared slices, indexable like a vector of slices.
class SliceList {
 public:
  const ResourceSlice& operator[](size_t i) const { return *ptrs_[i]; }
  size_t size() const { return ptrs_.size(); }
  std::vector<std::shared_ptr<const ResourceSlice>> ptrs_;
};

// Hash of a (driver, pool) pair (8 bytes at a time; names are short).
inline uint64_t HashName(std::string_view s, uint64_t h) {
  const char* p = s.data();
  const size_t n = s.size();
  auto load8 = [](const char* q) {
    uint64_t v;
    std::memcpy(&v, q, 8);
    return v;
  };
  auto load4 = [](const char* q) {
    uint32_t v;
    std::memcpy(&v, q, 4);
    return static_cast<uint64_t>(v);
  };
  uint64_t tail;
  if (n >= 8) {
    for (size_t i = 0; i + 8 < n; i += 8) {
      h = (h ^ load8(p + i)) * 0x9E3779B97F4A7C15ull;
      h ^= h >> 32;
    }
    tail = load8(p + n - 8);  // overlaps the last full word: fixed-size loads only
  } else if (n >= 4) {
    tail = load4(p) | (load4(p + n - 4) << 32);
  } else {
    tail = n == 0 ? 0
                  : static_cast<uint64_t>(static_cast<uint8_t>(p[0])) |
                        static_cast<uint64_t>(static_cast<uint8_t>(p[n / 2])) << 8 |
                        static_cast<uint64_t>(static_cast<uint8_t>(p[n - 1])) << 16;
  }
  h ^= tail ^ (static_cast<uint64_t>(n) << 56);
  h ^= h >> 33;  // murmur3 finalizer: every input bit reaches the low (slot) bits
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 33);
}
// Pools are hashed by pool name only: pool names rarely repeat across drivers (a repeat only
// lengthens a probe chain), and Build then never reads the driver string of a new pool.
// Per-slice node-name hash for linear node scans without touching slice objects (never 0).
inline uint32_t NodeHash(std::string_view node) {
  return node.empty() ? 0 : uint32_t(HashName(node, 0x13198A2E03707344ull)) | 1u;
}
inline uint32_t NodeHash(const std::optional<std::string>& node) {
  return node ? NodeHash(static_cast<std::string_view>(*node)) : 0;
}

inline uint64_t HashPool(std::string_view /*driver*/, std::string_view pool) {
  return HashName(pool, 0x243F6A8885A308D3ull);
}

// Interned (driver, pool) names in an open-addressing table. Pool ids are stable along a
// WithSlice/WithoutSlice chain: a derived snapshot shares the table, or extends a copy of it
// (same `lineage`, ids only appended; a pool whose last slice went away stays as an empty pool).
// Names are views into `owners` (the slice that introduced each pool), kept alive here.
struct PoolTable {
  struct Key {
    std::string_view driver, pool;
  };
  uint64_t lineage = 0;
  std::vector<Key> keys;
  std::vector<uint64_t> key_hash;
  std::vector<std::shared_ptr<const ResourceSlice>> owners;
  std::vector<int32_t> slots;  // pool id + 1, 0 = empty; size is a power of two
  int Find(std::string_view driver, std::string_view pool, uint64_t h) const {
    if (slots.empty()) return -1;
    size_t mask = slots.size() - 1;
    for (size_t i = static_cast<size_t>(h) & mask;; i = (i + 1) & mask) {
      int32_t s = slots[i];
      if (s == 0) return -1;
      const Key& k = keys[static_cast<size_t>(s - 1)];
      if (key_hash[static_cast<size_t>(s - 1)] == h && k.pool == pool && k.driver == driver) {
        return s - 1;
      }
    }
  }
  int Find(std::string_view driver, std::string_view pool) const {
    return Find(driver, pool, HashPool(driver, pool));
  }
  int Add(std::shared_ptr<const ResourceSlice> owner, uint64_t h) {
    int id = static_cast<int>(keys.size());
    keys.push_back({owner->driver, owner->pool});
    key_hash.push_back(h);
    owners.push_back(std::move(owner));
    if (keys.size() * 2 > slots.size()) {
      slots.assign(std::max<size_t>(16, slots.size() * 2), 0);
      for (size_t k = 0; k < keys.size(); ++k) Insert(static_cast<int>(k));
    } else {
      Insert(id);
    }
    return id;
  }
  // Room for up to `n` pools without rehashing.
  void Reserve(size_t n) {
    keys.reserve(n);
    key_hash.reserve(n);
    owners.reserve(n);
    size_t cap = 16;
    while (cap < 2 * n + 2) cap *= 2;
    if (cap > slots.size()) {
      slots.assign(cap, 0);
      for (size_t k = 0; k < keys.size(); ++k) Insert(static_cast<int>(k));
    }
  }
  void Insert(int id) {
    size_t mask = slots.size() - 1;
    size_t i = static_cast<size_t>(key_hash[static_cast<size_t>(id)]) & mask;
    while (slots[i] != 0) i = (i + 1) & mask;
    slots[i] = id + 1;
  }
  size_t size() const { return keys.size(); }
};

// Per-pool device index (identities by device name), built lazily on first use under `once`
// (concurrent allocators may race to it). Shared by derived snapshots while the pool's slices
// are unchanged (same slice objects in the same order), so a Snapshot holding it always holds
// the slices its string views point into.
struct PoolIndex {
  std::once_flag once;
  // Local gid -> canonical local gid (first device of that name in the pool); empty when every
  // device name in the pool is unique (canonical == local).
  std::vector<int> canon;
  // Device name -> canonical local gid; only for pools with more than kLinearPool devices
  // (smaller pools are searched linearly).
  std::unique_ptr<std::unordered_map<std::string_view, int>> by_name;
  std::atomic<bool> touched{false};  // set once built (tests observe laziness)
};
inline constexpr int kLinearPool = 16;

// The immutable, indexed cluster snapshot behind alloc::Snapshot (see allocator.h).
// Global device ids (gids) are laid out per pool: pool p owns [pools[p].gid_base,
// pools[p].gid_base + pools[p].num_devices), its slices in snapshot order within that range.
struct Snapshot::Data {
  Features features;
  std::shared_ptr<const std::vector<DeviceTaintRule>> taint_rules;
  std::shared_ptr<const std::vector<DeviceClass>> classes;
  std::shared_ptr<const std::unordered_map<std::string, int>> class_by_name;
  SliceList slices;  // taint rules already merged
  std::shared_ptr<const PoolTable> pool_table;
  std::vector<int> slice_pool;            // per slice: pool id
  std::vector<int> slice_ndev;            // per slice: number of devices
  std::vector<uint32_t> slice_node_hash;  // per slice: NodeHash(node name), 0 = no node name
  std::vector<int> slice_gid_base;        // per slice: first gid
  struct Pool {
    int gid_base = 0;
    int num_devices = 0;
    // Same version = same slice objects in the same order (set when the pool is created or
    // changed; derived snapshots keep it for untouched pools).
    uint64_t version = 0;
    PoolIndex* index = nullptr;  // lazily filled (see PoolIndex); owned by index_blocks
  };
  std::vector<Pool> pools;  // by pool id
  // Owners of the pools' PoolIndex objects (this snapshot's own block plus the blocks of the
  // snapshots it was derived from that hold indexes it still uses).
  std::vector<std::shared_ptr<std::vector<PoolIndex>>> index_blocks;
  std::vector<int> pool_slice_offset;  // slices of pool p: pool_slice_list[off[p]..off[p+1])
  std::vector<int> pool_slice_list;    // all slices, ordered by gid
  std::vector<int> ordered_gid_base;   // slice_gid_base of pool_slice_list[k]
  std::vector<int> shared_slices;      // slices without a node name
  int64_t num_devices = 0;
  // Snapshot::Build from API objects: each API slice and its conversion (before taint-rule
  // merging), by API object, for a later Build with this snapshot as `previous`.
  using Converted = std::unordered_map<
      const api::ResourceSlice*,
      std::pair<std::shared_ptr<const api::ResourceSlice>, std::shared_ptr<const ResourceSlice>>>;
  std::shared_ptr<const Converted> converted;
  // CEL views of the slices' devices, shared along the snapshot's lineage (derived snapshots
  // share it; Build with `previous` carries the entries of the slices it reuses).
  std::shared_ptr<PreparedCache> prepared;

  // Node name -> node-local slices, built on demand (after a few linear scans) under node_once.
  mutable std::once_flag node_once;
  mutable std::atomic<int> node_scans{0};
  mutable std::unordered_map<std::string_view, std::vector<int>> node_slices;

  // Computes the per-pool layout from `slices`, `slice_pool` and `slice_ndev` (never touches the
  // slice objects); pools of `parent` (same lineage) not listed in `changed` keep their version
  // and PoolIndex.
  void Layout(const Data* parent, const std::vector<int>& changed);
  // The pool's index, built on first use (thread-safe).
  const PoolIndex& Index(int pool) const;
  // Canonical gid of `gid` in `pool`.
  int Canon(int pool, int gid) const;
  // Canonical gid of device `name` in `pool`, or -1.
  int FindDevice(int pool, std::string_view name) const;
  int SliceOfGid(int gid) const;
  const Device& DeviceOfGid(int gid) const;
  int PoolOfGid(int gid) const { return slice_pool[static_cast<size_t>(SliceOfGid(gid))]; }
  // Node-local slices of `node` in snapshot order.
  std::vector<int> NodeSlices(const std::string& node) const;
};

struct AllocatedState::Data {
  std::shared_ptr<const Snapshot> snapshot;
  std::vector<std::string> policy_names;
  std::vector<uint32_t> ident;  // per canonical gid of `snapshot` (every pool resolved)
  AggregateMap aggregate;
  std::map<std::pair<int, std::string>, std::pair<int64_t, std::map<std::string, Amount>>> usage;
};

class Allocator::Impl {
 public:
  Impl(ComputeConfig config, std::shared_ptr<const Snapshot> snap)
      : config_(std::move(config)),
        snap_(std::move(snap)),
        d_(snap_->data()),
        classes_(*d_.classes),
        class_by_name_(*d_.class_by_name),
        slices_(d_.slices),
        slice_pool_(d_.slice_pool),
        slice_gid_base_(d_.slice_gid_base),
        shared_slices_(d_.shared_slices),
        pool_keys_(d_.pool_table->keys),
        num_devices_(d_.num_devices) {}

  ComputeConfig config_;
  std::shared_ptr<const Snapshot> snap_;
  const Snapshot::Data& d_;
  // Immutable parts (views into the shared snapshot).
  const std::vector<DeviceClass>& classes_;
  const std::unordered_map<std::string, int>& class_by_name_;
  const SliceList& slices_;
  const std::vector<int>& slice_pool_;
  const std::vector<int>& slice_gid_base_;
  const std::vector<int>& shared_slices_;
  const std::vector<PoolTable::Key>& pool_keys_;
  const int64_t num_devices_;

  // Mutable allocation state: one word per canonical gid (kExclusiveBit, kAggregateBit, shares
  // in units of kShareUnit) plus summed consumed capacity of shared devices by canonical gid.
  std::vector<uint32_t> ident_;
  AggregateMap aggregate_;
  std::vector<uint64_t> pool_epoch_;  // bumped when allocated state of a pool changes
  // Pools whose allocated claims are resolved into ident_. Create does not look devices up: it
  // either keeps the caller's shared claims (`claims_src_`; the first kTargetedScans pools used
  // are resolved by scanning them for that pool, after that they are grouped by pool once) or
  // records each result in a compact per-pool list (`pending_`). A pool's device names are only
  // resolved when the pool is first used.
  std::vector<uint8_t> pool_ready_;
  std::shared_ptr<const std::vector<ResourceClaim>> claims_src_;
  int targeted_scans_ = 0;
  static constexpr int kTargetedScans = 2;
  struct Pending {
    int pool = 0;
    int caps = -1;          // index in pending_caps_ (consumed capacity), -1 = none
    uint32_t name_off = 0;  // device name in pending_names_
    uint32_t name_len = 0;
    uint32_t holder = 0;  // claim (AddHolder), for explanations
    bool shared = false;
  };
  std::vector<Pending> pending_;
  std::string pending_names_;
  std::vector<std::vector<std::pair<std::string, Amount>>> pending_caps_;
  std::vector<int> pending_offset_;  // per pool, into pending_order_ (built on first use)
  std::vector<int> pending_order_;
  std::string_view PendingName(const Pending& p) const {
    return static_cast<std::string_view>(pending_names_).substr(p.name_off, p.name_len);
  }
  // Holders of allocated devices, read only by explanations (Search::CounterHolders): claim
  // names "namespace/name" concatenated in holder_text_ (holder i is [holder_off_[i],
  // holder_off_[i + 1])), referenced by pending results, by committed results (AddAllocation
  // with a claim) and, for the shared-claims Create, the claims themselves (kept alive here).
  static constexpr uint32_t kNoHolder = ~0u;
  struct Held {
    int pool = 0;
    int ident = 0;  // canonical gid
    uint32_t holder = kNoHolder;
  };
  std::string holder_text_;
  std::vector<uint32_t> holder_off_{0};
  std::vector<Held> committed_holders_;
  std::shared_ptr<const std::vector<ResourceClaim>> holder_src_;
  uint32_t AddHolder(const ResourceClaim& claim);
  // Calls f(canonical gid, "namespace/name") for every allocated device of `pool` whose claim is
  // known (a device shared by several claims is reported once per claim).
  void ForEachHolder(int pool, const std::function<void(int, std::string_view)>& f) const;
  // Makes `pool`'s allocated state current (applies its pending results).
  void EnsurePool(int pool) {
    if (!pool_ready_[static_cast<size_t>(pool)]) ResolvePool(pool);
  }
  void ResolvePool(int pool);
  // Records the results of `allocated` as pending (no device lookups yet); with `skip_ready`,
  // results of pools already resolved are left out.
  void RecordPending(const std::vector<ResourceClaim>& allocated, bool skip_ready);
  // Calls f(pool, result, claim) for every non-admin result of `claims` on a pool of the snapshot.
  template <typename F>
  void ForEachResult(const std::vector<ResourceClaim>& claims, F&& f) const;
  // The consumed capacity of a shared result as amounts.
  static std::vector<std::pair<std::string, Amount>> Caps(const DeviceRequestAllocationResult& r);
  // Carries the in-use identities of `state` (another snapshot) over to this allocator.
  void Rebase(const AllocatedState::Data& state);
  // Records one allocated device (canonical gid `id`) in `ident`/`aggregate`.
  static void Apply(std::vector<uint32_t>& ident, AggregateMap& aggregate, int id, bool shared,
                    const std::vector<std::pair<std::string, Amount>>* caps);

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

  // CEL views of devices by gid, in chunks of 64 allocated lazily: the snapshot's (see
  // Snapshot::Data::prepared), or this allocator's own in prepared_own_ when the snapshot's were
  // prepared by another compiler.
  std::vector<std::unique_ptr<std::array<const PreparedDevice*, 64>>> prepared_;
  std::vector<std::shared_ptr<const PreparedDevice>> prepared_own_;
  // Per slice: its entry in the snapshot's PreparedCache and the entry's class-selector results
  // for this snapshot's classes, looked up on first use (the entries live as long as snap_).
  struct SliceShared {
    PreparedSlice* entry = nullptr;
    std::atomic<uint8_t>* class_results = nullptr;
  };
  std::vector<SliceShared> slice_shared_;
  SliceShared& Shared(int slice);

  std::optional<std::mt19937_64> rng_;  // seeded on first random share ID
  int64_t share_counter_ = 0;

  // Helpers used by the search and the explainer.
  const NodePools& GatherPools(const Node& node);
  const Compiled& Compile(const std::string& expr);
  // Class selectors for device `gid`: 1 false, 2 true, 3 error (message in `err`).
  uint8_t ClassSelect(int class_idx, int gid, std::string* err);
  const PreparedDevice* Prepared(int gid);
  int SliceOfGid(int gid) const;
  const Device& DeviceOf(const Candidate& c) const { return slices_[c.slice].devices[c.device]; }
  // Allocated state of the identity with canonical gid `ident` (its pool must be resolved).
  IdentityView Identity(int ident) const {
    uint32_t w = ident_[static_cast<size_t>(ident)];
    IdentityView v;
    v.exclusive = (w & kExclusiveBit) != 0;
    v.has_aggregate = (w & kAggregateBit) != 0;
    v.shares = static_cast<int>(w / kShareUnit);
    if (v.has_aggregate) v.aggregate = &aggregate_.at(ident);
    return v;
  }
  bool IsIdentAllocated(int ident) const { return ident_[static_cast<size_t>(ident)] != 0; }
  // Any device `gid` of resolved pool `pool`.
  bool IsDeviceAllocated(int pool, int gid) const {
    return ident_[static_cast<size_t>(d_.Canon(pool, gid))] != 0;
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
    return class_idx < 0 || class_policy_.empty() ? -1
                                                  : class_policy_[static_cast<size_t>(class_idx)];
  }
  // Device class of result `request` ("req" or "req/sub") in `claim`, or "".
  static std::string ClassOfRequest(const ResourceClaim& claim, std::string_view request);
  // What one allocated device counts against its namespace's limits besides one device: the
  // consumed capacity of a shared allocation (consumable capacity), else the device's whole
  // capacity. The one rule behind committed usage (AddAllocation), in-flight usage
  // (Search::LimitAllows) and the explanation's estimate; `consumed` is only read when `shared`.
  static std::vector<std::pair<std::string, Amount>> LimitCapacities(
      const Device& d, bool shared, const std::vector<std::pair<std::string, Qty>>& consumed);
  // The entry `name` of LimitCapacities' result, or 0.
  static Amount CapacityNamed(const std::vector<std::pair<std::string, Amount>>& caps,
                              std::string_view name);
  // Strategy for ordering nodes for these claims (first governed non-FirstFit request).
  Strategy ClaimsStrategy(const std::vector<const ResourceClaim*>& claims) const;
  // Allocated devices on node-local slices of `node`.
  int64_t NodeAllocatedCount(const std::string& node);
  Status PreFilter(const std::vector<const ResourceClaim*>& claims, std::string* reason) const;
  SearchOutcome Run(const Node& node, const std::vector<const ResourceClaim*>& claims,
                    Explanation* explain);

  // The last successful api-typed Allocate/AllocateOnAnyNode: the callers' claim objects and
  // their compute form with the results, so that Commit(claim, result) converts nothing back.
  struct LastCall {
    std::vector<const api::ResourceClaim*> api_claims;
    std::vector<ResourceClaim> claims;  // with `allocation` set
  };
  LastCall last_;
  Outcome Remember(const std::vector<const api::ResourceClaim*>& api_claims,
                   std::vector<ResourceClaim> claims, SearchOutcome o);
  // AllocateOnAnyNode over `n` candidates (node_at(k) gives candidate k).
  SearchOutcome RunOnAnyNode(size_t n, const std::function<const Node&(size_t)>& node_at,
                             const std::vector<const ResourceClaim*>& claims, size_t start);
};

}  // namespace draco::alloc
