// Allocated state: pending and resolved results, AllocatedState, CreateFromState, Commit.
#include <algorithm>

#include "controller/allocator/allocator.h"
#include "controller/allocator/allocator_impl.h"
#include "controller/allocator/from_api.h"

namespace draco::alloc {

namespace {
// Claims are read in order; their results live elsewhere on the heap: ask for the line holding
// the first result's pool name early (memory-level parallelism when scanning many claims).
inline void PrefetchResults(const ResourceClaim& c) {
  if (c.allocation && !c.allocation->results.empty()) {
    __builtin_prefetch(&c.allocation->results.front().pool);
  }
}
}  // namespace

template <typename F>
void Allocator::Impl::ForEachResult(const std::vector<ResourceClaim>& claims, F&& f) const {
  const PoolTable& t = *d_.pool_table;
  int last = -1;
  for (size_t i = 0; i < claims.size(); ++i) {
    if (i + 16 < claims.size()) PrefetchResults(claims[i + 16]);
    const auto& c = claims[i];
    if (!c.allocation) continue;
    for (const auto& r : c.allocation->results) {
      if (r.admin_access.value_or(false)) continue;
      int pk = last;
      if (pk < 0 || t.keys[static_cast<size_t>(pk)].pool != r.pool ||
          t.keys[static_cast<size_t>(pk)].driver != r.driver) {
        pk = t.Find(r.driver, r.pool);
        if (pk < 0) continue;  // not in the snapshot: cannot matter
        last = pk;
      }
      f(pk, r, c);
    }
  }
}

std::vector<std::pair<std::string, Amount>> Allocator::Impl::Caps(
    const DeviceRequestAllocationResult& r) {
  std::vector<std::pair<std::string, Amount>> caps;
  for (const auto& [name, q] : r.consumed_capacity) caps.emplace_back(name, q.nanos);
  return caps;
}

void Allocator::Impl::RecordPending(const std::vector<ResourceClaim>& allocated, bool skip_ready) {
  size_t total = 0;
  for (const auto& c : allocated) {
    if (c.allocation) total += c.allocation->results.size();
  }
  if (total == 0) return;
  pending_.reserve(pending_.size() + total);
  const bool consumable = config_.features.consumable_capacity;
  const ResourceClaim* last = nullptr;
  uint32_t holder = kNoHolder;
  ForEachResult(allocated, [&](int pk, const DeviceRequestAllocationResult& r, const auto& c) {
    if (skip_ready && pool_ready_[static_cast<size_t>(pk)]) return;
    if (&c != last) {
      last = &c;
      holder = AddHolder(c);
    }
    Pending& p = pending_.emplace_back();
    p.pool = pk;
    p.holder = holder;
    p.shared = consumable && r.share_id.has_value();
    p.name_off = static_cast<uint32_t>(pending_names_.size());
    p.name_len = static_cast<uint32_t>(r.device.size());
    pending_names_.append(r.device);
    if (p.shared && r.has_consumed_capacity) {
      p.caps = static_cast<int>(pending_caps_.size());
      pending_caps_.push_back(Caps(r));
    }
  });
}

void Allocator::Impl::ResolvePool(int pool) {
  const bool consumable = config_.features.consumable_capacity;
  if (claims_src_ && targeted_scans_ < kTargetedScans) {
    // Few pools used so far: scan the claims for this pool only (no hashing, no copies).
    ++targeted_scans_;
    const PoolTable::Key& key = d_.pool_table->keys[static_cast<size_t>(pool)];
    const auto& claims = *claims_src_;
    bool any = false;
    for (size_t i = 0; i < claims.size(); ++i) {
      if (i + 32 < claims.size()) __builtin_prefetch(&claims[i + 32].allocation);
      if (i + 16 < claims.size()) PrefetchResults(claims[i + 16]);
      if (!claims[i].allocation) continue;
      for (const auto& r : claims[i].allocation->results) {
        if (r.pool != key.pool || r.driver != key.driver || r.admin_access.value_or(false)) {
          continue;
        }
        int id = d_.FindDevice(pool, r.device);
        if (id < 0) continue;  // unknown device: cannot matter
        bool shared = consumable && r.share_id.has_value();
        if (shared && r.has_consumed_capacity) {
          auto caps = Caps(r);
          Apply(ident_, aggregate_, id, true, &caps);
        } else {
          Apply(ident_, aggregate_, id, shared, nullptr);
        }
        any = true;
      }
    }
    pool_ready_[static_cast<size_t>(pool)] = 1;
    if (any) ++pool_epoch_[static_cast<size_t>(pool)];
    return;
  }
  if (claims_src_) {
    // Many pools used: group the remaining results by pool once.
    auto src = std::move(claims_src_);
    RecordPending(*src, /*skip_ready=*/true);
  }
  pool_ready_[static_cast<size_t>(pool)] = 1;
  if (pending_.empty()) return;
  if (pending_offset_.empty()) {
    // Group pending results by pool (stable counting sort), once.
    pending_offset_.assign(pool_ready_.size() + 1, 0);
    for (const Pending& p : pending_) ++pending_offset_[static_cast<size_t>(p.pool) + 1];
    for (size_t k = 1; k < pending_offset_.size(); ++k) {
      pending_offset_[k] += pending_offset_[k - 1];
    }
    pending_order_.resize(pending_.size());
    std::vector<int> fill(pending_offset_.begin(), pending_offset_.end() - 1);
    for (size_t i = 0; i < pending_.size(); ++i) {
      pending_order_[static_cast<size_t>(fill[static_cast<size_t>(pending_[i].pool)]++)] =
          static_cast<int>(i);
    }
  }
  int b = pending_offset_[static_cast<size_t>(pool)],
      e = pending_offset_[static_cast<size_t>(pool) + 1];
  for (int k = b; k < e; ++k) {
    const Pending& p = pending_[static_cast<size_t>(pending_order_[static_cast<size_t>(k)])];
    int id = d_.FindDevice(pool, PendingName(p));
    if (id < 0) continue;  // unknown device: cannot matter
    Apply(ident_, aggregate_, id, p.shared,
          p.caps >= 0 ? &pending_caps_[static_cast<size_t>(p.caps)] : nullptr);
  }
  if (e > b) ++pool_epoch_[static_cast<size_t>(pool)];
}

void Allocator::Impl::Apply(std::vector<uint32_t>& ident, AggregateMap& aggregate, int id,
                            bool shared, const std::vector<std::pair<std::string, Amount>>* caps) {
  uint32_t& w = ident[static_cast<size_t>(id)];
  if (!shared) {
    w |= kExclusiveBit;
    return;
  }
  w += kShareUnit;
  if (caps == nullptr) return;
  w |= kAggregateBit;
  auto& agg = aggregate[id];
  for (const auto& [name, q] : *caps) {
    auto a = std::find_if(agg.begin(), agg.end(),
                          [&name = name](const auto& p) { return p.first == name; });
    if (a == agg.end()) {
      agg.emplace_back(name, q);
    } else {
      a->second += q;
    }
  }
}

AllocatedState::AllocatedState(std::unique_ptr<Data> data) : data_(std::move(data)) {}
AllocatedState::~AllocatedState() = default;

namespace {
std::vector<std::string> PolicyNames(const std::vector<AllocationPolicy>& ps) {
  std::vector<std::string> out;
  out.reserve(ps.size());
  for (const auto& p : ps) out.push_back(p.name);
  return out;
}
}  // namespace

std::shared_ptr<const AllocatedState> Allocator::State() const {
  const Impl& m = *impl_;
  auto d = std::make_unique<AllocatedState::Data>();
  d->snapshot = m.snap_;
  d->policy_names = PolicyNames(m.config_.policies);
  d->ident = m.ident_;
  d->aggregate = m.aggregate_;
  // Pending results of pools not resolved yet go into the copy (this allocator stays lazy).
  for (const auto& p : m.pending_) {
    if (m.pool_ready_[static_cast<size_t>(p.pool)]) continue;
    int id = m.d_.FindDevice(p.pool, m.PendingName(p));
    if (id < 0) continue;
    Impl::Apply(d->ident, d->aggregate, id, p.shared,
                p.caps >= 0 ? &m.pending_caps_[static_cast<size_t>(p.caps)] : nullptr);
  }
  if (m.claims_src_) {
    const bool consumable = m.config_.features.consumable_capacity;
    m.ForEachResult(*m.claims_src_, [&](int pk, const DeviceRequestAllocationResult& r, auto&) {
      if (m.pool_ready_[static_cast<size_t>(pk)]) return;
      int id = m.d_.FindDevice(pk, r.device);
      if (id < 0) return;
      bool shared = consumable && r.share_id.has_value();
      std::vector<std::pair<std::string, Amount>> caps;
      if (shared && r.has_consumed_capacity) caps = Impl::Caps(r);
      Impl::Apply(d->ident, d->aggregate, id, shared,
                  shared && r.has_consumed_capacity ? &caps : nullptr);
    });
  }
  for (const auto& [k, u] : m.usage_) d->usage[k] = {u.devices, u.capacity};
  return std::make_shared<const AllocatedState>(std::move(d));
}

StatusOr<std::unique_ptr<Allocator>> Allocator::CreateFromState(
    const Config& config, std::shared_ptr<const Snapshot> snapshot,
    const std::shared_ptr<const AllocatedState>& state) {
  auto c = ToComputeConfig(config);
  if (!c.ok()) return c.status();
  return CreateAllocatorFromState(std::move(*c), std::move(snapshot), state);
}

StatusOr<std::unique_ptr<Allocator>> CreateAllocatorFromState(
    ComputeConfig config, std::shared_ptr<const Snapshot> snapshot,
    const std::shared_ptr<const AllocatedState>& state) {
  using Impl = Allocator::Impl;
  if (!state || !snapshot) return InvalidArgumentError("no snapshot or allocated state");
  if (state->data().policy_names != PolicyNames(config.policies)) {
    return InvalidArgumentError("allocated state was built with different AllocationPolicies");
  }
  auto a = CreateAllocator(std::move(config), std::move(snapshot), std::vector<ResourceClaim>{});
  if (!a.ok()) return a.status();
  Impl& m = (*a)->impl();
  const AllocatedState::Data& d = state->data();
  if (d.snapshot == m.snap_) {
    m.ident_ = d.ident;
    m.aggregate_ = d.aggregate;
  } else {
    m.Rebase(d);
  }
  for (const auto& [k, u] : d.usage) m.usage_[k] = Impl::Usage{u.first, u.second};
  return a;
}

void Allocator::Impl::Rebase(const AllocatedState::Data& st) {
  // Carry every in-use identity over by (driver, pool, device). Pools whose index is shared with
  // the state's snapshot (unchanged slices, e.g. all but one after WithSlice) are copied as a
  // block; the others are matched by device name. Identities absent from the new snapshot are
  // dropped, as allocations of unknown devices are when reading claims.
  const Snapshot::Data& old = st.snapshot->data();
  const bool same_lineage = old.pool_table->lineage == d_.pool_table->lineage;
  auto new_pool = [&](size_t op) {
    if (same_lineage) return op < d_.pools.size() ? static_cast<int>(op) : -1;
    const auto& key = old.pool_table->keys[op];
    return d_.pool_table->Find(key.driver, key.pool);
  };
  for (size_t op = 0; op < old.pools.size(); ++op) {
    const auto& opool = old.pools[op];
    if (opool.num_devices == 0) continue;
    int np = new_pool(op);
    if (np < 0) continue;
    const auto& npool = d_.pools[static_cast<size_t>(np)];
    if (npool.version == opool.version) {
      std::copy_n(st.ident.begin() + opool.gid_base, opool.num_devices,
                  ident_.begin() + npool.gid_base);
      continue;
    }
    for (int g = opool.gid_base; g < opool.gid_base + opool.num_devices; ++g) {
      uint32_t w = st.ident[static_cast<size_t>(g)];
      if (w == 0) continue;
      int id = d_.FindDevice(np, old.DeviceOfGid(g).name);
      if (id < 0) continue;
      ident_[static_cast<size_t>(id)] = w;
      if (w & kAggregateBit) aggregate_[id] = st.aggregate.at(g);
    }
  }
  for (const auto& [g, agg] : st.aggregate) {
    auto op = static_cast<size_t>(old.PoolOfGid(g));
    int np = new_pool(op);
    if (np < 0 || d_.pools[static_cast<size_t>(np)].version != old.pools[op].version) continue;
    aggregate_[g - old.pools[op].gid_base + d_.pools[static_cast<size_t>(np)].gid_base] = agg;
  }
}

void Allocator::Impl::AddAllocation(const AllocationResult& result, const ResourceClaim* claim) {
  uint32_t holder = kNoHolder;
  for (const auto& r : result.results) {
    if (r.admin_access.value_or(false)) continue;
    int pk = d_.pool_table->Find(r.driver, r.pool);
    if (pk < 0) continue;  // not in the snapshot: cannot matter
    EnsurePool(pk);
    int id = d_.FindDevice(pk, r.device);
    if (id < 0) continue;
    if (claim != nullptr) {
      if (holder == kNoHolder) holder = AddHolder(*claim);
      committed_holders_.push_back({pk, id, holder});
    }
    if (claim != nullptr && !class_policy_.empty()) {
      auto cls = class_by_name_.find(ClassOfRequest(*claim, r.request));
      int pol = cls == class_by_name_.end() ? -1 : PolicyOf(cls->second);
      if (pol >= 0 && !config_.policies[static_cast<size_t>(pol)].namespace_limits.empty()) {
        Usage& u = usage_[{pol, claim->namespace_name}];
        ++u.devices;
        static const std::vector<std::pair<std::string, Qty>> kNone;
        const auto& consumed = r.has_consumed_capacity ? r.consumed_capacity : kNone;
        for (const auto& [name, add] :
             LimitCapacities(d_.DeviceOfGid(id), r.share_id.has_value(), consumed)) {
          u.capacity[name] += add;
        }
      }
    }
    bool shared = config_.features.consumable_capacity && r.share_id.has_value();
    std::vector<std::pair<std::string, Amount>> caps;
    if (shared && r.has_consumed_capacity) caps = Caps(r);
    Apply(ident_, aggregate_, id, shared, shared && r.has_consumed_capacity ? &caps : nullptr);
    ++pool_epoch_[static_cast<size_t>(pk)];
  }
}

void ComputeCommit(Allocator& a, const ResourceClaim& claim, const AllocationResult& result) {
  a.impl().AddAllocation(result, &claim);
}
void ComputeCommit(Allocator& a, const AllocationResult& result) {
  a.impl().AddAllocation(result, nullptr);
}

void Allocator::Commit(const api::ResourceClaim& claim) {
  if (!claim.status.allocation) return;
  ResourceClaim c =
      impl_->config_.default_claims ? ToAllocClaim(claim) : ToAllocClaimAsGiven(claim);
  impl_->AddAllocation(*c.allocation, &c);
}

void Allocator::Commit(const api::ResourceClaim& claim, const api::AllocationResult& result) {
  const Impl::LastCall& last = impl_->last_;
  for (size_t i = 0; i < last.api_claims.size(); ++i) {
    if (last.api_claims[i] != &claim) continue;
    const AllocationResult& mine = *last.claims[i].allocation;
    // The caller hands back what this allocator returned for the claim (cheap identity check).
    if (mine.results.size() == result.devices.results.size() &&
        (mine.results.empty() || mine.results[0].device == result.devices.results[0].device)) {
      impl_->AddAllocation(mine, &last.claims[i]);
      return;
    }
  }
  ResourceClaim c =
      impl_->config_.default_claims ? ToAllocClaim(claim) : ToAllocClaimAsGiven(claim);
  impl_->AddAllocation(ToAllocAllocationResult(result), &c);
}
int64_t Allocator::Impl::NodeAllocatedCount(const std::string& node) {
  int64_t n = 0;
  for (int si : d_.NodeSlices(node)) {
    int pool = slice_pool_[static_cast<size_t>(si)];
    EnsurePool(pool);
    int base = slice_gid_base_[static_cast<size_t>(si)];
    for (size_t k = 0; k < slices_[static_cast<size_t>(si)].devices.size(); ++k) {
      if (IsDeviceAllocated(pool, base + static_cast<int>(k))) ++n;
    }
  }
  return n;
}

}  // namespace draco::alloc
