// Reads of ClusterCache's allocated-devices view, under the cache's lock: who uses a device, the
// devices in two claims that may not share them (the auditor, double_booking.cc), and the device
// and claim counts behind draco's inventory metrics (pools, shared counters, claims by kind).
#include <algorithm>

#include "controller/reconcilers/cluster_cache.h"

namespace draco::reconcilers {

std::vector<std::string> ClusterCache::ClaimsUsingDevice(const DeviceId& id) const {
  std::shared_lock l(mu_);
  std::vector<std::string> out;
  auto it = allocated_.find(id);
  if (it == allocated_.end()) return out;
  for (const auto& u : it->second) out.push_back(u.claim_key);
  return out;
}

namespace {

// The claims of `uses` when they make the device double allocated (two users, one exclusive).
std::vector<std::string> DoubleUsers(const std::vector<ClusterCache::DeviceUse>& uses) {
  int exclusive = 0;
  std::vector<std::string> users;
  for (const auto& u : uses) {
    if (u.admin_access) continue;  // admin access never consumes a device
    users.push_back(u.claim_key);
    if (!u.shared) ++exclusive;
  }
  if (users.size() < 2 || exclusive < 1) users.clear();
  return users;
}

}  // namespace

std::vector<DoubleAllocation> ClusterCache::DoubleAllocations() const {
  std::shared_lock l(mu_);
  std::vector<DoubleAllocation> out;
  for (const auto& [id, uses] : allocated_) {
    if (auto users = DoubleUsers(uses); !users.empty()) out.push_back({id, std::move(users)});
  }
  return out;
}

std::vector<DoubleAllocation> ClusterCache::DoubleAllocationsOf(
    const api::ResourceClaim& claim) const {
  std::vector<DoubleAllocation> out;
  if (!claim.status.allocation) return out;
  std::shared_lock l(mu_);
  for (const auto& r : claim.status.allocation->devices.results) {
    DeviceId id{r.driver, r.pool, r.device};
    auto it = allocated_.find(id);
    if (it == allocated_.end()) continue;
    if (auto users = DoubleUsers(it->second); !users.empty()) out.push_back({id, std::move(users)});
  }
  return out;
}

std::vector<std::string> ClusterCache::DoubleAllocatedDevices() const {
  std::vector<std::string> out;
  for (const auto& d : DoubleAllocations()) {
    std::string names;
    for (const auto& c : d.claims) names += (names.empty() ? "" : ", ") + c;
    out.push_back(d.device.ToString() + ": " + names);
  }
  return out;
}

std::vector<metrics::CounterInventory> ClusterCache::PoolCountersLocked(
    const std::string& driver, const std::string& pool, const std::set<std::string>& names) const {
  // (counter set, counter) -> row; the declarations and consumptions may sit in different slices
  // of the pool.
  std::map<std::pair<std::string, std::string>, metrics::CounterInventory> rows;
  auto row = [&rows](const std::string& set, const std::string& counter) -> auto& {
    auto& r = rows[{set, counter}];
    r.counter_set = set;
    r.counter = counter;
    return r;
  };
  auto value = [](const api::Counter& c) { return c.value.AsApproximateFloat64(); };
  for (const auto& n : names) {
    auto it = slices_.find(n);
    if (it == slices_.end() || !it->second.slice) continue;
    for (const auto& cs : it->second.slice->spec.shared_counters) {
      for (const auto& [counter, c] : cs.counters) row(cs.name, counter).capacity += value(c);
    }
  }
  if (rows.empty()) return {};
  for (const auto& n : names) {
    auto it = slices_.find(n);
    if (it == slices_.end() || !it->second.slice) continue;
    for (const auto& d : it->second.slice->spec.devices) {
      if (d.consumes_counters.empty()) continue;
      auto a = allocated_.find(DeviceId{driver, pool, d.name});
      if (a == allocated_.end()) continue;
      bool consumes = false;  // admin access does not consume counters
      for (const auto& u : a->second) consumes = consumes || !u.admin_access;
      if (!consumes) continue;
      for (const auto& cc : d.consumes_counters) {
        for (const auto& [counter, c] : cc.counters) {
          auto r = rows.find({cc.counter_set, counter});
          if (r != rows.end()) r->second.used += value(c);
        }
      }
    }
  }
  std::vector<metrics::CounterInventory> out;
  out.reserve(rows.size());
  for (auto& [k, r] : rows) out.push_back(std::move(r));
  return out;
}

metrics::Inventory ClusterCache::Inventory() const {
  std::shared_lock l(mu_);
  metrics::Inventory inv;
  std::map<std::pair<std::string, std::string>, int64_t> used_per_pool;
  for (const auto& [id, uses] : allocated_) used_per_pool[{id.driver, id.pool}] += 1;
  for (const auto& [pk, names] : slices_by_pool_) {
    int64_t total = 0;
    for (const auto& n : names) {
      auto it = slices_.find(n);
      if (it != slices_.end()) total += it->second.device_count;
    }
    int64_t used = 0;
    auto a = used_per_pool.find(pk);
    if (a != used_per_pool.end()) used = a->second;
    inv.pools.push_back({pk.first, pk.second, used, std::max<int64_t>(0, total - used), {}});
    inv.pools.back().counters = PoolCountersLocked(pk.first, pk.second, names);
  }
  for (const auto& [k, c] : claims_) {
    bool generated = c->metadata.annotations.count(std::string(kPodClaimNameAnnotation)) > 0;
    bool allocated = c->status.allocation.has_value();
    (allocated ? (generated ? inv.claims_allocated_template : inv.claims_allocated_user)
               : (generated ? inv.claims_unallocated_template : inv.claims_unallocated_user)) += 1;
  }
  return inv;
}

}  // namespace draco::reconcilers
