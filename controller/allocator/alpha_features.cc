// The 1.37 alpha features of the search (part of Search, search.h):
//  - DRADeviceCompatibilityGroups: devices drawing from the same counter set may only be
//    allocated together when their declared compatibility groups intersect (upstream
//    experimental allocator, checkAndConsumeCompatibilityGroups);
//  - DRADerivedAttributes: a request's derived attributes (CEL over the device) replace the
//    device's attributes of the same name for that request's constraints.
#include <algorithm>
#include <iterator>

#include "controller/allocator/search.h"

namespace draco::alloc {
namespace {

std::vector<std::string> GroupSet(const std::vector<std::string>& groups) {
  std::vector<std::string> g = groups;
  std::sort(g.begin(), g.end());
  g.erase(std::unique(g.begin(), g.end()), g.end());
  return g;
}

std::vector<std::string> Intersect(const std::vector<std::string>& a,
                                   const std::vector<std::string>& b) {
  std::vector<std::string> out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

}  // namespace

bool Search::GroupState::Admits(const std::vector<std::string>& g) const {
  if (!has_members) return true;
  if (g.empty()) return all_empty;
  if (all_empty) return false;
  return !Intersect(groups, g).empty();
}

Search::GroupState Search::GroupState::Add(const std::vector<std::string>& g) const {
  GroupState next = *this;
  if (!has_members) {
    next.has_members = true;
    next.all_empty = g.empty();
    next.groups = g;
    return next;
  }
  if (all_empty || g.empty()) return next;  // Admits() ruled out the mixed cases
  next.groups = Intersect(groups, g);
  return next;
}

const std::map<std::string, Search::GroupState>& Search::GroupBaseline(int pool) {
  auto& slot = groups_baseline_[static_cast<size_t>(pool)];
  if (slot) return *slot;
  slot.emplace();
  const PoolView& pv = pools_->pools[static_cast<size_t>(pool)];
  impl_.EnsurePool(pv.pool_key);
  for (const auto* list : {&pv.targeting, &pv.not_targeting}) {
    for (int si : *list) {
      const ResourceSlice& s = impl_.slices_[si];
      for (size_t di = 0; di < s.devices.size(); ++di) {
        if (!impl_.IsDeviceAllocated(pv.pool_key,
                                     impl_.slice_gid_base_[si] + static_cast<int>(di))) {
          continue;
        }
        for (const auto& cc : s.devices[di].consumes_counters) {
          GroupState& st = (*slot)[cc.counter_set];
          st = st.Add(GroupSet(cc.compatibility_groups));
        }
      }
    }
  }
  return *slot;
}

bool Search::CheckGroups(int ci, Rollback* rb) {
  const Candidate& c = pools_->cands[static_cast<size_t>(ci)];
  const Device& d = impl_.DeviceOf(c);
  std::map<std::string, GroupState>& running = groups_running_[static_cast<size_t>(c.pool)];
  const std::map<std::string, GroupState>& baseline = GroupBaseline(c.pool);
  for (const auto& cc : d.consumes_counters) {
    auto it = running.find(cc.counter_set);
    const bool existed = it != running.end();
    GroupState cur;
    if (existed) {
      cur = it->second;
    } else if (auto b = baseline.find(cc.counter_set); b != baseline.end()) {
      cur = b->second;
    }
    std::vector<std::string> groups = GroupSet(cc.compatibility_groups);
    if (!cur.Admits(groups)) {
      RestoreGroups(ci, *rb);
      rb->groups_saved.clear();
      return false;
    }
    rb->groups_saved.emplace_back(cc.counter_set, cur, existed);
    running[cc.counter_set] = cur.Add(groups);
  }
  return true;
}

void Search::RestoreGroups(int ci, const Rollback& rb) {
  std::map<std::string, GroupState>& running =
      groups_running_[static_cast<size_t>(pools_->cands[static_cast<size_t>(ci)].pool)];
  // NOLINTNEXTLINE(modernize-loop-convert): clang 14 rejects ranges::reverse_view of this vector
  for (auto it = rb.groups_saved.rbegin(); it != rb.groups_saved.rend(); ++it) {
    const auto& [set, prev, existed] = *it;
    if (existed) {
      running[set] = prev;
    } else {
      running.erase(set);
    }
  }
}

Status Search::AttributeFor(const ReqData& rd, int ci, const std::string& name,
                            const Attribute** out) {
  const Candidate& c = pools_->cands[static_cast<size_t>(ci)];
  const ResourceSlice& slice = impl_.slices_[c.slice];
  const Device& d = slice.devices[c.device];
  const std::string* expr = nullptr;
  for (const auto& [dn, e] : rd.spec->derived_attributes) {
    if (dn == name) expr = &e;
  }
  if (expr == nullptr) {
    *out = LookupAttribute(d, slice.driver, name);
    return OkStatus();
  }
  auto key = std::make_pair(c.gid, *expr);
  auto it = derived_.find(key);
  if (it == derived_.end()) {
    if (!impl_.config_.selectors) {
      return InvalidArgumentError("compile derived attribute " + name + " failed: no CEL compiler");
    }
    auto comp = impl_.config_.selectors->CompileAttribute(*expr);
    if (!comp.ok()) {
      return InvalidArgumentError("compile derived attribute " + name +
                                  " failed: " + comp.status().message());
    }
    auto v = (*comp)->Evaluate(*impl_.Prepared(c.gid));
    if (!v.ok()) {
      return InvalidArgumentError("evaluate derived attribute " + name + " on device " +
                                  slice.driver + "/" + slice.pool + "/" + d.name +
                                  " failed: " + v.status().message());
    }
    it = derived_.emplace(std::move(key), std::move(v).value()).first;
  }
  *out = &it->second;
  return OkStatus();
}

}  // namespace draco::alloc
