// Snapshot building and derivation (taint rules, pool layout and index); Allocator::Create.
#include <algorithm>
#include <array>
#include <atomic>

#include "controller/allocator/allocator.h"
#include "controller/allocator/allocator_impl.h"
#include "controller/allocator/from_api.h"

namespace draco::alloc {

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
  for (size_t i = 0; i < ns; ++i) ++pool_slice_offset[static_cast<size_t>(slice_pool[i]) + 1];
  for (size_t p = 0; p < np; ++p) pool_slice_offset[p + 1] += pool_slice_offset[p];
  pool_slice_list.resize(ns);
  {
    std::vector<int> fill(pool_slice_offset.begin(), pool_slice_offset.end() - 1);
    for (size_t i = 0; i < ns; ++i) {
      pool_slice_list[static_cast<size_t>(fill[static_cast<size_t>(slice_pool[i])]++)] =
          static_cast<int>(i);
    }
  }
  shared_slices.clear();
  for (size_t i = 0; i < ns; ++i) {
    if (slice_node_hash[i] == 0) shared_slices.push_back(static_cast<int>(i));
  }
  slice_gid_base.assign(ns, 0);
  ordered_gid_base.resize(ns);
  int gid = 0;
  for (size_t p = 0; p < np; ++p) {
    pools[p].gid_base = gid;
    for (int k = pool_slice_offset[p]; k < pool_slice_offset[p + 1]; ++k) {
      int si = pool_slice_list[static_cast<size_t>(k)];
      slice_gid_base[static_cast<size_t>(si)] = gid;
      ordered_gid_base[static_cast<size_t>(k)] = gid;
      gid += slice_ndev[static_cast<size_t>(si)];
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
           std::find(changed.begin(), changed.end(), static_cast<int>(p)) == changed.end();
  };
  const bool compact = parent != nullptr && parent->index_blocks.size() >= kMaxBlocks;
  size_t fresh = 0;
  for (size_t p = 0; p < np; ++p) fresh += inherits(p) && !compact ? 0 : 1;
  index_blocks.clear();
  if (parent != nullptr && !compact) index_blocks = parent->index_blocks;
  if (fresh > 0) index_blocks.push_back(std::make_shared<std::vector<PoolIndex>>(fresh));
  PoolIndex* block = fresh > 0 ? index_blocks.back()->data() : nullptr;
  size_t next = 0;
  for (size_t p = 0; p < np; ++p) {
    bool keep = inherits(p);
    pools[p].version = keep ? parent->pools[p].version : next_version.fetch_add(1);
    pools[p].index = keep && !compact ? parent->pools[p].index : &block[next++];
  }
}

const PoolIndex& Snapshot::Data::Index(int pool) const {
  PoolIndex& ix = *pools[static_cast<size_t>(pool)].index;
  std::call_once(ix.once, [&] {
    const Pool& p = pools[static_cast<size_t>(pool)];
    const int n = p.num_devices;
    int b = pool_slice_offset[static_cast<size_t>(pool)],
        e = pool_slice_offset[static_cast<size_t>(pool) + 1];
    std::vector<int> canon;
    bool dup = false;
    if (n > kLinearPool) {
      auto m = std::make_unique<std::unordered_map<std::string_view, int>>();
      m->reserve(static_cast<size_t>(n));
      canon.resize(static_cast<size_t>(n));
      int local = 0;
      for (int k = b; k < e; ++k) {
        for (const auto& d :
             slices[static_cast<size_t>(pool_slice_list[static_cast<size_t>(k)])].devices) {
          auto [it, inserted] = m->emplace(d.name, local);
          canon[static_cast<size_t>(local)] = it->second;
          dup = dup || !inserted;
          ++local;
        }
      }
      ix.by_name = std::move(m);
    } else {
      std::array<std::string_view, kLinearPool> names;
      canon.resize(static_cast<size_t>(n));
      int local = 0;
      for (int k = b; k < e; ++k) {
        for (const auto& d :
             slices[static_cast<size_t>(pool_slice_list[static_cast<size_t>(k)])].devices) {
          names[static_cast<size_t>(local)] = d.name;
          canon[static_cast<size_t>(local)] = local;
          for (int j = 0; j < local; ++j) {
            if (names[static_cast<size_t>(j)] == names[static_cast<size_t>(local)]) {
              canon[static_cast<size_t>(local)] = j;
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
  int base = pools[static_cast<size_t>(pool)].gid_base;
  return base + ix.canon[static_cast<size_t>(gid - base)];
}

int Snapshot::Data::FindDevice(int pool, std::string_view name) const {
  const PoolIndex& ix = Index(pool);
  int base = pools[static_cast<size_t>(pool)].gid_base;
  if (ix.by_name) {
    auto it = ix.by_name->find(name);
    return it == ix.by_name->end() ? -1 : base + it->second;
  }
  int local = 0;
  for (int k = pool_slice_offset[static_cast<size_t>(pool)];
       k < pool_slice_offset[static_cast<size_t>(pool) + 1]; ++k) {
    for (const auto& d :
         slices[static_cast<size_t>(pool_slice_list[static_cast<size_t>(k)])].devices) {
      if (d.name == name) return base + local;  // first occurrence = canonical
      ++local;
    }
  }
  return -1;
}

int Snapshot::Data::SliceOfGid(int gid) const {
  auto it = std::upper_bound(ordered_gid_base.begin(), ordered_gid_base.end(), gid);
  // upper_bound skips empty slices that share a base with the owning slice.
  return pool_slice_list[static_cast<size_t>(it - ordered_gid_base.begin()) - 1];
}

const Device& Snapshot::Data::DeviceOfGid(int gid) const {
  int si = SliceOfGid(gid);
  return slices[static_cast<size_t>(si)]
      .devices[static_cast<size_t>(gid - slice_gid_base[static_cast<size_t>(si)])];
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
    const uint32_t h = NodeHash(static_cast<std::string_view>(node));
    for (size_t i = 0; i < slices.size(); ++i) {
      if (slice_node_hash[i] != h) continue;
      const auto& nn = slices[i].node_name;
      if (nn && *nn == node) out.push_back(static_cast<int>(i));
    }
    return out;
  }
  std::call_once(node_once, [&] {
    for (size_t i = 0; i < slices.size(); ++i) {
      const auto& nn = slices[i].node_name;
      if (nn && !nn->empty()) node_slices[*nn].push_back(static_cast<int>(i));
    }
  });
  auto it = node_slices.find(node);
  if (it != node_slices.end()) out = it->second;
  return out;
}

Snapshot::Snapshot(std::unique_ptr<Data> data) : data_(std::move(data)) {}
Snapshot::~Snapshot() = default;

namespace {
std::unique_ptr<Snapshot::Data> BuildData(const Features& features,
                                          std::vector<DeviceClass> classes,
                                          std::vector<std::shared_ptr<const ResourceSlice>> slices,
                                          std::vector<DeviceTaintRule> taint_rules) {
  using Data = Snapshot::Data;
  auto d = std::make_unique<Data>();
  d->features = features;
  d->taint_rules = std::make_shared<const std::vector<DeviceTaintRule>>(std::move(taint_rules));
  auto by_name = std::make_shared<std::unordered_map<std::string, int>>();
  for (size_t i = 0; i < classes.size(); ++i) (*by_name)[classes[i].name] = static_cast<int>(i);
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
    if (pk < 0 || table->keys[static_cast<size_t>(pk)].pool != s.pool ||
        table->keys[static_cast<size_t>(pk)].driver != s.driver) {
      uint64_t h = HashPool(s.driver, s.pool);
      pk = table->Find(s.driver, s.pool, h);
      if (pk < 0) pk = table->Add(ptr, h);
    }
    d->slice_pool[i] = last = pk;
    d->slice_ndev[i] = static_cast<int>(s.devices.size());
    d->slice_node_hash[i] = NodeHash(s.node_name);
  }
  d->pool_table = std::move(table);
  d->prepared = std::make_shared<PreparedCache>();
  d->Layout(nullptr, {});
  return d;
}
}  // namespace

std::shared_ptr<const Snapshot> BuildSnapshot(
    const Features& features, std::vector<DeviceClass> classes,
    std::vector<std::shared_ptr<const ResourceSlice>> slices,
    std::vector<DeviceTaintRule> taint_rules) {
  return std::make_shared<const Snapshot>(
      BuildData(features, std::move(classes), std::move(slices), std::move(taint_rules)));
}

std::shared_ptr<const Snapshot> BuildSnapshot(const Features& features,
                                              std::vector<DeviceClass> classes,
                                              std::vector<ResourceSlice> slices,
                                              std::vector<DeviceTaintRule> taint_rules) {
  std::vector<std::shared_ptr<const ResourceSlice>> ptrs;
  ptrs.reserve(slices.size());
  for (auto& s : slices) ptrs.push_back(std::make_shared<const ResourceSlice>(std::move(s)));
  return BuildSnapshot(features, std::move(classes), std::move(ptrs), std::move(taint_rules));
}

std::shared_ptr<const Snapshot> Snapshot::Build(
    const Features& features, const std::vector<api::DeviceClass>& classes,
    const std::vector<std::shared_ptr<const api::ResourceSlice>>& slices,
    const std::vector<api::DeviceTaintRule>& taint_rules, const Snapshot* previous) {
  std::vector<DeviceClass> cls;
  cls.reserve(classes.size());
  for (const auto& c : classes) cls.push_back(ToAllocClass(c));
  const Data::Converted* before = previous ? previous->data().converted.get() : nullptr;
  auto converted = std::make_shared<Data::Converted>();
  converted->reserve(slices.size());
  std::vector<std::shared_ptr<const ResourceSlice>> ptrs;
  ptrs.reserve(slices.size());
  for (const auto& s : slices) {
    if (!s) continue;
    std::shared_ptr<const ResourceSlice> c;
    if (before) {
      auto it = before->find(s.get());
      if (it != before->end()) c = it->second.second;
    }
    if (!c) c = std::make_shared<const ResourceSlice>(ToAllocSlice(*s));
    converted->emplace(s.get(), std::make_pair(s, c));
    ptrs.push_back(std::move(c));
  }
  std::vector<DeviceTaintRule> rules;
  rules.reserve(taint_rules.size());
  for (const auto& r : taint_rules) rules.push_back(ToAllocTaintRule(r));
  auto d = BuildData(features, std::move(cls), std::move(ptrs), std::move(rules));
  d->converted = std::move(converted);
  if (previous) {
    d->prepared = PreparedCache::Carry(previous->data().prepared.get(), d->slices.ptrs_);
  }
  return std::make_shared<const Snapshot>(std::move(d));
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
  d->prepared = p.prepared;
  return d;
}

// Drops the prepared-device entries of slices a chain of WithSlice/WithoutSlice replaced once
// they outnumber the live slices (the entries keep their old slice objects alive).
void TrimPrepared(Snapshot::Data& d) {
  if (d.prepared && d.prepared->size() > 2 * d.slices.size() + 64) {
    d.prepared = PreparedCache::Carry(d.prepared.get(), d.slices.ptrs_);
  }
}
}  // namespace

std::shared_ptr<const Snapshot> Snapshot::WithSlice(const api::ResourceSlice& slice) const {
  return SnapshotWithSlice(*this, std::make_shared<const ResourceSlice>(ToAllocSlice(slice)));
}

std::shared_ptr<const Snapshot> SnapshotWithSlice(const Snapshot& snapshot, ResourceSlice slice) {
  return SnapshotWithSlice(snapshot, std::make_shared<const ResourceSlice>(std::move(slice)));
}

std::shared_ptr<const Snapshot> SnapshotWithSlice(const Snapshot& snapshot,
                                                  std::shared_ptr<const ResourceSlice> slice) {
  const Snapshot::Data* parent = &snapshot.data();
  auto d = Derive(*parent);
  if (!slice) {
    d->Layout(parent, {});
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
    d->slice_ndev[i] = static_cast<int>(slice->devices.size());
    d->slice_node_hash[i] = NodeHash(slice->node_name);
    d->slices.ptrs_[i] = std::move(slice);
  } else {
    d->slice_pool.push_back(pk);
    d->slice_ndev.push_back(static_cast<int>(slice->devices.size()));
    d->slice_node_hash.push_back(NodeHash(slice->node_name));
    d->slices.ptrs_.push_back(std::move(slice));
  }
  TrimPrepared(*d);
  d->Layout(parent, changed);
  return std::make_shared<const Snapshot>(std::move(d));
}

std::shared_ptr<const Snapshot> Snapshot::WithoutSlice(std::string_view name) const {
  auto d = Derive(*data_);
  std::vector<int> changed;
  size_t i = 0;
  while (i < d->slices.size() && d->slices[i].name != name) ++i;
  if (i < d->slices.size()) {
    changed.push_back(d->slice_pool[i]);
    d->slices.ptrs_.erase(d->slices.ptrs_.begin() + static_cast<std::ptrdiff_t>(i));
    d->slice_pool.erase(d->slice_pool.begin() + static_cast<std::ptrdiff_t>(i));
    d->slice_ndev.erase(d->slice_ndev.begin() + static_cast<std::ptrdiff_t>(i));
    d->slice_node_hash.erase(d->slice_node_hash.begin() + static_cast<std::ptrdiff_t>(i));
  }
  TrimPrepared(*d);
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
  return a >= 0 && b >= 0 &&
         data_->pools[static_cast<size_t>(a)].index ==
             other.data_->pools[static_cast<size_t>(b)].index;
}
bool Snapshot::IsPoolIndexed(std::string_view driver, std::string_view pool) const {
  int a = data_->pool_table->Find(driver, pool);
  if (a < 0) return false;
  return data_->pools[static_cast<size_t>(a)].index->touched.load(std::memory_order_acquire);
}

StatusOr<ComputeConfig> ToComputeConfig(const Allocator::Config& config) {
  ComputeConfig c;
  c.features = config.features;
  c.selectors = config.selectors;
  c.prune = config.prune;
  c.scheduler_prefilter = config.scheduler_prefilter;
  c.timeout = config.timeout;
  c.deterministic_share_ids = config.deterministic_share_ids;
  c.default_claims = config.default_claims;
  c.policies.reserve(config.policies.size());
  for (const auto& p : config.policies) {
    auto cp = ToAllocPolicy(p);
    if (!cp.ok()) return cp.status();
    c.policies.push_back(std::move(*cp));
  }
  return c;
}

Status ValidatePolicy(const api::AllocationPolicy& policy) {
  return ToAllocPolicy(policy).status();
}

StatusOr<std::unique_ptr<Allocator>> CreateAllocator(ComputeConfig config,
                                                     std::vector<DeviceClass> classes,
                                                     std::vector<ResourceSlice> slices,
                                                     std::vector<DeviceTaintRule> taint_rules,
                                                     const std::vector<ResourceClaim>& allocated) {
  auto snap =
      BuildSnapshot(config.features, std::move(classes), std::move(slices), std::move(taint_rules));
  return CreateAllocator(std::move(config), std::move(snap), allocated);
}

StatusOr<std::unique_ptr<Allocator>> CreateAllocator(
    ComputeConfig config, std::vector<DeviceClass> classes,
    std::vector<std::shared_ptr<const ResourceSlice>> slices,
    std::vector<DeviceTaintRule> taint_rules,
    std::shared_ptr<const std::vector<ResourceClaim>> allocated) {
  auto snap =
      BuildSnapshot(config.features, std::move(classes), std::move(slices), std::move(taint_rules));
  return CreateAllocator(std::move(config), std::move(snap), std::move(allocated));
}

StatusOr<std::unique_ptr<Allocator>> CreateAllocator(ComputeConfig config,
                                                     std::shared_ptr<const Snapshot> snapshot,
                                                     const std::vector<ResourceClaim>& allocated) {
  if (!snapshot) return InvalidArgumentError("no snapshot");
  if (snapshot->data().features.device_taint_rules != config.features.device_taint_rules) {
    return InvalidArgumentError("snapshot built with a different DeviceTaintRules feature gate");
  }
  auto impl = std::make_unique<Allocator::Impl>(std::move(config), std::move(snapshot));
  Allocator::Impl& m = *impl;
  m.ident_.assign(static_cast<size_t>(m.num_devices_), 0);
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
  return std::make_unique<Allocator>(std::move(impl));
}

StatusOr<std::unique_ptr<Allocator>> CreateAllocator(
    ComputeConfig config, std::shared_ptr<const Snapshot> snapshot,
    std::shared_ptr<const std::vector<ResourceClaim>> allocated) {
  static const std::vector<ResourceClaim> kNone;
  bool limits = HasNamespaceLimits(config.policies);
  auto a = CreateAllocator(std::move(config), std::move(snapshot),
                           limits && allocated ? *allocated : kNone);
  if (!a.ok() || limits || !allocated || allocated->empty()) return a;
  (*a)->impl().holder_src_ = allocated;  // explanations name the claims holding counters
  (*a)->impl().claims_src_ = std::move(allocated);
  return a;
}

namespace {
std::vector<ResourceClaim> ToAllocClaims(const std::vector<const api::ResourceClaim*>& claims,
                                         bool defaulted) {
  std::vector<ResourceClaim> out;
  out.reserve(claims.size());
  for (const api::ResourceClaim* c : claims) {
    if (c) out.push_back(defaulted ? ToAllocClaim(*c) : ToAllocClaimAsGiven(*c));
  }
  return out;
}
}  // namespace

StatusOr<std::unique_ptr<Allocator>> Allocator::Create(
    const Config& config, const std::vector<api::DeviceClass>& classes,
    const std::vector<std::shared_ptr<const api::ResourceSlice>>& slices,
    const std::vector<api::DeviceTaintRule>& taint_rules,
    const std::vector<const api::ResourceClaim*>& allocated) {
  auto snap = Snapshot::Build(config.features, classes, slices, taint_rules);
  return Create(config, std::move(snap), allocated);
}

StatusOr<std::unique_ptr<Allocator>> Allocator::Create(
    const Config& config, std::shared_ptr<const Snapshot> snapshot,
    const std::vector<const api::ResourceClaim*>& allocated) {
  auto c = ToComputeConfig(config);
  if (!c.ok()) return c.status();
  const bool defaulted = c->default_claims;
  return CreateAllocator(std::move(*c), std::move(snapshot), ToAllocClaims(allocated, defaulted));
}

}  // namespace draco::alloc
