#include "controller/allocator/allocator.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <set>
#include <unordered_set>

#include "controller/allocator/allocator_impl.h"
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

std::string IdentityKey(std::string_view driver, std::string_view pool, std::string_view device) {
  std::string k;
  k.reserve(driver.size() + pool.size() + device.size() + 2);
  k.append(driver).push_back('\0');
  k.append(pool).push_back('\0');
  k.append(device);
  return k;
}

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

void MergeTaintRules(const Features& f, const std::vector<DeviceTaintRule>& rules,
                     ResourceSlice& s) {
  // DeviceTaintRules are merged into device taints, rules in order (scheduler's slice tracker).
  if (!f.device_taint_rules) return;
  for (const auto& rule : rules) {
    if (!rule.has_selector) continue;
    if (rule.driver && *rule.driver != s.driver) continue;
    if (rule.pool && *rule.pool != s.pool) continue;
    for (auto& d : s.devices) {
      if (rule.device && *rule.device != d.name) continue;
      d.taints.push_back(rule.taint);
    }
  }
}

}  // namespace

void Snapshot::Data::Index() {
  class_by_name.clear();
  for (size_t i = 0; i < classes.size(); ++i) class_by_name[classes[i].name] = int(i);
  slice_pool_key.assign(slices.size(), 0);
  slice_gid_base.assign(slices.size(), 0);
  node_slices.clear();
  shared_slices.clear();
  pool_keys.clear();
  pool_key_index.clear();
  gid_identity.clear();
  identity_gid.clear();
  identity_index.clear();
  int64_t gid = 0;
  for (size_t i = 0; i < slices.size(); ++i) {
    const ResourceSlice& s = slices[i];
    std::string pk = IdentityKey(s.driver, s.pool, "");
    auto [it, inserted] = pool_key_index.emplace(pk, int(pool_keys.size()));
    if (inserted) pool_keys.push_back({s.driver, s.pool, {}});
    pool_keys[it->second].slices.push_back(int(i));
    slice_pool_key[i] = it->second;
    if (s.node_name && !s.node_name->empty()) {
      node_slices[*s.node_name].push_back(int(i));
    } else {
      shared_slices.push_back(int(i));
    }
    slice_gid_base[i] = int(gid);
    for (const auto& d : s.devices) {
      auto [iit, iins] =
          identity_index.emplace(IdentityKey(s.driver, s.pool, d.name), int(identity_gid.size()));
      if (iins) identity_gid.push_back(int(gid));
      gid_identity.push_back(iit->second);
      ++gid;
    }
  }
  num_devices = gid;
}

Snapshot::Snapshot(std::unique_ptr<Data> data) : data_(std::move(data)) {}
Snapshot::~Snapshot() = default;

std::shared_ptr<const Snapshot> Snapshot::Build(const Features& features,
                                                std::vector<DeviceClass> classes,
                                                std::vector<ResourceSlice> slices,
                                                std::vector<DeviceTaintRule> taint_rules) {
  auto d = std::make_unique<Data>();
  d->features = features;
  d->taint_rules = std::move(taint_rules);
  d->classes = std::move(classes);
  d->slices.ptrs_.reserve(slices.size());
  for (auto& s : slices) {
    MergeTaintRules(features, d->taint_rules, s);
    d->slices.ptrs_.push_back(std::make_shared<const ResourceSlice>(std::move(s)));
  }
  d->Index();
  return std::make_shared<const Snapshot>(std::move(d));
}

std::shared_ptr<const Snapshot> Snapshot::WithSlice(ResourceSlice slice) const {
  auto d = std::make_unique<Data>();
  d->features = data_->features;
  d->taint_rules = data_->taint_rules;
  d->classes = data_->classes;
  d->slices = data_->slices;
  MergeTaintRules(d->features, d->taint_rules, slice);
  auto ptr = std::make_shared<const ResourceSlice>(std::move(slice));
  bool replaced = false;
  for (auto& p : d->slices.ptrs_) {
    if (p->name == ptr->name) {
      p = ptr;
      replaced = true;
      break;
    }
  }
  if (!replaced) d->slices.ptrs_.push_back(std::move(ptr));
  d->Index();
  return std::make_shared<const Snapshot>(std::move(d));
}

std::shared_ptr<const Snapshot> Snapshot::WithoutSlice(std::string_view name) const {
  auto d = std::make_unique<Data>();
  d->features = data_->features;
  d->taint_rules = data_->taint_rules;
  d->classes = data_->classes;
  d->slices = data_->slices;
  std::erase_if(d->slices.ptrs_, [&](const auto& p) { return p->name == name; });
  d->Index();
  return std::make_shared<const Snapshot>(std::move(d));
}

int64_t Snapshot::num_devices() const { return data_->num_devices; }
size_t Snapshot::num_slices() const { return data_->slices.size(); }
bool Snapshot::SharesSlice(const Snapshot& other, size_t i) const {
  return i < data_->slices.size() && i < other.data_->slices.size() &&
         data_->slices.ptrs_[i] == other.data_->slices.ptrs_[i];
}

StatusOr<std::unique_ptr<Allocator>> Allocator::Create(
    Config config, std::vector<DeviceClass> classes, std::vector<ResourceSlice> slices,
    std::vector<DeviceTaintRule> taint_rules, const std::vector<ResourceClaim>& allocated) {
  auto snap = Snapshot::Build(config.features, std::move(classes), std::move(slices),
                              std::move(taint_rules));
  return Create(std::move(config), std::move(snap), allocated);
}

StatusOr<std::unique_ptr<Allocator>> Allocator::Create(
    Config config, std::shared_ptr<const Snapshot> snapshot,
    const std::vector<ResourceClaim>& allocated) {
  if (config.features.compatibility_groups || config.features.derived_attributes) {
    return UnimplementedError(
        "features compatibilityGroups and derivedAttributes (alpha) are not supported");
  }
  if (!snapshot) return InvalidArgumentError("no snapshot");
  if (snapshot->data().features.device_taint_rules != config.features.device_taint_rules) {
    return InvalidArgumentError("snapshot built with a different DeviceTaintRules feature gate");
  }
  auto impl = std::make_unique<Impl>(std::move(config), std::move(snapshot));
  Impl& m = *impl;
  m.identities_.resize(m.d_.identity_gid.size());
  m.pool_epoch_.assign(m.pool_keys_.size(), 0);
  m.class_sel_.resize(m.classes_.size());
  m.class_sel_err_.resize(m.classes_.size());
  for (auto& v : m.class_sel_) v.assign(size_t(m.num_devices_), 0);
  m.InitPolicies();
  for (const auto& c : allocated) {
    if (c.allocation) m.AddAllocation(*c.allocation, &c);
  }
  return std::unique_ptr<Allocator>(new Allocator(std::move(impl)));
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
  d->identities = m.identities_;
  d->pool_epoch = m.pool_epoch_;
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
    m.identities_ = d.identities;
    m.pool_epoch_ = d.pool_epoch;
  } else {
    // Rebase onto a derived snapshot (e.g. after WithSlice): move every in-use identity by its
    // (driver, pool, device) key; identities absent from the new snapshot are dropped, as
    // allocations of unknown devices are when reading claims.
    const Snapshot::Data& old = d.snapshot->data();
    for (size_t id = 0; id < d.identities.size(); ++id) {
      const IdentityState& st = d.identities[id];
      if (!st.exclusive && st.shares == 0 && !st.has_aggregate) continue;
      int gid = old.identity_gid[id];
      auto it = std::upper_bound(old.slice_gid_base.begin(), old.slice_gid_base.end(), gid);
      size_t si = size_t(it - old.slice_gid_base.begin()) - 1;
      const ResourceSlice& sl = old.slices[si];
      const Device& dev = sl.devices[size_t(gid - old.slice_gid_base[si])];
      auto nit = m.identity_index_.find(IdentityKey(sl.driver, sl.pool, dev.name));
      if (nit == m.identity_index_.end()) continue;
      m.identities_[size_t(nit->second)] = st;
    }
  }
  for (const auto& [k, u] : d.usage) m.usage_[k] = Impl::Usage{u.first, u.second};
  return a;
}

void Allocator::Impl::AddAllocation(const AllocationResult& result, const ResourceClaim* claim) {
  for (const auto& r : result.results) {
    if (r.admin_access.value_or(false)) continue;
    auto it = identity_index_.find(IdentityKey(r.driver, r.pool, r.device));
    if (it == identity_index_.end()) continue;  // not in the snapshot: cannot matter
    if (claim != nullptr && !class_policy_.empty()) {
      auto cls = class_by_name_.find(ClassOfRequest(*claim, r.request));
      int pol = cls == class_by_name_.end() ? -1 : PolicyOf(cls->second);
      if (pol >= 0 && !config_.policies[size_t(pol)].namespace_limits.empty()) {
        Usage& u = usage_[{pol, claim->namespace_name}];
        ++u.devices;
        // Capacity: consumed capacity for shared allocations, else the device's capacity.
        int gid = d_.identity_gid[size_t(it->second)];
        const Device& dev = slices_[size_t(SliceOfGid(gid))]
                                .devices[size_t(gid - slice_gid_base_[size_t(SliceOfGid(gid))])];
        if (r.share_id && r.has_consumed_capacity) {
          for (const auto& [name, q] : r.consumed_capacity) u.capacity[name] += q.nanos;
        } else if (!r.share_id) {
          for (const auto& [name, c] : dev.capacity) u.capacity[name] += c.value.nanos;
        }
      }
    }
    IdentityState& st = identities_[it->second];
    if (config_.features.consumable_capacity && r.share_id) {
      ++st.shares;
      if (r.has_consumed_capacity) {
        st.has_aggregate = true;
        for (const auto& [name, q] : r.consumed_capacity) {
          auto a = std::find_if(st.aggregate.begin(), st.aggregate.end(),
                                [&](const auto& p) { return p.first == name; });
          if (a == st.aggregate.end()) {
            st.aggregate.emplace_back(name, q.nanos);
          } else {
            a->second += q.nanos;
          }
        }
      }
    } else {
      st.exclusive = true;
    }
    auto pk = pool_key_index_.find(IdentityKey(r.driver, r.pool, ""));
    if (pk != pool_key_index_.end()) ++pool_epoch_[pk->second];
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

int64_t Allocator::Impl::NodeAllocatedCount(const std::string& node) const {
  auto it = node_slices_.find(node);
  if (it == node_slices_.end()) return 0;
  int64_t n = 0;
  for (int si : it->second) {
    int base = slice_gid_base_[size_t(si)];
    for (size_t k = 0; k < slices_[size_t(si)].devices.size(); ++k) {
      if (IsDeviceAllocated(base + int(k))) ++n;
    }
  }
  return n;
}

void Allocator::Commit(const AllocationResult& result) { impl_->AddAllocation(result, nullptr); }

int64_t Allocator::num_devices() const { return impl_->num_devices_; }

double Allocator::IndexBytesPerDevice() const {
  const Impl& m = *impl_;
  if (m.num_devices_ == 0) return 0;
  size_t bytes = m.gid_identity_.capacity() * sizeof(int) +
                 m.identities_.capacity() * sizeof(IdentityState) +
                 m.identity_index_.size() * (sizeof(std::string) + 32 + 2 * sizeof(void*));
  for (const auto& [k, v] : m.identity_index_) bytes += k.capacity();
  for (const auto& v : m.class_sel_) bytes += v.capacity();
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

int Allocator::Impl::SliceOfGid(int gid) const {
  auto it = std::upper_bound(slice_gid_base_.begin(), slice_gid_base_.end(), gid);
  // upper_bound skips empty slices that share a base with the owning slice.
  return int(it - slice_gid_base_.begin()) - 1;
}

const PreparedDevice* Allocator::Impl::Prepared(int gid) {
  if (!config_.selectors) return nullptr;
  if (prepared_.empty()) prepared_.resize(size_t(num_devices_));
  auto& p = prepared_[size_t(gid)];
  if (!p) {
    int slice = SliceOfGid(gid);
    const ResourceSlice& s = slices_[slice];
    const Device& d = s.devices[gid - slice_gid_base_[slice]];
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
  uint8_t& slot = class_sel_[class_idx][gid];
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
                ": CEL runtime error: " + m.status().message();
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
  if (!node.name.empty()) {
    auto it = node_slices_.find(node.name);
    if (it != node_slices_.end()) for_node = it->second;
  }
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
    int pk = slice_pool_key_[si];
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
      for (int si : pool_keys_[pk].slices) {
        const ResourceSlice& s = slices_[si];
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
    const PoolKey& x = pool_keys_[a.pool_key];
    const PoolKey& y = pool_keys_[b.pool_key];
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
    for (int si : pv.targeting) {
      const ResourceSlice& s = slices_[si];
      for (size_t di = 0; di < s.devices.size(); ++di) {
        Candidate c;
        c.slice = si;
        c.device = int(di);
        c.gid = slice_gid_base_[si] + int(di);
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
  if (pool.available_epoch == pool_epoch_[pool.pool_key]) return pool.available;
  pool.available = pool.counter_values;
  for (const auto* list : {&pool.targeting, &pool.not_targeting}) {
    for (int si : *list) {
      const ResourceSlice& s = slices_[si];
      for (size_t di = 0; di < s.devices.size(); ++di) {
        if (!IsDeviceAllocated(slice_gid_base_[si] + int(di))) continue;
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
  uint64_t a = rng_(), b = rng_();
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
