// Per-device filters of the search: selectors, taints, capacity, counters, namespace limits;
// AllocateDevice and its Undo.
#include <algorithm>
#include <limits>

#include "controller/allocator/capacity.h"
#include "controller/allocator/explain.h"
#include "controller/allocator/node_selector.h"
#include "controller/allocator/search.h"

namespace draco::alloc {
namespace {

bool Tolerates(const DeviceToleration& t, const DeviceTaint& x) {
  if (!t.effect.empty() && t.effect != x.effect) return false;
  if (!t.key.empty() && t.key != x.key) return false;
  if (t.op.empty() || t.op == "Equal") return t.value == x.value;
  return t.op == "Exists";
}

}  // namespace

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

}  // namespace draco::alloc
