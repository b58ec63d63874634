// Pools gathered per node (upstream GatherPools) and their available counters.
#include <algorithm>
#include <unordered_set>

#include "controller/allocator/allocator.h"
#include "controller/allocator/allocator_impl.h"
#include "controller/allocator/node_selector.h"

namespace draco::alloc {

namespace {

bool UsesCompatibilityGroups(const ResourceSlice& s) {
  for (const auto& d : s.devices) {
    for (const auto& c : d.consumes_counters) {
      if (!c.compatibility_groups.empty()) return true;
    }
  }
  return false;
}

// Whether slice `s` provides devices for `node` (node selection of the slice, or of its devices);
// false for slices using disabled features. A node-selection error is stored in `error`.
bool SliceForNode(const Features& f, const Node& node, const ResourceSlice& s, Status& error) {
  if (!f.partitionable_devices &&
      (s.per_device_node_selection.has_value() || !s.shared_counters.empty())) {
    return false;
  }
  if (!f.compatibility_groups && UsesCompatibilityGroups(s)) return false;
  std::string nn = s.node_name.value_or("");
  bool all = s.all_nodes.value_or(false);
  if (!nn.empty() || all || s.node_selector) {
    auto m = NodeMatches(node, nn, all, s.node_selector ? &*s.node_selector : nullptr);
    if (!m.ok()) {
      error = InvalidArgumentError(
          "gather pool information: failed to perform node selection for slice " + s.name +
          ": failed to parse node selector: " + m.status().message());
      return false;
    }
    return *m;
  }
  if (!s.per_device_node_selection.value_or(false)) return false;
  for (const auto& d : s.devices) {
    auto m = NodeMatches(node, d.node_name.value_or(""), d.all_nodes.value_or(false),
                         d.node_selector ? &*d.node_selector : nullptr);
    if (!m.ok()) {
      error = InvalidArgumentError(
          "gather pool information: failed to perform node selection for device " + d.name +
          " in slice " + s.name + ": " + m.status().message());
      return false;
    }
    if (*m) return true;
  }
  return false;
}

// The node's relevant slices by pool (newest generation only), pools in first-seen order.
struct PoolGroups {
  std::unordered_map<int, std::vector<int>> slices;  // by pool key
  std::vector<int> order;
};

PoolGroups GroupSlices(const Allocator::Impl& m, const Node& node, Status& error) {
  // Slices for the node: its node-local slices, then all slices without a node name.
  std::vector<int> for_node;
  if (!node.name.empty()) for_node = m.d_.NodeSlices(node.name);
  for_node.insert(for_node.end(), m.shared_slices_.begin(), m.shared_slices_.end());

  PoolGroups groups;
  for (int si : for_node) {
    const ResourceSlice& s = m.slices_[si];
    bool relevant = SliceForNode(m.config_.features, node, s, error);
    if (!error.ok()) break;
    if (!relevant) continue;
    int pk = m.slice_pool_[static_cast<size_t>(si)];
    auto [it, inserted] = groups.slices.emplace(pk, std::vector<int>{});
    if (inserted) groups.order.push_back(pk);
    std::vector<int>& g = it->second;
    if (!g.empty()) {
      const auto generation = m.slices_[g[0]].generation;
      if (s.generation < generation) continue;  // outdated
      if (s.generation > generation) g.clear();
    }
    g.push_back(si);
  }
  return groups;
}

enum class PoolCheck { kComplete, kObsolete, kIncomplete };

// Pool `pk` whose relevant slices do not number `first.resource_slice_count`: kObsolete when a
// newer generation exists, kIncomplete when slices of `first`'s generation are missing, else
// kComplete with all of them in `all_for_pool`.
PoolCheck CheckComplete(const Allocator::Impl& m, int pk, const ResourceSlice& first,
                        std::vector<int>& all_for_pool) {
  const Snapshot::Data& d = m.d_;
  for (int k = d.pool_slice_offset[static_cast<size_t>(pk)];
       k < d.pool_slice_offset[static_cast<size_t>(pk) + 1]; ++k) {
    int si = d.pool_slice_list[static_cast<size_t>(k)];
    const ResourceSlice& s = m.slices_[static_cast<size_t>(si)];
    if (s.generation == first.generation) {
      all_for_pool.push_back(si);
    } else if (s.generation > first.generation) {
      return PoolCheck::kObsolete;
    }
  }
  if (!m.config_.features.compatibility_groups) {
    std::erase_if(all_for_pool, [&](int si) { return UsesCompatibilityGroups(m.slices_[si]); });
  }
  if (static_cast<int64_t>(all_for_pool.size()) != first.resource_slice_count) {
    return PoolCheck::kIncomplete;
  }
  return PoolCheck::kComplete;
}

// Reads the counter sets of `counter_slices` into `pv` and checks that every device consumes
// existing counters (marks `pv` invalid otherwise).
void ReadCounterSets(const Allocator::Impl& m, const std::vector<int>& counter_slices,
                     PoolView& pv) {
  std::unordered_map<std::string, int> set_index;
  for (int si : counter_slices) {
    const auto& sets = m.slices_[si].shared_counters;
    for (size_t k = 0; k < sets.size() && !pv.invalid; ++k) {
      if (!set_index.emplace(sets[k].name, static_cast<int>(pv.set_names.size())).second) {
        pv.invalid = true;
        pv.invalid_reason = "duplicate counter set name " + sets[k].name;
        break;
      }
      pv.set_names.push_back(sets[k].name);
      pv.counter_set_slices.push_back(si << 8 | static_cast<int>(k));
      pv.set_offset.push_back(static_cast<int>(pv.counter_names.size()));
      for (const auto& [cn, q] : sets[k].counters) {
        pv.counter_names.push_back(cn);
        pv.counter_values.push_back(q.nanos);
      }
    }
    if (pv.invalid) break;
  }
  pv.set_offset.push_back(static_cast<int>(pv.counter_names.size()));
  auto validate = [&](const std::vector<int>& sl) {
    for (int si : sl) {
      for (const auto& d : m.slices_[si].devices) {
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
              pv.invalid_reason = "counter " + cn + " not found in counter set " + cc.counter_set;
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

// Upstream's buildPool: the pool's targeting slices `rel` (sorted here by name), with
// `all_for_pool` when `use_all`; an invalid pool keeps no slices.
PoolView BuildPool(const Allocator::Impl& m, int pk, std::vector<int>& rel,
                   const std::vector<int>& all_for_pool, bool use_all) {
  const Features& f = m.config_.features;
  PoolView pv;
  pv.pool_key = pk;
  std::sort(rel.begin(), rel.end(),
            [&](int a, int b) { return m.slices_[a].name < m.slices_[b].name; });
  std::vector<int> counter_slices;
  for (int si : rel) {
    if (f.partitionable_devices && !m.slices_[si].shared_counters.empty()) {
      counter_slices.push_back(si);
    } else {
      pv.targeting.push_back(si);
    }
  }
  if (use_all && rel.size() < all_for_pool.size()) {
    std::unordered_set<std::string> names;
    for (int si : rel) names.insert(m.slices_[si].name);
    for (int si : all_for_pool) {
      if (names.count(m.slices_[si].name)) continue;
      if (f.partitionable_devices && !m.slices_[si].shared_counters.empty()) {
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
      for (const auto& d : m.slices_[si].devices) {
        if (!names.insert(d.name).second) {
          pv.invalid = true;
          pv.invalid_reason = "duplicate device name " + d.name;
          break;
        }
      }
      if (pv.invalid) break;
    }
  }
  if (!pv.invalid && f.partitionable_devices) ReadCounterSets(m, counter_slices, pv);
  if (pv.invalid) {
    pv.targeting.clear();
    pv.not_targeting.clear();
    return pv;
  }
  if (!f.partitionable_devices) {
    pv.not_targeting.clear();
    pv.set_names.clear();
    pv.set_offset.assign(1, 0);
    pv.counter_names.clear();
    pv.counter_values.clear();
  }
  return pv;
}

bool HasBindingConditions(const Allocator::Impl& m, const PoolView& pv) {
  bool binding = false;
  for (int si : pv.targeting) {
    for (const auto& d : m.slices_[si].devices) {
      if (d.binding_conditions.has_value()) binding = true;
    }
  }
  return binding;
}

// The candidate devices of the usable pools of `np`, in pool order.
void AddCandidates(Allocator::Impl& m, NodePools& np) {
  for (size_t pi = 0; pi < np.pools.size(); ++pi) {
    const PoolView& pv = np.pools[pi];
    if (pv.incomplete || pv.invalid) continue;
    m.EnsurePool(pv.pool_key);
    const PoolIndex& ix = m.d_.Index(pv.pool_key);
    const int pool_base = m.d_.pools[static_cast<size_t>(pv.pool_key)].gid_base;
    for (int si : pv.targeting) {
      const ResourceSlice& s = m.slices_[si];
      for (size_t di = 0; di < s.devices.size(); ++di) {
        Candidate c;
        c.slice = si;
        c.device = static_cast<int>(di);
        c.gid = m.slice_gid_base_[si] + static_cast<int>(di);
        c.ident =
            ix.canon.empty() ? c.gid : pool_base + ix.canon[static_cast<size_t>(c.gid - pool_base)];
        c.pool = static_cast<int>(pi);
        for (const auto& cc : s.devices[di].consumes_counters) {
          int set = -1;
          for (size_t k = 0; k < pv.set_names.size(); ++k) {
            if (pv.set_names[k] == cc.counter_set) set = static_cast<int>(k);
          }
          if (set < 0) continue;  // partitionable devices off: pool keeps no counter sets
          for (const auto& [cn, q] : cc.counters) {
            for (int k = pv.set_offset[set]; k < pv.set_offset[set + 1]; ++k) {
              if (pv.counter_names[k] == cn) c.consumption.emplace_back(k, q.nanos);
            }
          }
        }
        np.cands.push_back(std::move(c));
      }
    }
  }
}

}  // namespace

const NodePools& Allocator::Impl::GatherPools(const Node& node) {
  auto cached = node_cache_.find(node.name);
  if (cached != node_cache_.end() && cached->second->labels == node.labels) {
    return *cached->second;
  }
  auto np = std::make_unique<NodePools>();
  np->labels = node.labels;
  PoolGroups groups = GroupSlices(*this, node, np->error);
  if (!np->error.ok()) {
    auto& ref = node_cache_[node.name];
    ref = std::move(np);
    return *ref;
  }

  std::vector<PoolView> normal, with_binding;
  for (int pk : groups.order) {
    std::vector<int>& rel = groups.slices[pk];
    const ResourceSlice& first = slices_[rel[0]];
    std::vector<int> all_for_pool;
    bool use_all = false;
    if (static_cast<int64_t>(rel.size()) != first.resource_slice_count) {
      PoolCheck check = CheckComplete(*this, pk, first, all_for_pool);
      if (check == PoolCheck::kObsolete) {
        np->obsolete.push_back(first.driver + "/" + first.pool);
        continue;
      }
      if (check == PoolCheck::kIncomplete) {
        PoolView pv;
        pv.pool_key = pk;
        pv.incomplete = true;
        normal.push_back(std::move(pv));
        continue;
      }
      use_all = true;
    }
    PoolView pv = BuildPool(*this, pk, rel, all_for_pool, use_all);
    if (pv.invalid) {
      normal.push_back(std::move(pv));
      continue;
    }
    (HasBindingConditions(*this, pv) ? with_binding : normal).push_back(std::move(pv));
  }
  auto by_id = [&](const PoolView& a, const PoolView& b) {
    const PoolTable::Key& x = pool_keys_[static_cast<size_t>(a.pool_key)];
    const PoolTable::Key& y = pool_keys_[static_cast<size_t>(b.pool_key)];
    if (x.driver != y.driver) return x.driver < y.driver;
    return x.pool < y.pool;
  };
  std::sort(normal.begin(), normal.end(), by_id);
  std::sort(with_binding.begin(), with_binding.end(), by_id);
  for (auto& p : with_binding) normal.push_back(std::move(p));
  np->pools = std::move(normal);
  AddCandidates(*this, *np);
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
        if (!IsDeviceAllocated(pool.pool_key, slice_gid_base_[si] + static_cast<int>(di))) continue;
        for (const auto& cc : s.devices[di].consumes_counters) {
          int set = -1;
          for (size_t k = 0; k < pool.set_names.size(); ++k) {
            if (pool.set_names[k] == cc.counter_set) set = static_cast<int>(k);
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

}  // namespace draco::alloc
