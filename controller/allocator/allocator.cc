#include "controller/allocator/allocator.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <set>
#include <unordered_set>

#include "controller/allocator/allocator_impl.h"
#include "controller/allocator/explain.h"
#include "controller/allocator/node_selector.h"
#include "controller/allocator/search.h"

namespace draco::alloc {

std::string_view OutcomeKindName(Outcome::Kind kind) {
  switch (kind) {
    case Outcome::Kind::kAllocated:
      return "allocated";
    case Outcome::Kind::kUnsatisfiable:
      return "unsatisfiable";
    case Outcome::Kind::kError:
      return "error";
    case Outcome::Kind::kTimeout:
      return "timeout";
  }
  return "?";
}

void DefaultClaim(ResourceClaim& claim) {
  auto def_tol = [](std::vector<DeviceToleration>& ts) {
    for (auto& t : ts) {
      if (t.op.empty()) t.op = "Equal";
    }
  };
  auto def_spec = [&](RequestSpec& s) {
    if (s.allocation_mode.empty()) s.allocation_mode = "ExactCount";
    if (s.allocation_mode == "ExactCount" && s.count == 0) s.count = 1;
    def_tol(s.tolerations);
  };
  for (auto& r : claim.requests) {
    if (r.exactly) def_spec(*r.exactly);
    for (auto& s : r.first_available) def_spec(s);
  }
  if (claim.allocation) {
    for (auto& r : claim.allocation->results) def_tol(r.tolerations);
  }
}

namespace {

bool UsesCompatibilityGroups(const ResourceSlice& s) {
  for (const auto& d : s.devices) {
    for (const auto& c : d.consumes_counters) {
      if (!c.compatibility_groups.empty()) return true;
    }
  }
  return false;
}

}  // namespace

Allocator::Allocator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Allocator::~Allocator() = default;

namespace {

// True when some DeviceTaintRule adds a taint to a device of `s`.
bool RulesApply(const Features& f, const std::vector<DeviceTaintRule>& rules,
                const ResourceSlice& s) {
  if (!f.device_taint_rules) return false;
  for (const auto& rule : rules) {
    for (const auto& d : s.devices) {
      if (rule.Selects(s.driver, s.pool, d.name)) return true;
    }
  }
  return false;
}

void MergeTaintRules(const Features& f, const std::vector<DeviceTaintRule>& rules,
                     ResourceSlice& s) {
  // DeviceTaintRules are merged into device taints, rules in order (scheduler's slice tracker).
  if (!f.device_taint_rules) return;
  for (const auto& rule : rules) {
    for (auto& d : s.devices) {
      if (rule.Selects(s.driver, s.pool, d.name)) d.taints.push_back(rule.taint);
    }
  }
}

// `s` with the taint rules merged; the same object when no rule applies (copy-on-write).
std::shared_ptr<const ResourceSlice> Merged(const Features& f,
                                            const std::vector<DeviceTaintRule>& rules,
                                            std::shared_ptr<const ResourceSlice> s) {
  if (!RulesApply(f, rules, *s)) return s;
  auto copy = std::make_shared<ResourceSlice>(*s);
  MergeTaintRules(f, rules, *copy);
  return copy;
}

// Namespace-limit usage is counted while reading allocated claims (needs class and device).
bool HasNamespaceLimits(const std::vector<AllocationPolicy>& policies) {
  return std::any_of(policies.begin(), policies.end(),
                     [](const AllocationPolicy& p) { return !p.namespace_limits.empty(); });
}

std::atomic<uint64_t> next_lineage{1};
std::atomic<uint64_t> next_version{1};

std::shared_ptr<PoolTable> CloneTable(const PoolTable& t) {
  return std::make_shared<PoolTable>(t);  // views stay valid: `owners` are shared
}

}  // namespace

void Snapshot::Data::Layout(const Data* parent, const std::vector<int>& changed) {
  const size_t np = pool_table->size();
  const size_t ns = slices.size();
  pools.assign(np, Pool{});
  pool_slice_offset.assign(np + 1, 0);
  for (size_t i = 0; i < ns; ++i) ++pool_slice_offset[size_t(slice_pool[i]) + 1];
  for (size_t p = 0; p < np; ++p) pool_slice_offset[p + 1] += pool_slice_offset[p];
  pool_slice_list.resize(ns);
  {
    std::vector<int> fill(pool_slice_offset.begin(), pool_slice_offset.end() - 1);
    for (size_t i = 0; i < ns; ++i) pool_slice_list[size_t(fill[size_t(slice_pool[i])]++)] = int(i);
  }
  shared_slices.clear();
  for (size_t i = 0; i < ns; ++i) {
    if (slice_node_hash[i] == 0) shared_slices.push_back(int(i));
  }
  slice_gid_base.assign(ns, 0);
  ordered_gid_base.resize(ns);
  int gid = 0;
  for (size_t p = 0; p < np; ++p) {
    pools[p].gid_base = gid;
    for (int k = pool_slice_offset[p]; k < pool_slice_offset[p + 1]; ++k) {
      int si = pool_slice_list[size_t(k)];
      slice_gid_base[size_t(si)] = gid;
      ordered_gid_base[size_t(k)] = gid;
      gid += slice_ndev[size_t(si)];
    }
    pools[p].num_devices = gid - pools[p].gid_base;
  }
  num_devices = gid;
  // Pool indexes: unchanged pools of the parent keep theirs (and their version); the others get
  // fresh (empty, lazily filled) ones, allocated in one block. A long derivation chain would
  // accumulate blocks (each holding indexes of since-replaced pools): past kMaxBlocks every pool
  // gets a fresh index (versions are kept, so states still rebase by block copy).
  constexpr size_t kMaxBlocks = 16;
  auto inherits = [&](size_t p) {
    return parent != nullptr && p < parent->pools.size() &&
           std::find(changed.begin(), changed.end(), int(p)) == changed.end();
  };
  const bool compact = parent != nullptr && parent->index_blocks.size() >= kMaxBlocks;
  size_t fresh = 0;
  for (size_t p = 0; p < np; ++p) fresh += inherits(p) && !compact ? 0 : 1;
  index_blocks.clear();
  if (parent != nullptr && !compact) index_blocks = parent->index_blocks;
  if (fresh > 0) index_blocks.emplace_back(new PoolIndex[fresh]);
  PoolIndex* block = fresh > 0 ? index_blocks.back().get() : nullptr;
  size_t next = 0;
  for (size_t p = 0; p < np; ++p) {
    bool keep = inherits(p);
    pools[p].version = keep ? parent->pools[p].version : next_version.fetch_add(1);
    pools[p].index = keep && !compact ? parent->pools[p].index : &block[next++];
  }
}

const PoolIndex& Snapshot::Data::Index(int pool) const {
  PoolIndex& ix = *pools[size_t(pool)].index;
  std::call_once(ix.once, [&] {
    const Pool& p = pools[size_t(pool)];
    const int n = p.num_devices;
    int b = pool_slice_offset[size_t(pool)], e = pool_slice_offset[size_t(pool) + 1];
    std::vector<int> canon;
    bool dup = false;
    if (n > kLinearPool) {
      auto m = std::make_unique<std::unordered_map<std::string_view, int>>();
      m->reserve(size_t(n));
      canon.resize(size_t(n));
      int local = 0;
      for (int k = b; k < e; ++k) {
        for (const auto& d : slices[size_t(pool_slice_list[size_t(k)])].devices) {
          auto [it, inserted] = m->emplace(d.name, local);
          canon[size_t(local)] = it->second;
          dup = dup || !inserted;
          ++local;
        }
      }
      ix.by_name = std::move(m);
    } else {
      std::string_view names[kLinearPool];
      canon.resize(size_t(n));
      int local = 0;
      for (int k = b; k < e; ++k) {
        for (const auto& d : slices[size_t(pool_slice_list[size_t(k)])].devices) {
          names[local] = d.name;
          canon[size_t(local)] = local;
          for (int j = 0; j < local; ++j) {
            if (names[j] == names[local]) {
              canon[size_t(local)] = j;
              dup = true;
              break;
            }
          }
          ++local;
        }
      }
    }
    if (dup) ix.canon = std::move(canon);
    ix.touched.store(true, std::memory_order_release);
  });
  return ix;
}

int Snapshot::Data::Canon(int pool, int gid) const {
  const PoolIndex& ix = Index(pool);
  if (ix.canon.empty()) return gid;
  int base = pools[size_t(pool)].gid_base;
  return base + ix.canon[size_t(gid - base)];
}

int Snapshot::Data::FindDevice(int pool, std::string_view name) const {
  const PoolIndex& ix = Index(pool);
  int base = pools[size_t(pool)].gid_base;
  if (ix.by_name) {
    auto it = ix.by_name->find(name);
    return it == ix.by_name->end() ? -1 : base + it->second;
  }
  int local = 0;
  for (int k = pool_slice_offset[size_t(pool)]; k < pool_slice_offset[size_t(pool) + 1]; ++k) {
    for (const auto& d : slices[size_t(pool_slice_list[size_t(k)])].devices) {
      if (d.name == name) return base + local;  // first occurrence = canonical
      ++local;
    }
  }
  return -1;
}

int Snapshot::Data::SliceOfGid(int gid) const {
  auto it = std::upper_bound(ordered_gid_base.begin(), ordered_gid_base.end(), gid);
  // upper_bound skips empty slices that share a base with the owning slice.
  return pool_slice_list[size_t(it - ordered_gid_base.begin()) - 1];
}

const Device& Snapshot::Data::DeviceOfGid(int gid) const {
  int si = SliceOfGid(gid);
  return slices[size_t(si)].devices[size_t(gid - slice_gid_base[size_t(si)])];
}

namespace {
// Linear scans of all slices per node before a snapshot builds its node index: a snapshot used
// for one or two nodes (a cold allocator) never pays for indexing all nodes.
constexpr int kNodeScansBeforeIndex = 4;
}  // namespace

std::vector<int> Snapshot::Data::NodeSlices(const std::string& node) const {
  std::vector<int> out;
  if (node_scans.load(std::memory_order_relaxed) < kNodeScansBeforeIndex &&
      node_scans.fetch_add(1, std::memory_order_relaxed) < kNodeScansBeforeIndex) {
    const uint32_t h = NodeHash(std::string_view(node));
    for (size_t i = 0; i < slices.size(); ++i) {
      if (slice_node_hash[i] != h) continue;
      const auto& nn = slices[i].node_name;
      if (nn && *nn == node) out.push_back(int(i));
    }
    return out;
  }
  std::call_once(node_once, [&] {
    for (size_t i = 0; i < slices.size(); ++i) {
      const auto& nn = slices[i].node_name;
      if (nn && !nn->empty()) node_slices[*nn].push_back(int(i));
    }
  });
  auto it = node_slices.find(node);
  if (it != node_slices.end()) out = it->second;
  return out;
}

Snapshot::Snapshot(std::unique_ptr<Data> data) : data_(std::move(data)) {}
Snapshot::~Snapshot() = default;

std::shared_ptr<const Snapshot> Snapshot::Build(
    const Features& features, std::vector<DeviceClass> classes,
    std::vector<std::shared_ptr<const ResourceSlice>> slices,
    std::vector<DeviceTaintRule> taint_rules) {
  auto d = std::make_unique<Data>();
  d->features = features;
  d->taint_rules = std::make_shared<const std::vector<DeviceTaintRule>>(std::move(taint_rules));
  auto by_name = std::make_shared<std::unordered_map<std::string, int>>();
  for (size_t i = 0; i < classes.size(); ++i) (*by_name)[classes[i].name] = int(i);
  d->class_by_name = std::move(by_name);
  d->classes = std::make_shared<const std::vector<DeviceClass>>(std::move(classes));
  std::erase(slices, nullptr);
  auto table = std::make_shared<PoolTable>();
  table->lineage = next_lineage.fetch_add(1);
  table->Reserve(slices.size());
  d->slices.ptrs_ = std::move(slices);
  d->slice_pool.resize(d->slices.size());
  const bool merge = features.device_taint_rules && !d->taint_rules->empty();
  int last = -1;
  const size_t n = d->slices.size();
  d->slice_ndev.resize(n);
  d->slice_node_hash.resize(n);
  for (size_t i = 0; i < n; ++i) {
    if (i + 8 < n) {
      const char* ahead = reinterpret_cast<const char*>(d->slices.ptrs_[i + 8].get());
      __builtin_prefetch(ahead);  // driver, pool, node name, devices: the first 128 bytes
      __builtin_prefetch(ahead + 64);
      __builtin_prefetch(ahead + 127);
    }
    auto& ptr = d->slices.ptrs_[i];
    if (merge) ptr = Merged(features, *d->taint_rules, std::move(ptr));
    const ResourceSlice& s = *ptr;
    int pk = last;
    if (pk < 0 || table->keys[size_t(pk)].pool != s.pool ||
        table->keys[size_t(pk)].driver != s.driver) {
      uint64_t h = HashPool(s.driver, s.pool);
      pk = table->Find(s.driver, s.pool, h);
      if (pk < 0) pk = table->Add(ptr, h);
    }
    d->slice_pool[i] = last = pk;
    d->slice_ndev[i] = int(s.devices.size());
    d->slice_node_hash[i] = NodeHash(s.node_name);
  }
  d->pool_table = std::move(table);
  d->Layout(nullptr, {});
  return std::make_shared<const Snapshot>(std::move(d));
}

std::shared_ptr<const Snapshot> Snapshot::Build(const Features& features,
                                                std::vector<DeviceClass> classes,
                                                std::vector<ResourceSlice> slices,
                                                std::vector<DeviceTaintRule> taint_rules) {
  std::vector<std::shared_ptr<const ResourceSlice>> ptrs;
  ptrs.reserve(slices.size());
  for (auto& s : slices) ptrs.push_back(std::make_shared<const ResourceSlice>(std::move(s)));
  return Build(features, std::move(classes), std::move(ptrs), std::move(taint_rules));
}

namespace {
std::unique_ptr<Snapshot::Data> Derive(const Snapshot::Data& p) {
  auto d = std::make_unique<Snapshot::Data>();
  d->features = p.features;
  d->taint_rules = p.taint_rules;
  d->classes = p.classes;
  d->class_by_name = p.class_by_name;
  d->slices = p.slices;
  d->slice_pool = p.slice_pool;
  d->slice_ndev = p.slice_ndev;
  d->slice_node_hash = p.slice_node_hash;
  d->pool_table = p.pool_table;
  return d;
}
}  // namespace

std::shared_ptr<const Snapshot> Snapshot::WithSlice(ResourceSlice slice) const {
  return WithSlice(std::make_shared<const ResourceSlice>(std::move(slice)));
}

std::shared_ptr<const Snapshot> Snapshot::WithSlice(
    std::shared_ptr<const ResourceSlice> slice) const {
  auto d = Derive(*data_);
  if (!slice) {
    d->Layout(data_.get(), {});
    return std::make_shared<const Snapshot>(std::move(d));
  }
  if (d->features.device_taint_rules && !d->taint_rules->empty()) {
    slice = Merged(d->features, *d->taint_rules, std::move(slice));
  }
  int pk = d->pool_table->Find(slice->driver, slice->pool);
  if (pk < 0) {
    auto t = CloneTable(*d->pool_table);
    pk = t->Add(slice, HashPool(slice->driver, slice->pool));
    d->pool_table = std::move(t);
  }
  std::vector<int> changed{pk};
  size_t i = 0;
  while (i < d->slices.size() && d->slices[i].name != slice->name) ++i;
  if (i < d->slices.size()) {
    changed.push_back(d->slice_pool[i]);
    d->slice_pool[i] = pk;
    d->slice_ndev[i] = int(slice->devices.size());
    d->slice_node_hash[i] = NodeHash(slice->node_name);
    d->slices.ptrs_[i] = std::move(slice);
  } else {
    d->slice_pool.push_back(pk);
    d->slice_ndev.push_back(int(slice->devices.size()));
    d->slice_node_hash.push_back(NodeHash(slice->node_name));
    d->slices.ptrs_.push_back(std::move(slice));
  }
  d->Layout(data_.get(), changed);
  return std::make_shared<const Snapshot>(std::move(d));
}

std::shared_ptr<const Snapshot> Snapshot::WithoutSlice(std::string_view name) const {
  auto d = Derive(*data_);
  std::vector<int> changed;
  size_t i = 0;
  while (i < d->slices.size() && d->slices[i].name != name) ++i;
  if (i < d->slices.size()) {
    changed.push_back(d->slice_pool[i]);
    d->slices.ptrs_.erase(d->slices.ptrs_.begin() + std::ptrdiff_t(i));
    d->slice_pool.erase(d->slice_pool.begin() + std::ptrdiff_t(i));
    d->slice_ndev.erase(d->slice_ndev.begin() + std::ptrdiff_t(i));
    d->slice_node_hash.erase(d->slice_node_hash.begin() + std::ptrdiff_t(i));
  }
  d->Layout(data_.get(), changed);
  return std::make_shared<const Snapshot>(std::move(d));
}

int64_t Snapshot::num_devices() const { return data_->num_devices; }
size_t Snapshot::num_slices() const { return data_->slices.size(); }
bool Snapshot::SharesSlice(const Snapshot& other, size_t i) const {
  return i < data_->slices.size() && i < other.data_->slices.size() &&
         data_->slices.ptrs_[i] == other.data_->slices.ptrs_[i];
}
bool Snapshot::SharesPoolIndex(const Snapshot& other, std::string_view driver,
                               std::string_view pool) const {
  int a = data_->pool_table->Find(driver, pool);
  int b = other.data_->pool_table->Find(driver, pool);
  return a >= 0 && b >= 0 && data_->pools[size_t(a)].index == other.data_->pools[size_t(b)].index;
}
bool Snapshot::IsPoolIndexed(std::string_view driver, std::string_view pool) const {
  int a = data_->pool_table->Find(driver, pool);
  if (a < 0) return false;
  return data_->pools[size_t(a)].index->touched.load(std::memory_order_acquire);
}

StatusOr<std::unique_ptr<Allocator>> Allocator::Create(
    Config config, std::vector<DeviceClass> classes, std::vector<ResourceSlice> slices,
    std::vector<DeviceTaintRule> taint_rules, const std::vector<ResourceClaim>& allocated) {
  auto snap = Snapshot::Build(config.features, std::move(classes), std::move(slices),
                              std::move(taint_rules));
  return Create(std::move(config), std::move(snap), allocated);
}

StatusOr<std::unique_ptr<Allocator>> Allocator::Create(
    Config config, std::vector<DeviceClass> classes,
    std::vector<std::shared_ptr<const ResourceSlice>> slices,
    std::vector<DeviceTaintRule> taint_rules,
    std::shared_ptr<const std::vector<ResourceClaim>> allocated) {
  auto snap = Snapshot::Build(config.features, std::move(classes), std::move(slices),
                              std::move(taint_rules));
  return Create(std::move(config), std::move(snap), std::move(allocated));
}

StatusOr<std::unique_ptr<Allocator>> Allocator::Create(
    Config config, std::shared_ptr<const Snapshot> snapshot,
    const std::vector<ResourceClaim>& allocated) {
  if (!snapshot) return InvalidArgumentError("no snapshot");
  if (snapshot->data().features.device_taint_rules != config.features.device_taint_rules) {
    return InvalidArgumentError("snapshot built with a different DeviceTaintRules feature gate");
  }
  auto impl = std::make_unique<Impl>(std::move(config), std::move(snapshot));
  Impl& m = *impl;
  m.ident_.assign(size_t(m.num_devices_), 0);
  m.pool_epoch_.assign(m.d_.pools.size(), 0);
  m.pool_ready_.assign(m.d_.pools.size(), 0);
  m.class_sel_.resize(m.classes_.size());  // per-gid vectors sized on first use
  m.class_sel_err_.resize(m.classes_.size());
  m.InitPolicies();
  if (HasNamespaceLimits(m.config_.policies)) {
    // Namespace limits need each result's class and device now.
    for (const auto& c : allocated) {
      if (c.allocation) m.AddAllocation(*c.allocation, &c);
    }
  } else {
    m.RecordPending(allocated, /*skip_ready=*/false);
  }
  return std::unique_ptr<Allocator>(new Allocator(std::move(impl)));
}

StatusOr<std::unique_ptr<Allocator>> Allocator::Create(
    Config config, std::shared_ptr<const Snapshot> snapshot,
    std::shared_ptr<const std::vector<ResourceClaim>> allocated) {
  static const std::vector<ResourceClaim> kNone;
  bool limits = HasNamespaceLimits(config.policies);
  auto a = Create(std::move(config), std::move(snapshot), limits && allocated ? *allocated : kNone);
  if (!a.ok() || limits || !allocated || allocated->empty()) return a;
  (*a)->impl_->holder_src_ = allocated;  // explanations name the claims holding counters
  (*a)->impl_->claims_src_ = std::move(allocated);
  return a;
}

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
      if (pk < 0 || t.keys[size_t(pk)].pool != r.pool || t.keys[size_t(pk)].driver != r.driver) {
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
    if (skip_ready && pool_ready_[size_t(pk)]) return;
    if (&c != last) {
      last = &c;
      holder = AddHolder(c);
    }
    Pending& p = pending_.emplace_back();
    p.pool = pk;
    p.holder = holder;
    p.shared = consumable && r.share_id.has_value();
    p.name_off = uint32_t(pending_names_.size());
    p.name_len = uint32_t(r.device.size());
    pending_names_.append(r.device);
    if (p.shared && r.has_consumed_capacity) {
      p.caps = int(pending_caps_.size());
      pending_caps_.push_back(Caps(r));
    }
  });
}

void Allocator::Impl::ResolvePool(int pool) {
  const bool consumable = config_.features.consumable_capacity;
  if (claims_src_ && targeted_scans_ < kTargetedScans) {
    // Few pools used so far: scan the claims for this pool only (no hashing, no copies).
    ++targeted_scans_;
    const PoolTable::Key& key = d_.pool_table->keys[size_t(pool)];
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
    pool_ready_[size_t(pool)] = 1;
    if (any) ++pool_epoch_[size_t(pool)];
    return;
  }
  if (claims_src_) {
    // Many pools used: group the remaining results by pool once.
    auto src = std::move(claims_src_);
    RecordPending(*src, /*skip_ready=*/true);
  }
  pool_ready_[size_t(pool)] = 1;
  if (pending_.empty()) return;
  if (pending_offset_.empty()) {
    // Group pending results by pool (stable counting sort), once.
    pending_offset_.assign(pool_ready_.size() + 1, 0);
    for (const Pending& p : pending_) ++pending_offset_[size_t(p.pool) + 1];
    for (size_t k = 1; k < pending_offset_.size(); ++k) {
      pending_offset_[k] += pending_offset_[k - 1];
    }
    pending_order_.resize(pending_.size());
    std::vector<int> fill(pending_offset_.begin(), pending_offset_.end() - 1);
    for (size_t i = 0; i < pending_.size(); ++i) {
      pending_order_[size_t(fill[size_t(pending_[i].pool)]++)] = int(i);
    }
  }
  int b = pending_offset_[size_t(pool)], e = pending_offset_[size_t(pool) + 1];
  for (int k = b; k < e; ++k) {
    const Pending& p = pending_[size_t(pending_order_[size_t(k)])];
    int id = d_.FindDevice(pool, PendingName(p));
    if (id < 0) continue;  // unknown device: cannot matter
    Apply(ident_, aggregate_, id, p.shared, p.caps >= 0 ? &pending_caps_[size_t(p.caps)] : nullptr);
  }
  if (e > b) ++pool_epoch_[size_t(pool)];
}

void Allocator::Impl::Apply(std::vector<uint32_t>& ident, AggregateMap& aggregate, int id,
                            bool shared, const std::vector<std::pair<std::string, Amount>>* caps) {
  uint32_t& w = ident[size_t(id)];
  if (!shared) {
    w |= kExclusiveBit;
    return;
  }
  w += kShareUnit;
  if (caps == nullptr) return;
  w |= kAggregateBit;
  auto& agg = aggregate[id];
  for (const auto& [name, q] : *caps) {
    auto a = std::find_if(agg.begin(), agg.end(), [&](const auto& p) { return p.first == name; });
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
    if (m.pool_ready_[size_t(p.pool)]) continue;
    int id = m.d_.FindDevice(p.pool, m.PendingName(p));
    if (id < 0) continue;
    Impl::Apply(d->ident, d->aggregate, id, p.shared,
                p.caps >= 0 ? &m.pending_caps_[size_t(p.caps)] : nullptr);
  }
  if (m.claims_src_) {
    const bool consumable = m.config_.features.consumable_capacity;
    m.ForEachResult(*m.claims_src_, [&](int pk, const DeviceRequestAllocationResult& r, auto&) {
      if (m.pool_ready_[size_t(pk)]) return;
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
    Config config, std::shared_ptr<const Snapshot> snapshot,
    std::shared_ptr<const AllocatedState> state) {
  if (!state || !snapshot) return InvalidArgumentError("no snapshot or allocated state");
  if (state->data().policy_names != PolicyNames(config.policies)) {
    return InvalidArgumentError("allocated state was built with different AllocationPolicies");
  }
  auto a = Create(std::move(config), std::move(snapshot), std::vector<ResourceClaim>{});
  if (!a.ok()) return a.status();
  Impl& m = *(*a)->impl_;
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
    if (same_lineage) return op < d_.pools.size() ? int(op) : -1;
    const auto& key = old.pool_table->keys[op];
    return d_.pool_table->Find(key.driver, key.pool);
  };
  for (size_t op = 0; op < old.pools.size(); ++op) {
    const auto& opool = old.pools[op];
    if (opool.num_devices == 0) continue;
    int np = new_pool(op);
    if (np < 0) continue;
    const auto& npool = d_.pools[size_t(np)];
    if (npool.version == opool.version) {
      std::copy_n(st.ident.begin() + opool.gid_base, opool.num_devices,
                  ident_.begin() + npool.gid_base);
      continue;
    }
    for (int g = opool.gid_base; g < opool.gid_base + opool.num_devices; ++g) {
      uint32_t w = st.ident[size_t(g)];
      if (w == 0) continue;
      int id = d_.FindDevice(np, old.DeviceOfGid(g).name);
      if (id < 0) continue;
      ident_[size_t(id)] = w;
      if (w & kAggregateBit) aggregate_[id] = st.aggregate.at(g);
    }
  }
  for (const auto& [g, agg] : st.aggregate) {
    size_t op = size_t(old.PoolOfGid(g));
    int np = new_pool(op);
    if (np < 0 || d_.pools[size_t(np)].version != old.pools[op].version) continue;
    aggregate_[g - old.pools[op].gid_base + d_.pools[size_t(np)].gid_base] = agg;
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
      if (pol >= 0 && !config_.policies[size_t(pol)].namespace_limits.empty()) {
        Usage& u = usage_[{pol, claim->namespace_name}];
        ++u.devices;
        // Capacity: consumed capacity for shared allocations, else the device's capacity.
        const Device& dev = d_.DeviceOfGid(id);
        if (r.share_id && r.has_consumed_capacity) {
          for (const auto& [name, q] : r.consumed_capacity) u.capacity[name] += q.nanos;
        } else if (!r.share_id) {
          for (const auto& [name, c] : dev.capacity) u.capacity[name] += c.value.nanos;
        }
      }
    }
    bool shared = config_.features.consumable_capacity && r.share_id.has_value();
    std::vector<std::pair<std::string, Amount>> caps;
    if (shared && r.has_consumed_capacity) caps = Caps(r);
    Apply(ident_, aggregate_, id, shared, shared && r.has_consumed_capacity ? &caps : nullptr);
    ++pool_epoch_[size_t(pk)];
  }
}

void Allocator::Commit(const ResourceClaim& claim, const AllocationResult& result) {
  impl_->AddAllocation(result, &claim);
}

std::string Allocator::Impl::ClassOfRequest(const ResourceClaim& claim, std::string_view request) {
  size_t slash = request.find('/');
  std::string_view parent = request.substr(0, slash);
  for (const auto& r : claim.requests) {
    if (r.name != parent) continue;
    if (slash == std::string_view::npos) return r.exactly ? r.exactly->device_class_name : "";
    std::string_view sub = request.substr(slash + 1);
    for (const auto& s : r.first_available) {
      if (s.name == sub) return s.device_class_name;
    }
  }
  return "";
}

Amount Allocator::Impl::DeviceCapacity(int gid, const std::string& name) const {
  int slice = SliceOfGid(gid);
  const Device& d = slices_[size_t(slice)].devices[size_t(gid - slice_gid_base_[size_t(slice)])];
  const auto* c = d.FindCapacity(name);
  return c ? c->value.nanos : 0;
}

void Allocator::Impl::InitPolicies() {
  class_policy_.clear();
  if (config_.policies.empty()) return;
  class_policy_.assign(classes_.size(), -1);
  for (size_t ci = 0; ci < classes_.size(); ++ci) {
    int best = -1;
    for (size_t pi = 0; pi < config_.policies.size(); ++pi) {
      const AllocationPolicy& p = config_.policies[pi];
      if (!p.Selects(classes_[ci])) continue;
      if (best < 0) {
        best = int(pi);
        continue;
      }
      const AllocationPolicy& b = config_.policies[size_t(best)];
      if (p.priority > b.priority || (p.priority == b.priority && p.name < b.name)) best = int(pi);
    }
    class_policy_[ci] = best;
  }
}

Strategy Allocator::Impl::ClaimsStrategy(const std::vector<const ResourceClaim*>& claims) const {
  if (class_policy_.empty()) return Strategy::kFirstFit;
  auto of = [&](const std::string& cls) {
    auto it = class_by_name_.find(cls);
    int pol = it == class_by_name_.end() ? -1 : PolicyOf(it->second);
    return pol < 0 ? Strategy::kFirstFit : config_.policies[size_t(pol)].strategy;
  };
  for (const ResourceClaim* c : claims) {
    for (const auto& r : c->requests) {
      if (r.exactly) {
        if (Strategy s = of(r.exactly->device_class_name); s != Strategy::kFirstFit) return s;
      }
      for (const auto& sub : r.first_available) {
        if (Strategy s = of(sub.device_class_name); s != Strategy::kFirstFit) return s;
      }
    }
  }
  return Strategy::kFirstFit;
}

int64_t Allocator::Impl::NodeAllocatedCount(const std::string& node) {
  int64_t n = 0;
  for (int si : d_.NodeSlices(node)) {
    int pool = slice_pool_[size_t(si)];
    EnsurePool(pool);
    int base = slice_gid_base_[size_t(si)];
    for (size_t k = 0; k < slices_[size_t(si)].devices.size(); ++k) {
      if (IsDeviceAllocated(pool, base + int(k))) ++n;
    }
  }
  return n;
}

void Allocator::Commit(const AllocationResult& result) { impl_->AddAllocation(result, nullptr); }

int64_t Allocator::num_devices() const { return impl_->num_devices_; }

double Allocator::IndexBytesPerDevice() const {
  const Impl& m = *impl_;
  if (m.num_devices_ == 0) return 0;
  const Snapshot::Data& d = m.d_;
  size_t bytes = m.ident_.capacity() * sizeof(uint32_t) +
                 d.pools.capacity() * (sizeof(Snapshot::Data::Pool) + sizeof(PoolIndex)) +
                 (d.slice_pool.capacity() + d.slice_gid_base.capacity() +
                  d.pool_slice_list.capacity() + d.ordered_gid_base.capacity()) *
                     sizeof(int);
  for (const auto& p : d.pools) {
    // Only indexes already built (another allocator may be building one right now).
    if (!p.index->touched.load(std::memory_order_acquire)) continue;
    bytes += p.index->canon.capacity() * sizeof(int);
    if (p.index->by_name) bytes += p.index->by_name->size() * (sizeof(std::string_view) + 32);
  }
  for (const auto& v : m.class_sel_) bytes += v.capacity();
  bytes += m.prepared_.capacity() * sizeof(void*);
  for (const auto& chunk : m.prepared_) {
    if (chunk) bytes += 64 * sizeof(std::shared_ptr<const PreparedDevice>);
  }
  for (const auto& [name, np] : m.node_cache_) {
    bytes += np->cands.capacity() * sizeof(Candidate);
    for (const auto& c : np->cands)
      bytes += c.consumption.capacity() * sizeof(std::pair<int, Amount>);
    bytes += np->pools.capacity() * sizeof(PoolView);
  }
  return double(bytes) / double(m.num_devices_);
}

const Allocator::Impl::Compiled& Allocator::Impl::Compile(const std::string& expr) {
  auto it = compiled_.find(expr);
  if (it != compiled_.end()) return it->second;
  Compiled c;
  if (!config_.selectors) {
    c.error = FailedPreconditionError("no CEL selector compiler configured");
  } else {
    auto r = config_.selectors->Compile(expr);
    if (r.ok()) {
      c.sel = std::move(r).value();
    } else {
      c.error = r.status();
    }
  }
  return compiled_.emplace(expr, std::move(c)).first->second;
}

int Allocator::Impl::SliceOfGid(int gid) const { return d_.SliceOfGid(gid); }

const PreparedDevice* Allocator::Impl::Prepared(int gid) {
  if (!config_.selectors) return nullptr;
  if (prepared_.empty()) prepared_.resize(size_t(num_devices_ + 63) / 64);
  auto& chunk = prepared_[size_t(gid) / 64];
  if (!chunk) chunk = std::make_unique<std::shared_ptr<const PreparedDevice>[]>(64);
  auto& p = chunk[size_t(gid) % 64];
  if (!p) {
    int slice = SliceOfGid(gid);
    const ResourceSlice& s = slices_[size_t(slice)];
    const Device& d = s.devices[size_t(gid - slice_gid_base_[size_t(slice)])];
    DeviceView v;
    v.driver = s.driver;
    v.attributes = &d.attributes;
    v.capacity = &d.capacity;
    v.allow_multiple_allocations = d.allow_multiple_allocations.value_or(false);
    p = config_.selectors->Prepare(v);
  }
  return p.get();
}

uint8_t Allocator::Impl::ClassSelect(int class_idx, int gid, std::string* err) {
  std::vector<uint8_t>& sel = class_sel_[size_t(class_idx)];
  if (sel.empty()) sel.assign(size_t(num_devices_), 0);
  uint8_t& slot = sel[size_t(gid)];
  if (slot != 0) {
    if (slot == 3 && err) *err = class_sel_err_[class_idx][gid];
    return slot;
  }
  int slice = SliceOfGid(gid);
  const ResourceSlice& s = slices_[slice];
  const Device& d = s.devices[gid - slice_gid_base_[slice]];
  const DeviceClass& cls = classes_[class_idx];
  uint8_t result = 2;
  std::string message;
  for (size_t i = 0; i < cls.selectors.size(); ++i) {
    const Compiled& c = Compile(cls.selectors[i]);
    if (!c.error.ok()) {
      result = 3;
      message = "class " + cls.name + ": selector #" + std::to_string(i) +
                ": CEL compile error: " + c.error.message();
      break;
    }
    auto m = c.sel->Matches(*Prepared(gid));
    if (!m.ok()) {
      result = 3;
      message = "class " + cls.name + ": selector #" + std::to_string(i) + " on device " +
                s.driver + "/" + s.pool + "/" + d.name +
                ": CEL runtime error: " + AddCelKeyHint(m.status().message());
      break;
    }
    if (!*m) {
      result = 1;
      break;
    }
  }
  slot = result;
  if (result == 3) {
    class_sel_err_[class_idx][gid] = message;
    if (err) *err = message;
  }
  return result;
}

const NodePools& Allocator::Impl::GatherPools(const Node& node) {
  auto cached = node_cache_.find(node.name);
  if (cached != node_cache_.end() && cached->second->labels == node.labels) {
    return *cached->second;
  }
  auto np = std::make_unique<NodePools>();
  np->labels = node.labels;
  const Features& f = config_.features;

  // Slices for the node: its node-local slices, then all slices without a node name.
  std::vector<int> for_node;
  if (!node.name.empty()) for_node = d_.NodeSlices(node.name);
  for_node.insert(for_node.end(), shared_slices_.begin(), shared_slices_.end());

  struct Group {
    std::vector<int> slices;
  };
  std::unordered_map<int, Group> groups;
  std::vector<int> group_order;
  for (int si : for_node) {
    const ResourceSlice& s = slices_[si];
    if (!f.partitionable_devices &&
        (s.per_device_node_selection.has_value() || !s.shared_counters.empty())) {
      continue;
    }
    if (!f.compatibility_groups && UsesCompatibilityGroups(s)) continue;
    bool relevant = false;
    std::string nn = s.node_name.value_or("");
    bool all = s.all_nodes.value_or(false);
    if (!nn.empty() || all || s.node_selector) {
      auto m = NodeMatches(node, nn, all, s.node_selector ? &*s.node_selector : nullptr);
      if (!m.ok()) {
        np->error = InvalidArgumentError(
            "gather pool information: failed to perform node selection for slice " + s.name +
            ": failed to parse node selector: " + m.status().message());
        break;
      }
      relevant = *m;
    } else if (s.per_device_node_selection.value_or(false)) {
      for (const auto& d : s.devices) {
        auto m = NodeMatches(node, d.node_name.value_or(""), d.all_nodes.value_or(false),
                             d.node_selector ? &*d.node_selector : nullptr);
        if (!m.ok()) {
          np->error = InvalidArgumentError(
              "gather pool information: failed to perform node selection for device " + d.name +
              " in slice " + s.name + ": " + m.status().message());
          break;
        }
        if (*m) {
          relevant = true;
          break;
        }
      }
      if (!np->error.ok()) break;
    } else {
      continue;
    }
    if (!relevant) continue;
    int pk = slice_pool_[size_t(si)];
    auto [it, inserted] = groups.emplace(pk, Group{});
    if (inserted) group_order.push_back(pk);
    std::vector<int>& g = it->second.slices;
    if (g.empty()) {
      g.push_back(si);
    } else if (s.generation < slices_[g[0]].generation) {
      // outdated
    } else if (s.generation > slices_[g[0]].generation) {
      g.assign(1, si);
    } else {
      g.push_back(si);
    }
  }
  if (!np->error.ok()) {
    auto& ref = node_cache_[node.name];
    ref = std::move(np);
    return *ref;
  }

  std::vector<PoolView> normal, with_binding;
  for (int pk : group_order) {
    std::vector<int>& rel = groups[pk].slices;
    const ResourceSlice& first = slices_[rel[0]];
    std::vector<int> all_for_pool;
    bool use_all = false;
    if (int64_t(rel.size()) != first.resource_slice_count) {
      bool obsolete = false;
      for (int k = d_.pool_slice_offset[size_t(pk)]; k < d_.pool_slice_offset[size_t(pk) + 1];
           ++k) {
        int si = d_.pool_slice_list[size_t(k)];
        const ResourceSlice& s = slices_[size_t(si)];
        if (s.generation == first.generation) {
          all_for_pool.push_back(si);
        } else if (s.generation > first.generation) {
          obsolete = true;
          break;
        }
      }
      if (obsolete) {
        np->obsolete.push_back(first.driver + "/" + first.pool);
        continue;
      }
      if (!f.compatibility_groups) {
        std::erase_if(all_for_pool, [&](int si) { return UsesCompatibilityGroups(slices_[si]); });
      }
      if (int64_t(all_for_pool.size()) != first.resource_slice_count) {
        PoolView pv;
        pv.pool_key = pk;
        pv.incomplete = true;
        normal.push_back(std::move(pv));
        continue;
      }
      use_all = true;
    }
    // buildPool
    PoolView pv;
    pv.pool_key = pk;
    std::sort(rel.begin(), rel.end(),
              [&](int a, int b) { return slices_[a].name < slices_[b].name; });
    std::vector<int> counter_slices;
    for (int si : rel) {
      if (f.partitionable_devices && !slices_[si].shared_counters.empty()) {
        counter_slices.push_back(si);
      } else {
        pv.targeting.push_back(si);
      }
    }
    if (use_all && rel.size() < all_for_pool.size()) {
      std::unordered_set<std::string> names;
      for (int si : rel) names.insert(slices_[si].name);
      for (int si : all_for_pool) {
        if (names.count(slices_[si].name)) continue;
        if (f.partitionable_devices && !slices_[si].shared_counters.empty()) {
          counter_slices.push_back(si);
        } else {
          pv.not_targeting.push_back(si);
        }
      }
    }
    // Duplicate device names among targeting slices.
    {
      std::unordered_set<std::string_view> names;
      for (int si : pv.targeting) {
        for (const auto& d : slices_[si].devices) {
          if (!names.insert(d.name).second) {
            pv.invalid = true;
            pv.invalid_reason = "duplicate device name " + d.name;
            break;
          }
        }
        if (pv.invalid) break;
      }
    }
    if (!pv.invalid && f.partitionable_devices) {
      std::unordered_map<std::string, int> set_index;
      for (int si : counter_slices) {
        const auto& sets = slices_[si].shared_counters;
        for (size_t k = 0; k < sets.size() && !pv.invalid; ++k) {
          if (!set_index.emplace(sets[k].name, int(pv.set_names.size())).second) {
            pv.invalid = true;
            pv.invalid_reason = "duplicate counter set name " + sets[k].name;
            break;
          }
          pv.set_names.push_back(sets[k].name);
          pv.counter_set_slices.push_back(si << 8 | int(k));
          pv.set_offset.push_back(int(pv.counter_names.size()));
          for (const auto& [cn, q] : sets[k].counters) {
            pv.counter_names.push_back(cn);
            pv.counter_values.push_back(q.nanos);
          }
        }
        if (pv.invalid) break;
      }
      pv.set_offset.push_back(int(pv.counter_names.size()));
      auto validate = [&](const std::vector<int>& sl) {
        for (int si : sl) {
          for (const auto& d : slices_[si].devices) {
            for (const auto& cc : d.consumes_counters) {
              auto it = set_index.find(cc.counter_set);
              if (it == set_index.end()) {
                pv.invalid = true;
                pv.invalid_reason = "counter set " + cc.counter_set + " not found";
                return;
              }
              int s = it->second;
              for (const auto& [cn, q] : cc.counters) {
                bool found = false;
                for (int k = pv.set_offset[s]; k < pv.set_offset[s + 1]; ++k) {
                  if (pv.counter_names[k] == cn) found = true;
                }
                if (!found) {
                  pv.invalid = true;
                  pv.invalid_reason =
                      "counter " + cn + " not found in counter set " + cc.counter_set;
                  return;
                }
              }
            }
          }
        }
      };
      if (!pv.invalid) validate(pv.targeting);
      if (!pv.invalid) validate(pv.not_targeting);
    }
    if (pv.invalid) {
      pv.targeting.clear();
      pv.not_targeting.clear();
      normal.push_back(std::move(pv));
      continue;
    }
    if (!f.partitionable_devices) {
      pv.not_targeting.clear();
      pv.set_names.clear();
      pv.set_offset.assign(1, 0);
      pv.counter_names.clear();
      pv.counter_values.clear();
    }
    bool binding = false;
    for (int si : pv.targeting) {
      for (const auto& d : slices_[si].devices) {
        if (d.binding_conditions.has_value()) binding = true;
      }
    }
    (binding ? with_binding : normal).push_back(std::move(pv));
  }
  auto by_id = [&](const PoolView& a, const PoolView& b) {
    const PoolTable::Key& x = pool_keys_[size_t(a.pool_key)];
    const PoolTable::Key& y = pool_keys_[size_t(b.pool_key)];
    if (x.driver != y.driver) return x.driver < y.driver;
    return x.pool < y.pool;
  };
  std::sort(normal.begin(), normal.end(), by_id);
  std::sort(with_binding.begin(), with_binding.end(), by_id);
  for (auto& p : with_binding) normal.push_back(std::move(p));
  np->pools = std::move(normal);

  for (size_t pi = 0; pi < np->pools.size(); ++pi) {
    const PoolView& pv = np->pools[pi];
    if (pv.incomplete || pv.invalid) continue;
    EnsurePool(pv.pool_key);
    const PoolIndex& ix = d_.Index(pv.pool_key);
    const int pool_base = d_.pools[size_t(pv.pool_key)].gid_base;
    for (int si : pv.targeting) {
      const ResourceSlice& s = slices_[si];
      for (size_t di = 0; di < s.devices.size(); ++di) {
        Candidate c;
        c.slice = si;
        c.device = int(di);
        c.gid = slice_gid_base_[si] + int(di);
        c.ident = ix.canon.empty() ? c.gid : pool_base + ix.canon[size_t(c.gid - pool_base)];
        c.pool = int(pi);
        for (const auto& cc : s.devices[di].consumes_counters) {
          int set = -1;
          for (size_t k = 0; k < pv.set_names.size(); ++k) {
            if (pv.set_names[k] == cc.counter_set) set = int(k);
          }
          if (set < 0) continue;  // partitionable devices off: pool keeps no counter sets
          for (const auto& [cn, q] : cc.counters) {
            for (int k = pv.set_offset[set]; k < pv.set_offset[set + 1]; ++k) {
              if (pv.counter_names[k] == cn) c.consumption.emplace_back(k, q.nanos);
            }
          }
        }
        np->cands.push_back(std::move(c));
      }
    }
  }
  auto& ref = node_cache_[node.name];
  ref = std::move(np);
  return *ref;
}

const std::vector<Amount>& Allocator::Impl::AvailableCounters(PoolView& pool) {
  EnsurePool(pool.pool_key);
  if (pool.available_epoch == pool_epoch_[pool.pool_key]) return pool.available;
  pool.available = pool.counter_values;
  for (const auto* list : {&pool.targeting, &pool.not_targeting}) {
    for (int si : *list) {
      const ResourceSlice& s = slices_[si];
      for (size_t di = 0; di < s.devices.size(); ++di) {
        if (!IsDeviceAllocated(pool.pool_key, slice_gid_base_[si] + int(di))) continue;
        for (const auto& cc : s.devices[di].consumes_counters) {
          int set = -1;
          for (size_t k = 0; k < pool.set_names.size(); ++k) {
            if (pool.set_names[k] == cc.counter_set) set = int(k);
          }
          if (set < 0) continue;
          for (const auto& [cn, q] : cc.counters) {
            for (int k = pool.set_offset[set]; k < pool.set_offset[set + 1]; ++k) {
              if (pool.counter_names[k] == cn) pool.available[k] -= q.nanos;
            }
          }
        }
      }
    }
  }
  pool.available_epoch = pool_epoch_[pool.pool_key];
  return pool.available;
}

std::string Allocator::Impl::NewShareId() {
  char buf[64];
  if (config_.deterministic_share_ids) {
    std::snprintf(buf, sizeof(buf), "00000000-0000-4000-8000-%012lld",
                  static_cast<long long>(++share_counter_));
    return buf;
  }
  if (!rng_) rng_.emplace(std::random_device{}());
  uint64_t a = (*rng_)(), b = (*rng_)();
  a = (a & 0xffffffffffff0fffull) | 0x0000000000004000ull;  // version 4
  b = (b & 0x3fffffffffffffffull) | 0x8000000000000000ull;  // variant
  std::snprintf(buf, sizeof(buf), "%08x-%04x-%04x-%04x-%012llx", unsigned(a >> 32),
                unsigned((a >> 16) & 0xffff), unsigned(a & 0xffff), unsigned(b >> 48),
                static_cast<unsigned long long>(b & 0xffffffffffffull));
  return buf;
}

Status Allocator::Impl::PreFilter(const std::vector<const ResourceClaim*>& claims,
                                  std::string* reason) const {
  auto check = [&](const std::string& cls, const std::string& req) -> Status {
    if (cls.empty()) return InvalidArgumentError("request " + req + ": unsupported request type");
    if (!class_by_name_.count(cls)) {
      *reason = "request " + req + ": device class " + cls + " does not exist";
    }
    return OkStatus();
  };
  for (const ResourceClaim* c : claims) {
    for (const auto& r : c->requests) {
      if (r.exactly) {
        if (Status s = check(r.exactly->device_class_name, r.name); !s.ok()) return s;
        if (!reason->empty()) return OkStatus();
      } else if (!r.first_available.empty()) {
        if (!config_.features.prioritized_list) {
          *reason = "resource claim " + c->namespace_name + "/" + c->name + ", request " + r.name +
                    ": has subrequests, but the DRAPrioritizedList feature is disabled";
          return OkStatus();
        }
        for (const auto& s : r.first_available) {
          if (Status st = check(s.device_class_name, r.name + "/" + s.name); !st.ok()) return st;
          if (!reason->empty()) return OkStatus();
        }
      } else {
        *reason = "resource claim " + c->namespace_name + "/" + c->name + ", request " + r.name +
                  ": unknown request type";
        return OkStatus();
      }
    }
  }
  return OkStatus();
}

Outcome Allocator::Impl::Run(const Node& node, const std::vector<const ResourceClaim*>& claims,
                             Explanation* explain) {
  if (config_.scheduler_prefilter) {
    std::string reason;
    Status s = PreFilter(claims, &reason);
    if (!s.ok()) return Outcome{Outcome::Kind::kError, {}, s.message(), "", 0};
    if (!reason.empty()) return Outcome{Outcome::Kind::kUnsatisfiable, {}, reason, "", 0};
  }
  Search search(*this, node, claims, explain);
  return search.Run();
}

Outcome Allocator::Allocate(const Node& node, const std::vector<const ResourceClaim*>& claims) {
  return impl_->Run(node, claims, nullptr);
}

Outcome Allocator::AllocateOnAnyNode(std::span<const Node> candidates,
                                     const std::vector<const ResourceClaim*>& claims,
                                     size_t start) {
  Outcome last;
  last.message = "no candidate node";
  std::vector<size_t> order(candidates.size());
  for (size_t k = 0; k < candidates.size(); ++k) order[k] = (start + k) % candidates.size();
  // AllocationPolicy strategies reorder nodes by allocated devices (stable: ties keep the
  // rotation order). FirstFit keeps upstream's order.
  Strategy strategy = impl_->ClaimsStrategy(claims);
  if (strategy != Strategy::kFirstFit) {
    std::vector<int64_t> used(candidates.size());
    for (size_t k = 0; k < candidates.size(); ++k) {
      used[k] = impl_->NodeAllocatedCount(candidates[k].name);
    }
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return strategy == Strategy::kBinPack ? used[a] > used[b] : used[a] < used[b];
    });
  }
  for (size_t k = 0; k < candidates.size(); ++k) {
    const Node& n = candidates[order[k]];
    Outcome o = impl_->Run(n, claims, nullptr);
    if (o.kind == Outcome::Kind::kAllocated) {
      o.node = n.name;
      return o;
    }
    if (o.kind == Outcome::Kind::kError || o.kind == Outcome::Kind::kTimeout) return o;
    last = std::move(o);
  }
  last.kind = Outcome::Kind::kUnsatisfiable;
  return last;
}

Explanation Allocator::Explain(const Node& node, const std::vector<const ResourceClaim*>& claims) {
  Explanation e;
  e.node = node.name;
  e.outcome = impl_->Run(node, claims, &e);
  return e;
}

}  // namespace draco::alloc
