#include "controller/allocator/search.h"

#include <algorithm>
#include <limits>
#include <set>

#include "controller/allocator/capacity.h"
#include "controller/allocator/explain.h"
#include "controller/allocator/node_selector.h"

namespace draco::alloc {
namespace {

std::string KObj(const ResourceClaim& c) {
  return c.namespace_name.empty() ? c.name : c.namespace_name + "/" + c.name;
}

std::string DeviceIdString(const ResourceSlice& s, const Device& d) {
  return s.driver + "/" + s.pool + "/" + d.name;
}

bool Tolerates(const DeviceToleration& t, const DeviceTaint& x) {
  if (!t.effect.empty() && t.effect != x.effect) return false;
  if (!t.key.empty() && t.key != x.key) return false;
  if (t.op.empty() || t.op == "Equal") return t.value == x.value;
  return t.op == "Exists";
}

}  // namespace

std::optional<AttrSet> AttrSet::From(const Attribute* a) {
  if (a == nullptr) return std::nullopt;
  AttrSet s;
  using K = Attribute::Kind;
  switch (a->kind) {
    case K::kInts:
      s.type = 0;
      s.nums = a->ints;
      break;
    case K::kBools:
      s.type = 1;
      for (bool b : a->bools) s.nums.push_back(b ? 1 : 0);
      break;
    case K::kStrings:
      s.type = 2;
      s.strs = a->strs;
      break;
    case K::kVersions:
      s.type = 3;
      s.strs = a->strs;
      break;
    case K::kInt:
      s.type = 0;
      s.nums = {a->i};
      break;
    case K::kBool:
      s.type = 1;
      s.nums = {a->b ? 1 : 0};
      break;
    case K::kString:
      s.type = 2;
      s.strs = {a->s};
      break;
    case K::kVersion:
      s.type = 3;
      s.strs = {a->s};
      break;
    default:
      return std::nullopt;
  }
  std::sort(s.nums.begin(), s.nums.end());
  s.nums.erase(std::unique(s.nums.begin(), s.nums.end()), s.nums.end());
  std::sort(s.strs.begin(), s.strs.end());
  s.strs.erase(std::unique(s.strs.begin(), s.strs.end()), s.strs.end());
  return s;
}

std::optional<AttrSet> AttrSet::Intersect(const AttrSet& o) const {
  if (type != o.type || type < 0) return std::nullopt;
  AttrSet r;
  r.type = type;
  std::set_intersection(nums.begin(), nums.end(), o.nums.begin(), o.nums.end(),
                        std::back_inserter(r.nums));
  std::set_intersection(strs.begin(), strs.end(), o.strs.begin(), o.strs.end(),
                        std::back_inserter(r.strs));
  if (r.nums.empty() && r.strs.empty()) return std::nullopt;
  return r;
}

const Attribute* LookupAttribute(const Device& d, std::string_view driver,
                                 std::string_view fqname) {
  if (const Attribute* a = d.FindAttribute(fqname)) return a;
  size_t slash = fqname.find('/');
  if (slash == std::string_view::npos) return nullptr;
  if (fqname.substr(0, slash) != driver) return nullptr;
  return d.FindAttribute(fqname.substr(slash + 1));
}

bool Search::Constraint::Applies(const ReqData& rd) const {
  if (names.empty()) return true;
  if (rd.parent.empty()) return names.count(rd.name) > 0;
  return names.count(rd.parent) > 0 || names.count(rd.full) > 0;
}

bool Search::Constraint::Add(const Attribute* a) {
  if (a == nullptr) return false;
  using K = Attribute::Kind;
  if (distinct) {
    if (list_mode) {
      auto ns = AttrSet::From(a);
      if (!ns) return false;
      for (const Attribute* m : members) {
        auto es = AttrSet::From(m);
        if (!es) continue;
        if (ns->Intersect(*es)) return false;
      }
    } else {
      for (const Attribute* m : members) {
        switch (a->kind) {
          case K::kString:
            if (m->kind == K::kString && m->s == a->s) return false;
            break;
          case K::kInt:
            if (m->kind == K::kInt && m->i == a->i) return false;
            break;
          case K::kBool:
            if (m->kind == K::kBool && m->b == a->b) return false;
            break;
          case K::kVersion:
            if (m->kind == K::kVersion && m->s == a->s) return false;
            break;
          default:
            return false;
        }
      }
    }
    members.push_back(a);
    return true;
  }
  if (count == 0) {
    if (list_mode) {
      auto s = AttrSet::From(a);
      if (!s) return false;
      stack.push_back(std::move(*s));
    } else {
      ref = a;
    }
    count = 1;
    return true;
  }
  if (list_mode) {
    auto s = AttrSet::From(a);
    if (!s) return false;
    auto narrowed = stack[count - 1].Intersect(*s);
    if (!narrowed) return false;
    stack.push_back(std::move(*narrowed));
  } else {
    switch (a->kind) {
      case K::kString:
        if (ref->kind != K::kString || ref->s != a->s) return false;
        break;
      case K::kInt:
        if (ref->kind != K::kInt || ref->i != a->i) return false;
        break;
      case K::kBool:
        if (ref->kind != K::kBool || ref->b != a->b) return false;
        break;
      case K::kVersion:
        if (ref->kind != K::kVersion || ref->s != a->s) return false;
        break;
      default:
        return false;
    }
  }
  ++count;
  return true;
}

void Search::Constraint::Remove() {
  if (distinct) {
    members.pop_back();
    return;
  }
  --count;
  if (list_mode) stack.resize(size_t(count));
}

Search::Search(Allocator::Impl& impl, const Node& node,
               const std::vector<const ResourceClaim*>& claims, Explanation* explain)
    : impl_(impl), node_(node), explain_(explain) {
  claims_.resize(claims.size());
  for (size_t i = 0; i < claims.size(); ++i) {
    claims_[i].claim = claims[i];
    claims_[i].kobj = KObj(*claims[i]);
  }
  const Features& f = impl.config_.features;
  experimental_ = f.list_type_attributes || f.optional_node_operations || f.derived_attributes ||
                  f.compatibility_groups;
  if (impl.config_.timeout.count() > 0) {
    has_deadline_ = true;
    deadline_ = std::chrono::steady_clock::now() + impl.config_.timeout;
  }
}

bool Search::InUse(int ci) const {
  const Candidate& c = pools_->cands[ci];
  return impl_.Identity(c.ident).exclusive || picked_count_[ci] > 0;
}

bool Search::TaintBlocks(const Device& d, const RequestSpec& spec) const {
  for (const auto& taint : d.taints) {
    if (taint.effect != "NoExecute" && taint.effect != "NoSchedule") continue;
    bool tolerated = std::any_of(spec.tolerations.begin(), spec.tolerations.end(),
                                 [&](const auto& t) { return Tolerates(t, taint); });
    if (!tolerated) return true;
  }
  return false;
}

uint8_t Search::Selectable(ReqData& rd, int ci) {
  uint8_t& slot = rd.sel[ci];
  if (slot != 0) return slot;
  const Candidate& c = pools_->cands[ci];
  const ResourceSlice& s = impl_.slices_[c.slice];
  const Device& d = s.devices[c.device];
  if (!impl_.config_.features.device_binding && d.binding_conditions &&
      !d.binding_conditions->empty()) {
    return slot = 1;
  }
  std::string err;
  uint8_t cls = impl_.ClassSelect(rd.class_idx, c.gid, &err);
  if (cls == 3) {
    rd.sel_err[ci] = err;
    return slot = 3;
  }
  if (cls == 1) return slot = 1;
  const auto& sels = rd.spec->selectors;
  for (size_t i = 0; i < sels.size(); ++i) {
    const auto& comp = impl_.Compile(sels[i]);
    if (!comp.error.ok()) {
      rd.sel_err[ci] = "claim " + claims_[rd.claim].kobj + ": selector #" + std::to_string(i) +
                       ": CEL compile error: " + comp.error.message();
      return slot = 3;
    }
    auto m = comp.sel->Matches(*impl_.Prepared(c.gid));
    if (!m.ok()) {
      rd.sel_err[ci] = "claim " + claims_[rd.claim].kobj + ": selector #" + std::to_string(i) +
                       " on device " + DeviceIdString(s, d) +
                       ": CEL runtime error: " + AddCelKeyHint(m.status().message());
      return slot = 3;
    }
    if (!*m) return slot = 1;
  }
  if (s.per_device_node_selection.value_or(false)) {
    auto m = NodeMatches(node_, d.node_name.value_or(""), d.all_nodes.value_or(false),
                         d.node_selector ? &*d.node_selector : nullptr);
    if (!m.ok()) {
      rd.sel_err[ci] = "failed to parse node selector: " + m.status().message();
      return slot = 3;
    }
    if (!*m) return slot = 1;
  }
  return slot = 2;
}

bool Search::StaticCapacityFits(const ReqData& rd, int ci, std::string* err) {
  const Device& d = impl_.DeviceOf(pools_->cands[ci]);
  std::vector<Qty> consumed;
  bool missing = false;
  if (!ConsumedForDevice(*rd.spec, d, impl_.config_.features.fractional_capacity_range, &consumed,
                         &missing, err)) {
    return false;
  }
  if (missing) return false;
  for (size_t i = 0; i < d.capacity.size(); ++i) {
    const auto& cap = d.capacity[i].second;
    if (ViolatesPolicy(consumed[i], cap.request_policy,
                       impl_.config_.features.fractional_capacity_range)) {
      return false;
    }
    if (consumed[i].nanos > cap.value.nanos) return false;
  }
  return true;
}

int Search::CapacityFits(const ReqData& rd, int ci, bool include_usage) {
  const Candidate& c = pools_->cands[ci];
  const Device& d = impl_.DeviceOf(c);
  std::vector<Qty> consumed;
  bool missing = false;
  std::string err;
  bool fractional = impl_.config_.features.fractional_capacity_range;
  if (!ConsumedForDevice(*rd.spec, d, fractional, &consumed, &missing, &err)) {
    status_ = InvalidArgumentError(err);
    return -1;
  }
  if (missing) return 0;
  const IdentityView st = impl_.Identity(c.ident);
  for (size_t i = 0; i < d.capacity.size(); ++i) {
    const auto& [name, cap] = d.capacity[i];
    if (ViolatesPolicy(consumed[i], cap.request_policy, fractional)) return 0;
    Amount sum = consumed[i].nanos;
    if (include_usage) {
      if (st.has_aggregate) {
        for (const auto& [k, v] : *st.aggregate) {
          if (k == name) sum += v;
        }
      }
      if (!alloc_cap_[ci].empty()) sum += alloc_cap_[ci][i];
    }
    if (sum > cap.value.nanos) return 0;
  }
  return 1;
}

bool Search::CapacityInUse(int ci) const {
  const IdentityView st = impl_.Identity(pools_->cands[ci].ident);
  return st.has_aggregate || st.shares > 0 || live_shares_[ci] > 0;
}

Status Search::ValidateRequest(ReqData& rd, const ResourceClaim& claim) {
  const RequestSpec& spec = *rd.spec;
  const Features& f = impl_.config_.features;
  std::string prefix = "claim " + KObj(claim) + ", request " + spec.name;
  if (spec.has_derived_attributes && !f.derived_attributes) {
    return InvalidArgumentError(prefix +
                                ": cannot handle request with derived attributes, the feature is "
                                "disabled");
  }
  for (size_t i = 0; i < spec.selectors.size(); ++i) {
    if (spec.selectors[i].empty()) {
      return InvalidArgumentError(prefix + ", selector #" + std::to_string(i) +
                                  ": CEL expression empty (unsupported selector type?)");
    }
  }
  if (!f.admin_access && spec.admin_access.has_value()) {
    return InvalidArgumentError(prefix +
                                ": admin access is requested, but the feature is disabled");
  }
  if (spec.device_class_name.empty()) {
    return InvalidArgumentError(prefix + ": missing device class name (unsupported request type?)");
  }
  auto cls = impl_.class_by_name_.find(spec.device_class_name);
  if (cls == impl_.class_by_name_.end()) {
    return NotFoundError(prefix + ": could not retrieve device class " + spec.device_class_name +
                         ": deviceclasses.resource.k8s.io \"" + spec.device_class_name +
                         "\" not found");
  }
  rd.class_idx = cls->second;
  rd.policy = impl_.PolicyOf(rd.class_idx);
  if (rd.policy >= 0) {
    rd.limit = impl_.config_.policies[size_t(rd.policy)].LimitFor(claim.namespace_name);
    ApplyStrategy(rd);
  }
  rd.sel.assign(pools_->cands.size(), 0);
  rd.sel_err.assign(pools_->cands.size(), std::string());
  if (spec.allocation_mode == "ExactCount") {
    rd.num_devices = spec.count;
    return OkStatus();
  }
  if (spec.allocation_mode != "All") {
    return InvalidArgumentError(prefix + ": unsupported count mode " + spec.allocation_mode);
  }
  rd.all = true;
  for (const PoolView& p : pools_->pools) {
    const auto& key = impl_.pool_keys_[p.pool_key];
    if (p.incomplete) {
      return InvalidArgumentError(prefix + ": asks for all devices, but resource pool " +
                                  std::string(key.driver) + "/" + std::string(key.pool) +
                                  " is currently being updated");
    }
    if (p.invalid) {
      return InvalidArgumentError(prefix + ": asks for all devices, but resource pool " +
                                  std::string(key.driver) + "/" + std::string(key.pool) +
                                  " is currently invalid");
    }
  }
  for (int ci = 0; ci < int(pools_->cands.size()); ++ci) {
    uint8_t s = Selectable(rd, ci);
    if (s == 3) return InvalidArgumentError(rd.sel_err[ci]);
    if (s != 2) continue;
    if (f.consumable_capacity) {
      std::string err;
      if (!StaticCapacityFits(rd, ci, &err)) {
        if (!err.empty()) {
          const Candidate& c = pools_->cands[ci];
          return InvalidArgumentError(prefix + ": checking capacity for device " +
                                      impl_.DeviceOf(c).name + ": " + err);
        }
        continue;
      }
    }
    rd.all_devices.push_back(ci);
  }
  rd.num_devices = int64_t(rd.all_devices.size());
  return OkStatus();
}

Status Search::Prepare() {
  const Features& f = impl_.config_.features;
  for (size_t ci = 0; ci < claims_.size(); ++ci) {
    ClaimData& cd = claims_[ci];
    const ResourceClaim& claim = *cd.claim;
    int64_t min_per_claim = 0;
    cd.reqs.resize(claim.requests.size());
    cd.has_subs.resize(claim.requests.size());
    cd.selected_sub.assign(claim.requests.size(), 0);
    for (size_t ri = 0; ri < claim.requests.size(); ++ri) {
      const DeviceRequest& r = claim.requests[ri];
      bool has_subs = !r.first_available.empty();
      cd.has_subs[ri] = has_subs;
      if (!f.prioritized_list && has_subs) {
        return InvalidArgumentError("claim " + cd.kobj + ", request " + r.name +
                                    ": has subrequests, but the DRAPrioritizedList feature is "
                                    "disabled");
      }
      if (!f.consumable_capacity) {
        if (r.exactly && r.exactly->has_capacity) {
          return InvalidArgumentError("claim " + cd.kobj + ", request " + r.name +
                                      ": has capacity requests, but the DRAConsumableCapacity "
                                      "feature is disabled");
        }
        for (const auto& s : r.first_available) {
          if (s.has_capacity) {
            return InvalidArgumentError("claim " + cd.kobj + ", subrequest " + s.name +
                                        ": has capacity requests, but the DRAConsumableCapacity "
                                        "feature is disabled");
          }
        }
      }
      int64_t min_per_request;
      if (has_subs) {
        min_per_request = std::numeric_limits<int64_t>::max();
        cd.reqs[ri].resize(r.first_available.size());
        for (size_t si = 0; si < r.first_available.size(); ++si) {
          ReqData& rd = cd.reqs[ri][si];
          rd.spec = &r.first_available[si];
          rd.name = rd.spec->name;
          rd.parent = r.name;
          rd.full = r.name + "/" + rd.name;
          rd.claim = int(ci);
          rd.req = int(ri);
          rd.sub = int(si);
          if (Status s = ValidateRequest(rd, claim); !s.ok()) return s;
          min_per_request = std::min(min_per_request, rd.num_devices);
        }
      } else {
        if (!r.exactly) {
          return InvalidArgumentError("claim " + cd.kobj + ", request " + r.name +
                                      ": unknown request type");
        }
        cd.reqs[ri].resize(1);
        ReqData& rd = cd.reqs[ri][0];
        rd.spec = &*r.exactly;
        rd.name = r.name;
        rd.full = r.name;
        rd.claim = int(ci);
        rd.req = int(ri);
        rd.admin = r.exactly->admin_access.value_or(false);
        if (Status s = ValidateRequest(rd, claim); !s.ok()) return s;
        min_per_request = rd.num_devices;
      }
      if (min_per_request > kMaxResultsPerClaim - min_per_claim) {
        return InvalidArgumentError("claim " + cd.kobj + ", request " + r.name + ": adding " +
                                    std::to_string(min_per_request) +
                                    " devices exceeds the claim limit of " +
                                    std::to_string(kMaxResultsPerClaim) + ", with " +
                                    std::to_string(min_per_claim) + " already accounted for");
      }
      min_per_claim += min_per_request;
    }
    for (size_t k = 0; k < claim.constraints.size(); ++k) {
      const DeviceConstraint& dc = claim.constraints[k];
      Constraint c;
      c.names.insert(dc.requests.begin(), dc.requests.end());
      c.list_mode = experimental_ && f.list_type_attributes;
      if (dc.match_attribute) {
        c.attribute = *dc.match_attribute;
      } else if (dc.distinct_attribute) {
        c.attribute = *dc.distinct_attribute;
        c.distinct = true;
      } else {
        return InvalidArgumentError("claim " + cd.kobj + ", constraint #" + std::to_string(k) +
                                    ": empty constraint (unsupported constraint type?)");
      }
      cd.constraints.push_back(std::move(c));
    }
    cd.picked.assign(pools_->cands.size(), 0);
  }
  return OkStatus();
}

bool Search::CheckCounters(int ci) {
  const Candidate& c = pools_->cands[ci];
  PoolView& pool = const_cast<PoolView&>(pools_->pools[c.pool]);
  const std::vector<Amount>& avail = impl_.AvailableCounters(pool);
  std::vector<Amount>& used = consumed_counters_[c.pool];
  if (!ledger_init_[c.pool]) {
    used.assign(avail.size(), 0);
    int v = 0;
    for (Amount a : avail) v += a < 0 ? 1 : 0;
    violations_[c.pool] = v;
    ledger_init_[c.pool] = 1;
  }
  for (const auto& [k, amount] : c.consumption) {
    int before = avail[k] < used[k];
    used[k] += amount;
    violations_[c.pool] += int(avail[k] < used[k]) - before;
  }
  if (violations_[c.pool] > 0) {
    ReleaseCounters(ci);
    return false;
  }
  return true;
}

void Search::ReleaseCounters(int ci) {
  const Candidate& c = pools_->cands[ci];
  const std::vector<Amount>& avail = pools_->pools[c.pool].available;
  std::vector<Amount>& used = consumed_counters_[c.pool];
  for (const auto& [k, amount] : c.consumption) {
    int before = avail[k] < used[k];
    used[k] -= amount;
    violations_[c.pool] += int(avail[k] < used[k]) - before;
  }
}

int Search::AllocateDevice(int claim, ReqData& rd, int ci, bool must, Rollback* rb) {
  const Features& f = impl_.config_.features;
  const Candidate& c = pools_->cands[ci];
  const ResourceSlice& slice = impl_.slices_[c.slice];
  const Device& d = slice.devices[c.device];
  ClaimData& cd = claims_[claim];
  bool multi = f.consumable_capacity && d.allow_multiple_allocations.value_or(false);
  if (!multi && rd.admin && cd.picked[ci]) return 0;
  if (!rd.admin && InUse(ci)) return 0;
  if (experimental_ && !slice.skip_node_operations.empty()) {
    if (!f.optional_node_operations) return 0;
    const auto& df = node_.declared_features;
    if (std::find(df.begin(), df.end(), "DRAOptionalNodeOperations") == df.end()) return 0;
  }
  if (!f.partitionable_devices && !d.consumes_counters.empty()) return 0;
  bool skip_counters = multi && CapacityInUse(ci);
  *rb = Rollback{};
  if (f.compatibility_groups && !skip_counters && !d.consumes_counters.empty() &&
      !CheckGroups(ci, rb)) {
    return 0;
  }
  if (!skip_counters && !d.consumes_counters.empty()) {
    if (!CheckCounters(ci)) {
      RestoreGroups(ci, *rb);
      return 0;
    }
    rb->counters = true;
  }
  if (f.device_taints && TaintBlocks(d, *rd.spec)) {
    Undo(claim, rd, ci, *rb);
    return 0;
  }
  for (auto& k : cd.constraints) {
    if (!k.Applies(rd)) {
      ++rb->constraints_added;
      continue;
    }
    const Attribute* attr = nullptr;
    if (Status st = AttributeFor(rd, ci, k.attribute, &attr); !st.ok()) {
      Undo(claim, rd, ci, *rb);
      status_ = st;
      return -1;
    }
    if (!k.Add(attr)) {
      Undo(claim, rd, ci, *rb);
      if (must) {
        status_ = InvalidArgumentError("claim " + cd.kobj + ", request " + rd.name +
                                       ": cannot add device " + DeviceIdString(slice, d) +
                                       " because a claim constraint would not be satisfied");
        return -1;
      }
      return 0;
    }
    ++rb->constraints_added;
  }
  if (!multi) {
    cd.picked[ci] = 1;
    ++picked_count_[ci];
    rb->marked = true;
  }
  InternalResult res;
  res.req = rd.req;
  res.sub = rd.sub;
  res.cand = ci;
  res.admin = rd.admin;
  if (f.consumable_capacity) {
    int fits = CapacityFits(rd, ci, true);
    if (fits < 0) {
      Undo(claim, rd, ci, *rb);
      status_ = InvalidArgumentError("claim " + cd.kobj + ", request " + rd.name +
                                     ": rechecking capacity for device " +
                                     DeviceIdString(slice, d) + ": " + status_.message());
      return -1;
    }
    if (fits == 0) {
      Undo(claim, rd, ci, *rb);
      return 0;
    }
    if (multi) {
      std::vector<Qty> consumed;
      bool missing = false;
      std::string err;
      ConsumedForDevice(*rd.spec, d, f.fractional_capacity_range, &consumed, &missing, &err);
      res.share_id = impl_.NewShareId();
      if (alloc_cap_[ci].empty()) alloc_cap_[ci].assign(d.capacity.size(), 0);
      rb->consumed_amounts.resize(consumed.size());
      for (size_t i = 0; i < consumed.size(); ++i) {
        alloc_cap_[ci][i] += consumed[i].nanos;
        rb->consumed_amounts[i] = consumed[i].nanos;
        res.consumed.emplace_back(d.capacity[i].first, consumed[i]);
      }
      ++live_shares_[ci];
      rb->capacity_inserted = true;
    }
  }
  if (rd.limit != nullptr && !rd.admin && !LimitAllows(cd, rd, ci, &res.consumed, rb)) {
    Undo(claim, rd, ci, *rb);
    return 0;
  }
  cd.results.push_back(std::move(res));
  rb->result_added = true;
  return 1;
}

void Search::ApplyStrategy(ReqData& rd) {
  Strategy st = impl_.config_.policies[size_t(rd.policy)].strategy;
  if (st == Strategy::kFirstFit) return;
  const auto& cands = pools_->cands;
  // Allocated devices per pool of this node (committed state).
  std::vector<int64_t> pool_used(pools_->pools.size(), 0);
  for (const Candidate& c : cands) {
    if (impl_.IsIdentAllocated(c.ident)) ++pool_used[size_t(c.pool)];
  }
  rd.order.resize(cands.size());
  for (size_t i = 0; i < cands.size(); ++i) rd.order[i] = int(i);
  auto key = [&](int ci) {
    const Candidate& c = cands[size_t(ci)];
    // Within a pool, shared devices already in use count as "more allocated".
    int64_t shares = impl_.Identity(c.ident).shares;
    return std::pair<int64_t, int64_t>(pool_used[size_t(c.pool)], shares);
  };
  std::stable_sort(rd.order.begin(), rd.order.end(), [&](int a, int b) {
    return st == Strategy::kBinPack ? key(a) > key(b) : key(a) < key(b);
  });
}

const Allocator::Impl::Usage* Search::Committed(int policy, const std::string& ns) const {
  auto it = impl_.usage_.find({policy, ns});
  return it == impl_.usage_.end() ? nullptr : &it->second;
}

Allocator::Impl::Usage Search::UsageOf(int policy, const std::string& ns) const {
  Allocator::Impl::Usage u;
  if (const auto* c = Committed(policy, ns)) u = *c;
  auto it = inflight_.find({policy, ns});
  if (it != inflight_.end()) {
    u.devices += it->second.devices;
    for (const auto& [k, v] : it->second.capacity) u.capacity[k] += v;
  }
  return u;
}

bool Search::LimitAllows(const ClaimData& cd, const ReqData& rd, int ci,
                         const std::vector<std::pair<std::string, Qty>>* consumed, Rollback* rb) {
  const NamespaceLimit& lim = *rd.limit;
  const std::string& ns = cd.claim->namespace_name;
  const AllocationPolicy& pol = impl_.config_.policies[size_t(rd.policy)];
  Allocator::Impl::Usage used = UsageOf(rd.policy, ns);
  const Device& d = impl_.DeviceOf(pools_->cands[size_t(ci)]);
  auto fail = [&](const std::string& what, const std::string& limit, const std::string& u,
                  const std::string& req) {
    limit_message_ = "AllocationPolicy " + pol.name + ": namespace " + ns + " " + what + " limit " +
                     limit + " (namespace entry \"" + lim.namespace_name + "\"), used " + u +
                     ", requested " + req + " more (claim " + cd.kobj + ", request " + rd.full +
                     ")";
    return false;
  };
  if (lim.max_devices && used.devices + 1 > *lim.max_devices) {
    return fail("maxDevices", std::to_string(*lim.max_devices), std::to_string(used.devices), "1");
  }
  rb->limit_capacity.clear();
  for (const auto& [name, max] : lim.max_capacity) {
    Amount add = 0;
    if (consumed != nullptr && !consumed->empty()) {
      for (const auto& [cn, q] : *consumed) {
        if (cn == name) add = q.nanos;
      }
    } else if (const auto* c = d.FindCapacity(name)) {
      add = c->value.nanos;
    }
    Amount have = used.capacity.count(name) ? used.capacity[name] : Amount(0);
    if (have + add > max.nanos) {
      auto fmt = [](Amount a) -> std::string {
        constexpr Amount kOne = 1000000000;
        if (a % kOne != 0) return std::to_string(int64_t(a / 1000000)) + "m";
        int64_t v = int64_t(a / kOne);
        bool binary = v >= 1024 && v % 1024 == 0;
        return Qty::FromInt64(
                   v, binary ? api::Quantity::Format::kBinarySI : api::Quantity::Format::kDecimalSI)
            .ToString();
      };
      return fail("maxCapacity[" + name + "]", max.ToString(), fmt(have), fmt(add));
    }
    rb->limit_capacity.emplace_back(name, add);
  }
  Allocator::Impl::Usage& u = inflight_[{rd.policy, ns}];
  ++u.devices;
  for (const auto& [name, add] : rb->limit_capacity) u.capacity[name] += add;
  rb->limit_added = true;
  return true;
}

void Search::LimitRelease(const ClaimData& cd, const ReqData& rd, const Rollback& rb) {
  Allocator::Impl::Usage& u = inflight_[{rd.policy, cd.claim->namespace_name}];
  --u.devices;
  for (const auto& [name, add] : rb.limit_capacity) u.capacity[name] -= add;
}

void Search::Undo(int claim, ReqData& rd, int ci, const Rollback& rb) {
  ClaimData& cd = claims_[claim];
  if (rb.result_added) cd.results.pop_back();
  if (rb.limit_added) LimitRelease(cd, rd, rb);
  if (rb.capacity_inserted) {
    for (size_t i = 0; i < rb.consumed_amounts.size(); ++i) {
      alloc_cap_[ci][i] -= rb.consumed_amounts[i];
    }
    --live_shares_[ci];
  }
  if (rb.marked) {
    cd.picked[ci] = 0;
    --picked_count_[ci];
  }
  for (int i = rb.constraints_added - 1; i >= 0; --i) {
    if (cd.constraints[i].Applies(rd)) cd.constraints[i].Remove();
  }
  if (rb.counters) ReleaseCounters(ci);
  if (!rb.groups_saved.empty()) RestoreGroups(ci, rb);
}

bool Search::ErrorFree() {
  if (error_free_ >= 0) return error_free_ == 1;
  error_free_ = 1;
  const Features& f = impl_.config_.features;
  for (auto& cd : claims_) {
    bool has_all = false;
    for (auto& subs : cd.reqs) {
      for (auto& rd : subs) {
        if (rd.all) has_all = true;
        if (!rd.spec->derived_attributes.empty()) {  // evaluation errors are not predicted
          error_free_ = 0;
          return false;
        }
        for (int ci = 0; ci < int(pools_->cands.size()); ++ci) {
          uint8_t s = Selectable(rd, ci);
          if (s == 3) {
            error_free_ = 0;
            return false;
          }
          if (s == 2 && f.consumable_capacity) {
            std::string err;
            StaticCapacityFits(rd, ci, &err);
            if (!err.empty()) {
              error_free_ = 0;
              return false;
            }
          }
        }
      }
    }
    if (has_all && !cd.constraints.empty()) {
      error_free_ = 0;
      return false;
    }
  }
  return true;
}

// Upper bound check: can `need` more devices still be found for `rd` among candidates >= start?
// Returns true when the subtree provably has no solution and pruning is safe.
bool Search::PruneCut(ReqData& rd, int claim, int start, int64_t need) {
  int64_t found = 0;
  const ClaimData& cd = claims_[claim];
  for (int pos = start; pos < int(pools_->cands.size()); ++pos) {
    int ci = rd.Cand(pos);
    if (rd.admin ? cd.picked[ci] != 0 : InUse(ci)) continue;
    uint8_t s = Selectable(rd, ci);
    if (s == 3) return false;
    if (s != 2) continue;
    if (++found >= need) return false;
  }
  return ErrorFree();
}

Search::Step Search::AllocateOne(int claim, int req, int sub, int64_t dev, bool allocate_sub,
                                 int start) {
  ++steps_;
  if (has_deadline_ && (steps_ & 1023) == 0 && std::chrono::steady_clock::now() > deadline_) {
    timed_out_ = true;
    status_ = DeadlineExceededError("filter operation aborted: context deadline exceeded");
    return Step::kError;
  }
  if (claim >= int(claims_.size())) return Step::kTrue;
  ClaimData& cd = claims_[claim];
  if (req >= int(cd.reqs.size())) {
    Step s = AllocateOne(claim + 1, 0, 0, 0, false, 0);
    return s == Step::kMaxSize ? Step::kFalse : s;
  }
  if (!allocate_sub && cd.has_subs[req]) {
    bool all_exceeded = true;
    for (int k = 0; k < int(cd.reqs[req].size()); ++k) {
      Step s = AllocateOne(claim, req, k, dev, true, 0);
      if (s == Step::kMaxSize) continue;
      all_exceeded = false;
      if (s == Step::kError) return s;
      if (s == Step::kTrue) {
        cd.selected_sub[req] = k;
        return s;
      }
    }
    return all_exceeded ? Step::kMaxSize : Step::kFalse;
  }
  ReqData& rd = cd.reqs[req][sub];
  if (rd.all && rd.all_devices.empty()) return Step::kFalse;
  if (dev >= rd.num_devices) return AllocateOne(claim, req + 1, 0, 0, false, 0);
  int64_t remaining = rd.num_devices - dev;
  int64_t available = kMaxResultsPerClaim - int64_t(cd.results.size());
  if (remaining > available) {
    result_limit_hit_ = true;
    return Step::kMaxSize;
  }

  if (rd.all) {
    int ci = rd.all_devices[size_t(dev)];
    Rollback rb;
    int ok = AllocateDevice(claim, rd, ci, true, &rb);
    if (ok < 0) return Step::kError;
    if (ok == 0) return Step::kFalse;
    Step s = AllocateOne(claim, req, sub, dev + 1, allocate_sub, 0);
    if (s != Step::kTrue) Undo(claim, rd, ci, rb);
    return s;
  }

  if (impl_.config_.prune && remaining >= 2 && PruneCut(rd, claim, start, remaining)) {
    return Step::kFalse;
  }
  const bool consumable = impl_.config_.features.consumable_capacity;
  const int n = int(pools_->cands.size());
  for (int pos = start; pos < n; ++pos) {
    const int ci = rd.Cand(pos);
    if (rd.admin ? cd.picked[ci] != 0 : InUse(ci)) continue;
    uint8_t sel = Selectable(rd, ci);
    if (sel == 3) {
      status_ = InvalidArgumentError(rd.sel_err[ci]);
      return Step::kError;
    }
    if (sel != 2) continue;
    if (consumable) {
      int fits = CapacityFits(rd, ci, true);
      if (fits < 0) {
        const Candidate& c = pools_->cands[ci];
        status_ = InvalidArgumentError(
            "claim " + cd.kobj + ", request " + rd.name + ": checking capacity for device " +
            DeviceIdString(impl_.slices_[c.slice], impl_.DeviceOf(c)) + ": " + status_.message());
        return Step::kError;
      }
      if (fits == 0) continue;
    }
    Rollback rb;
    int ok = AllocateDevice(claim, rd, ci, false, &rb);
    if (ok < 0) return Step::kError;
    if (ok == 0) continue;
    Step s = AllocateOne(claim, req, sub, dev + 1, allocate_sub, pos + 1);
    if (s == Step::kTrue) return s;
    Undo(claim, rd, ci, rb);
    if (s == Step::kError || s == Step::kMaxSize) return s;
  }
  return Step::kFalse;
}

Outcome Search::BuildResults() {
  Outcome out;
  out.kind = Outcome::Kind::kAllocated;
  const Features& f = impl_.config_.features;
  for (const ClaimData& cd : claims_) {
    const ResourceClaim& claim = *cd.claim;
    AllocationResult ar;
    for (const InternalResult& r : cd.results) {
      const ReqData& rd = cd.reqs[r.req][r.sub];
      const Candidate& c = pools_->cands[r.cand];
      const ResourceSlice& s = impl_.slices_[c.slice];
      const Device& d = s.devices[c.device];
      DeviceRequestAllocationResult o;
      o.request = rd.full;
      o.driver = s.driver;
      o.pool = s.pool;
      o.device = d.name;
      if (r.admin) o.admin_access = true;
      o.tolerations = rd.spec->tolerations;
      if (f.device_binding) {
        if (d.binding_conditions) o.binding_conditions = *d.binding_conditions;
        if (d.binding_failure_conditions)
          o.binding_failure_conditions = *d.binding_failure_conditions;
      }
      o.share_id = r.share_id;
      o.consumed_capacity = r.consumed;
      o.has_consumed_capacity = !r.consumed.empty();
      if (experimental_) o.skip_node_operations = s.skip_node_operations;
      ar.results.push_back(std::move(o));
    }
    // Class configs, once per class.
    std::vector<std::pair<int, std::pair<size_t, size_t>>> class_ranges;
    auto chosen = [&](size_t ri) -> const ReqData& {
      return cd.reqs[ri][cd.has_subs[ri] ? size_t(cd.selected_sub[ri]) : 0];
    };
    for (size_t ri = 0; ri < cd.reqs.size(); ++ri) {
      const ReqData& rd = chosen(ri);
      if (rd.class_idx < 0) continue;
      auto it = std::find_if(class_ranges.begin(), class_ranges.end(),
                             [&](const auto& p) { return p.first == rd.class_idx; });
      if (it != class_ranges.end()) {
        for (size_t i = it->second.first; i < it->second.second; ++i) {
          ar.config[i].requests.push_back(rd.full);
        }
        continue;
      }
      size_t begin = ar.config.size();
      const DeviceClass& cls = impl_.classes_[rd.class_idx];
      for (size_t k = 0; k < cls.config.size(); ++k) {
        AllocationConfig c;
        c.source = "FromClass";
        c.requests = {rd.full};
        c.has_opaque = cls.config_has_opaque[k];
        c.opaque = cls.config[k];
        ar.config.push_back(std::move(c));
      }
      class_ranges.push_back({rd.class_idx, {begin, ar.config.size()}});
    }
    auto contains = [](const std::vector<std::string>& v, const std::string& s) {
      return std::find(v.begin(), v.end(), s) != v.end();
    };
    for (const ClaimConfig& cc : claim.config) {
      AllocationConfig c;
      c.source = "FromClaim";
      c.requests = cc.requests;
      c.has_opaque = cc.has_opaque;
      c.opaque = cc.opaque;
      if (cc.requests.empty()) {
        ar.config.push_back(std::move(c));
        continue;
      }
      for (size_t ri = 0; ri < claim.requests.size(); ++ri) {
        if (contains(cc.requests, claim.requests[ri].name)) {
          ar.config.push_back(c);
          break;
        }
        if (!cd.has_subs[ri]) continue;
        if (contains(cc.requests, chosen(ri).full)) {
          ar.config.push_back(c);
          break;
        }
      }
    }
    for (auto& c : ar.config) {
      if (c.requests.empty()) continue;
      bool all = true;
      for (size_t ri = 0; ri < claim.requests.size() && all; ++ri) {
        if (contains(c.requests, claim.requests[ri].name)) continue;
        if (cd.has_subs[ri] && contains(c.requests, chosen(ri).full)) continue;
        all = false;
      }
      if (all) c.requests.clear();
    }
    // Node selector.
    NodeSelectorTerm term;
    bool pinned = false;
    for (const InternalResult& r : cd.results) {
      const Candidate& c = pools_->cands[r.cand];
      const ResourceSlice& s = impl_.slices_[c.slice];
      const Device& d = s.devices[c.device];
      const std::optional<std::string>* nn;
      const std::optional<NodeSelector>* ns;
      if (s.per_device_node_selection.value_or(false)) {
        nn = &d.node_name;
        ns = &d.node_selector;
      } else {
        nn = &s.node_name;
        ns = &s.node_selector;
      }
      if (nn->has_value() || d.binds_to_node.value_or(false)) {
        pinned = true;
        break;
      }
      if (ns->has_value()) {
        const auto& terms = (*ns)->terms;
        if (terms.size() == 1) {
          auto add = [](const std::vector<NodeSelectorRequirement>& from,
                        std::vector<NodeSelectorRequirement>& to) {
            for (const auto& req : from) {
              bool dup = std::any_of(to.begin(), to.end(), [&](const auto& e) {
                if (e.key != req.key || e.op != req.op) return false;
                std::set<std::string> a(e.values.begin(), e.values.end());
                std::set<std::string> b(req.values.begin(), req.values.end());
                return a == b;
              });
              if (!dup) to.push_back(req);
            }
          };
          add(terms[0].match_fields, term.match_fields);
          add(terms[0].match_expressions, term.match_expressions);
        } else if (terms.size() > 1) {
          out.kind = Outcome::Kind::kError;
          out.message = "create NodeSelector for claim " + claim.name +
                        ": unsupported ResourceSlice.NodeSelector with " +
                        std::to_string(terms.size()) + " terms";
          out.results.clear();
          return out;
        }
      }
    }
    if (pinned) {
      NodeSelector sel;
      NodeSelectorTerm t;
      t.match_fields.push_back({"metadata.name", "In", {node_.name}});
      sel.terms.push_back(std::move(t));
      ar.node_selector = std::move(sel);
    } else if (!term.match_fields.empty() || !term.match_expressions.empty()) {
      NodeSelector sel;
      sel.terms.push_back(std::move(term));
      ar.node_selector = std::move(sel);
    }
    out.results.push_back(std::move(ar));
  }
  return out;
}

Outcome Search::Run() {
  Outcome out;
  pools_ = &impl_.GatherPools(node_);
  if (!pools_->error.ok()) {
    out.kind = Outcome::Kind::kError;
    out.message = pools_->error.message();
    if (explain_) Explain();
    return out;
  }
  size_t n = pools_->cands.size();
  picked_count_.assign(n, 0);
  alloc_cap_.assign(n, {});
  live_shares_.assign(n, 0);
  consumed_counters_.assign(pools_->pools.size(), {});
  groups_running_.assign(pools_->pools.size(), {});
  groups_baseline_.assign(pools_->pools.size(), std::nullopt);
  violations_.assign(pools_->pools.size(), 0);
  ledger_init_.assign(pools_->pools.size(), 0);
  if (Status s = Prepare(); !s.ok()) {
    out.kind = Outcome::Kind::kError;
    out.message = s.message();
    if (explain_) Explain();
    return out;
  }
  Step s = AllocateOne(0, 0, 0, 0, false, 0);
  out.search_steps = steps_;
  if (s == Step::kError) {
    out.kind = timed_out_ ? Outcome::Kind::kTimeout : Outcome::Kind::kError;
    out.message = status_.message();
  } else if (s == Step::kTrue) {
    out = BuildResults();
    out.search_steps = steps_;
  } else {
    out.kind = Outcome::Kind::kUnsatisfiable;
    for (const auto& p : pools_->pools) {
      if (p.invalid) {
        out.message = "invalid resource pools were encountered";
        break;
      }
    }
    if (out.message.empty() && !limit_message_.empty()) out.message = limit_message_;
  }
  if (explain_ && out.kind != Outcome::Kind::kAllocated) Explain();
  return out;
}

}  // namespace draco::alloc
