// The state behind the per-device filters (device_filters.h): capacity, counters, taints,
// namespace limits (committed and in-flight usage), the visiting order of AllocationPolicy
// strategies, and Undo of what AllocateDevice recorded.
#include <algorithm>
#include <limits>

#include "controller/allocator/capacity.h"
#include "controller/allocator/explain.h"
#include "controller/allocator/search.h"
#include "controller/api/types.h"

namespace draco::alloc {

const DeviceTaint* UntoleratedTaint(const Device& d, const RequestSpec& spec) {
  for (const auto& taint : d.taints) {
    // Only known effects prevent allocation; others (None included) are ignored.
    if (taint.effect != "NoExecute" && taint.effect != "NoSchedule") continue;
    bool tolerated =
        std::any_of(spec.tolerations.begin(), spec.tolerations.end(), [&](const auto& t) {
          return api::ToleratesTaint({t.key, t.op, t.value, t.effect},
                                     {taint.key, taint.value, taint.effect});
        });
    if (!tolerated) return &taint;
  }
  return nullptr;
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

int Search::CapacityFits(const ReqData& rd, int ci, std::string* err) {
  const Candidate& c = pools_->cands[ci];
  const Device& d = impl_.DeviceOf(c);
  std::vector<Qty> consumed;
  bool missing = false;
  bool fractional = impl_.config_.features.fractional_capacity_range;
  if (!ConsumedForDevice(*rd.spec, d, fractional, &consumed, &missing, err)) return -1;
  if (missing) return 0;
  const IdentityView st = impl_.Identity(c.ident);
  for (size_t i = 0; i < d.capacity.size(); ++i) {
    const auto& [name, cap] = d.capacity[i];
    if (ViolatesPolicy(consumed[i], cap.request_policy, fractional)) return 0;
    Amount sum = consumed[i].nanos;
    if (st.has_aggregate) {
      for (const auto& [k, v] : *st.aggregate) {
        if (k == name) sum += v;
      }
    }
    if (!alloc_cap_[ci].empty()) sum += alloc_cap_[ci][i];
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
  auto& pool = const_cast<PoolView&>(pools_->pools[c.pool]);
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
    violations_[c.pool] += static_cast<int>(avail[k] < used[k]) - before;
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
    violations_[c.pool] += static_cast<int>(avail[k] < used[k]) - before;
  }
}

void Search::ApplyStrategy(ReqData& rd) {
  Strategy st = impl_.config_.policies[static_cast<size_t>(rd.policy)].strategy;
  if (st == Strategy::kFirstFit) return;
  const auto& cands = pools_->cands;
  // Allocated devices per pool of this node (committed state).
  std::vector<int64_t> pool_used(pools_->pools.size(), 0);
  for (const Candidate& c : cands) {
    if (impl_.IsIdentAllocated(c.ident)) ++pool_used[static_cast<size_t>(c.pool)];
  }
  rd.order.resize(cands.size());
  for (size_t i = 0; i < cands.size(); ++i) rd.order[i] = static_cast<int>(i);
  auto key = [&](int ci) {
    const Candidate& c = cands[static_cast<size_t>(ci)];
    // Within a pool, shared devices already in use count as "more allocated".
    int64_t shares = impl_.Identity(c.ident).shares;
    return std::pair<int64_t, int64_t>(pool_used[static_cast<size_t>(c.pool)], shares);
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

bool Search::LimitAllows(const ClaimData& cd, const ReqData& rd, int ci, const InternalResult& res,
                         Rollback* rb) {
  const NamespaceLimit& lim = *rd.limit;
  const std::string& ns = cd.claim->namespace_name;
  const AllocationPolicy& pol = impl_.config_.policies[static_cast<size_t>(rd.policy)];
  Allocator::Impl::Usage used = UsageOf(rd.policy, ns);
  const Device& d = impl_.DeviceOf(pools_->cands[static_cast<size_t>(ci)]);
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
  const auto caps = lim.max_capacity.empty() ? std::vector<std::pair<std::string, Amount>>()
                                             : Allocator::Impl::LimitCapacities(
                                                   d, res.share_id.has_value(), res.consumed);
  for (const auto& [name, max] : lim.max_capacity) {
    const Amount add = Allocator::Impl::CapacityNamed(caps, name);
    Amount have = used.capacity.count(name) ? used.capacity[name] : static_cast<Amount>(0);
    if (have + add > max.nanos) {
      auto fmt = [](Amount a) -> std::string {
        constexpr Amount kOne = 1000000000;
        if (a % kOne != 0) return std::to_string(static_cast<int64_t>(a / 1000000)) + "m";
        auto v = static_cast<int64_t>(a / kOne);
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
