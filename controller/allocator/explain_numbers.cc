// The numbers behind the capacity and counter stages of an explanation: requested vs remaining
// capacity of the closest devices, and the shared counters devices would exceed with what is
// left and which allocated claims hold it. Also the holder bookkeeping of Allocator::Impl and the
// hint for CEL "no such key" errors.
#include <algorithm>
#include <map>
#include <unordered_map>

#include "controller/allocator/capacity.h"
#include "controller/allocator/explain.h"
#include "controller/allocator/search.h"

namespace draco::alloc {
namespace {

// Bounds on what one stage detail lists (the rest is counted as "+N more").
constexpr size_t kMaxCapacityDevices = 2;
constexpr size_t kMaxCounters = 3;
constexpr size_t kMaxHolders = 3;

constexpr std::string_view kNoSuchKey = "no such key:";
constexpr std::string_view kCelKeyHint =
    " (hint: not every device has this attribute or capacity; test for it with has() first, "
    "or read it as optional with `.?name.orValue(default)`)";

std::string CapacityText(const DeviceCapacityShortfall& d) {
  std::string out;
  std::string have;  // "memory 48Gi of 60Gi requested, compute 60 of 70"
  for (const CapacityShortfall& c : d.capacities) {
    if (c.missing) {
      out += (out.empty() ? "" : ", ") + d.device + " has no capacity " + c.name;
      continue;
    }
    std::string part = c.name + " ";
    if (c.policy) {
      part += c.requested + (have.empty() ? " requested" : "") + " is not a value its " +
              "requestPolicy accepts";
    } else {
      part += c.remaining + " of " + c.requested + (have.empty() ? " requested" : "");
    }
    if (!c.asked.empty()) part += " (" + c.asked + " rounded up by the requestPolicy)";
    have += (have.empty() ? "" : ", ") + part;
  }
  if (!have.empty()) out += (out.empty() ? "" : ", ") + d.device + " has " + have;
  return out;
}

std::string HoldersText(const CounterShortfall& s) {
  if (s.holders.empty()) return "";
  std::string out = " (held by ";
  for (size_t i = 0; i < s.holders.size(); ++i) {
    out += (i > 0 ? ", " : "") + s.holders[i].holder + " " + s.holders[i].amount;
  }
  if (s.more_holders > 0) out += ", +" + std::to_string(s.more_holders) + " more";
  return out + ")";
}

}  // namespace

std::string AddCelKeyHint(std::string message) {
  if (message.find(kNoSuchKey) != std::string::npos &&
      message.find(kCelKeyHint) == std::string::npos) {
    message += kCelKeyHint;
  }
  return message;
}

std::string CounterShortfallText(const CounterShortfall& s) {
  return "counter set " + s.counter_set + ", counter " + s.counter + ": needs " + s.needed + ", " +
         s.left + " of " + s.total + " left" + HoldersText(s);
}

uint32_t Allocator::Impl::AddHolder(const ResourceClaim& claim) {
  if (!claim.namespace_name.empty()) holder_text_.append(claim.namespace_name).append("/");
  holder_text_.append(claim.name);
  holder_off_.push_back(static_cast<uint32_t>(holder_text_.size()));
  return static_cast<uint32_t>(holder_off_.size() - 2);
}

void Allocator::Impl::ForEachHolder(int pool,
                                    const std::function<void(int, std::string_view)>& f) const {
  auto name = [&](uint32_t h) {
    return static_cast<std::string_view>(holder_text_)
        .substr(holder_off_[h], holder_off_[h + 1] - holder_off_[h]);
  };
  for (const Held& h : committed_holders_) {
    if (h.pool == pool && h.holder != kNoHolder) f(h.ident, name(h.holder));
  }
  if (holder_src_) {
    // The shared claims are the complete list (pending_ holds a subset of them).
    const PoolTable::Key& key = d_.pool_table->keys[static_cast<size_t>(pool)];
    for (const ResourceClaim& c : *holder_src_) {
      if (!c.allocation) continue;
      std::string kobj;
      for (const auto& r : c.allocation->results) {
        if (r.pool != key.pool || r.driver != key.driver || r.admin_access.value_or(false)) {
          continue;
        }
        int id = d_.FindDevice(pool, r.device);
        if (id < 0) continue;
        if (kobj.empty()) {
          kobj = c.namespace_name.empty() ? c.name : c.namespace_name + "/" + c.name;
        }
        f(id, kobj);
      }
    }
    return;
  }
  for (const Pending& p : pending_) {
    if (p.pool != pool || p.holder == kNoHolder) continue;
    int id = d_.FindDevice(pool, PendingName(p));
    if (id >= 0) f(id, name(p.holder));
  }
}

DeviceCapacityShortfall Search::CapacityShortfallOf(const ReqData& rd, int ci, double* distance) {
  const Candidate& c = pools_->cands[static_cast<size_t>(ci)];
  const ResourceSlice& s = impl_.slices_[c.slice];
  const Device& d = impl_.DeviceOf(c);
  DeviceCapacityShortfall out;
  out.pool = s.driver + "/" + s.pool;
  out.device = d.name;
  *distance = 0;
  const bool fractional = impl_.config_.features.fractional_capacity_range;
  std::vector<Qty> consumed;
  bool missing = false;
  std::string err;
  if (!ConsumedForDevice(*rd.spec, d, fractional, &consumed, &missing, &err)) {
    *distance = 1e9;  // the search reported this as a fatal error
    return out;
  }
  if (missing) {
    for (const auto& [name, q] : rd.spec->capacity_requests) {
      if (d.FindCapacity(name) != nullptr) continue;
      CapacityShortfall sf;
      sf.name = name;
      sf.requested = q.ToString();
      sf.missing = true;
      out.capacities.push_back(std::move(sf));
      *distance += 1000;
    }
    return out;
  }
  const IdentityView st = impl_.Identity(c.ident);
  for (size_t i = 0; i < d.capacity.size(); ++i) {
    const auto& [name, cap] = d.capacity[i];
    Amount used =
        alloc_cap_[static_cast<size_t>(ci)].empty() ? 0 : alloc_cap_[static_cast<size_t>(ci)][i];
    if (st.has_aggregate) {
      for (const auto& [k, v] : *st.aggregate) used += k == name ? v : 0;
    }
    const Amount remaining = cap.value.nanos - used;
    const bool policy = ViolatesPolicy(consumed[i], cap.request_policy, fractional);
    if (!policy && consumed[i].nanos <= remaining) continue;
    const api::Quantity::Format fmt = cap.value.q.format();
    CapacityShortfall sf;
    sf.name = name;
    sf.requested = FormatAmount(consumed[i].nanos, fmt);
    const Qty* asked = RequestedFor(*rd.spec, name);
    if (asked != nullptr && asked->nanos != consumed[i].nanos) {
      sf.asked = FormatAmount(asked->nanos, fmt);
    }
    sf.remaining = FormatAmount(remaining, fmt);
    sf.total = FormatAmount(cap.value.nanos, fmt);
    sf.policy = policy;
    out.capacities.push_back(std::move(sf));
    // Devices short of fewer capacities, then by less, come first.
    double short_by = consumed[i].nanos <= 0 || policy
                          ? 1.0
                          : static_cast<double>(consumed[i].nanos - remaining) /
                                static_cast<double>(consumed[i].nanos);
    *distance += 1000 + std::clamp(short_by, 0.0, 1.0);
  }
  return out;
}

std::string Search::CapacityDetail(const ReqData& rd, const std::vector<int>& rejected,
                                   RequestFunnel& fn) {
  std::vector<std::pair<double, DeviceCapacityShortfall>> all;
  for (int ci : rejected) {
    double distance = 0;
    DeviceCapacityShortfall d = CapacityShortfallOf(rd, ci, &distance);
    if (!d.capacities.empty()) all.emplace_back(distance, std::move(d));
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string text;
  for (size_t i = 0; i < all.size() && i < kMaxCapacityDevices; ++i) {
    text += (i == 0 ? ": " : "; ") + CapacityText(all[i].second);
    fn.capacity_shortfalls.push_back(std::move(all[i].second));
  }
  fn.capacity_more = static_cast<int64_t>(rejected.size() - fn.capacity_shortfalls.size());
  if (fn.capacity_more > 0 && !text.empty()) {
    text += "; +" + std::to_string(fn.capacity_more) + " more";
  }
  return text;
}

std::string Search::CounterDetail(const std::vector<int>& rejected, RequestFunnel& fn) {
  struct Group {
    int64_t devices = 0;
    Amount least = 0;
    std::string device;
  };
  std::map<std::pair<int, int>, Group> groups;  // (pool view, flat counter)
  auto add = [&](int pool, int k, Amount need, const std::string& device) {
    Group& g = groups[{pool, k}];
    if (g.devices++ == 0 || need < g.least) {
      g.least = need;
      g.device = device;
    }
  };
  for (int ci : rejected) {
    const Candidate& c = pools_->cands[static_cast<size_t>(ci)];
    auto& pool = const_cast<PoolView&>(pools_->pools[static_cast<size_t>(c.pool)]);
    const std::vector<Amount>& avail = impl_.AvailableCounters(pool);
    const std::string& device = impl_.DeviceOf(c).name;
    bool found = false;
    for (const auto& [k, amount] : c.consumption) {
      if (amount <= avail[static_cast<size_t>(k)]) continue;
      add(c.pool, k, amount, device);
      found = true;
    }
    // Otherwise the pool is already over-committed on some counter, which blocks every device
    // drawing from the pool's counters.
    for (size_t k = 0; !found && k < avail.size(); ++k) {
      if (avail[k] >= 0) continue;
      Amount need = 0;
      for (const auto& [ck, amount] : c.consumption) need += ck == static_cast<int>(k) ? amount : 0;
      add(c.pool, static_cast<int>(k), need, device);
      found = true;
    }
  }
  std::vector<std::pair<std::pair<int, int>, Group>> order(groups.begin(), groups.end());
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return a.second.devices > b.second.devices;
  });
  std::string text;
  for (size_t i = 0; i < order.size() && i < kMaxCounters; ++i) {
    const auto& [key, g] = order[i];
    CounterShortfall s = CounterState(key.first, key.second);
    s.devices = g.devices;
    s.device = g.device;
    const PoolView& pool = pools_->pools[static_cast<size_t>(key.first)];
    s.needed = FormatAmount(g.least, CounterFormat(pool, key.second));
    text += (i == 0 ? ": " : "; ") + CounterShortfallText(s);
    if (order.size() > 1) text += " [" + std::to_string(g.devices) + " devices]";
    fn.counter_shortfalls.push_back(std::move(s));
  }
  fn.counters_more = static_cast<int64_t>(order.size() - fn.counter_shortfalls.size());
  if (fn.counters_more > 0) text += "; +" + std::to_string(fn.counters_more) + " more counters";
  return text;
}

api::Quantity::Format Search::CounterFormat(const PoolView& pool, int k) const {
  size_t set = 0;
  while (set + 1 < pool.set_names.size() && pool.set_offset[set + 1] <= k) ++set;
  if (set >= pool.counter_set_slices.size()) return api::Quantity::Format::kDecimalSI;
  const int ref = pool.counter_set_slices[set];
  const ResourceSlice& s = impl_.slices_[static_cast<size_t>(ref >> 8)];
  for (const auto& [name, q] : s.shared_counters[static_cast<size_t>(ref & 0xff)].counters) {
    if (name == pool.counter_names[static_cast<size_t>(k)]) return q.q.format();
  }
  return api::Quantity::Format::kDecimalSI;
}

CounterShortfall Search::CounterState(int pool_view, int k) {
  auto& pool = const_cast<PoolView&>(pools_->pools[static_cast<size_t>(pool_view)]);
  const std::vector<Amount>& avail = impl_.AvailableCounters(pool);
  const api::Quantity::Format fmt = CounterFormat(pool, k);
  size_t set = 0;
  while (set + 1 < pool.set_names.size() && pool.set_offset[set + 1] <= k) ++set;
  const auto& key = impl_.pool_keys_[static_cast<size_t>(pool.pool_key)];
  CounterShortfall out;
  out.pool = std::string(key.driver) + "/" + std::string(key.pool);
  out.counter_set = pool.set_names[set];
  out.counter = pool.counter_names[static_cast<size_t>(k)];
  out.left = FormatAmount(avail[static_cast<size_t>(k)], fmt);
  out.total = FormatAmount(pool.counter_values[static_cast<size_t>(k)], fmt);

  // What each allocated device of the pool draws from the counter, by claim (the first claim
  // of a shared device; the device itself when its claim is not known).
  std::unordered_map<int, std::string> owner;
  impl_.ForEachHolder(pool.pool_key, [&](int id, std::string_view claim) {
    owner.emplace(id, std::string(claim));
  });
  std::map<std::string, Amount> held;
  for (const auto* list : {&pool.targeting, &pool.not_targeting}) {
    for (int si : *list) {
      const ResourceSlice& s = impl_.slices_[static_cast<size_t>(si)];
      for (size_t di = 0; di < s.devices.size(); ++di) {
        const int gid = impl_.slice_gid_base_[static_cast<size_t>(si)] + static_cast<int>(di);
        if (!impl_.IsDeviceAllocated(pool.pool_key, gid)) continue;
        Amount amount = 0;
        for (const auto& cc : s.devices[di].consumes_counters) {
          if (cc.counter_set != out.counter_set) continue;
          for (const auto& [name, q] : cc.counters) amount += name == out.counter ? q.nanos : 0;
        }
        if (amount == 0) continue;
        auto it = owner.find(impl_.d_.Canon(pool.pool_key, gid));
        held[it != owner.end() ? it->second : "device " + s.devices[di].name] += amount;
      }
    }
  }
  std::vector<std::pair<std::string, Amount>> by_size(held.begin(), held.end());
  std::stable_sort(by_size.begin(), by_size.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  for (size_t i = 0; i < by_size.size() && i < kMaxHolders; ++i) {
    out.holders.push_back({by_size[i].first, FormatAmount(by_size[i].second, fmt)});
  }
  out.more_holders = static_cast<int64_t>(by_size.size() - out.holders.size());
  return out;
}

}  // namespace draco::alloc
