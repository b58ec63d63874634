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

const AttrSet* AttrSetCache::Get(const Attribute* a) {
  auto it = sets_.find(a);
  if (it == sets_.end()) it = sets_.emplace(a, AttrSet::From(a)).first;
  return it->second ? &*it->second : nullptr;
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

bool Search::Constraint::Add(const Attribute* a, AttrSetCache& sets) {
  if (a == nullptr) return false;
  using K = Attribute::Kind;
  if (distinct) {
    if (list_mode) {
      const AttrSet* ns = sets.Get(a);
      if (ns == nullptr) return false;
      for (const Attribute* m : members) {
        const AttrSet* es = sets.Get(m);
        if (es == nullptr) continue;
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
      const AttrSet* s = sets.Get(a);
      if (s == nullptr) return false;
      stack.push_back(*s);
    } else {
      ref = a;
    }
    count = 1;
    return true;
  }
  if (list_mode) {
    const AttrSet* s = sets.Get(a);
    if (s == nullptr) return false;
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
  if (list_mode) stack.resize(static_cast<size_t>(count));
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
    rd.limit =
        impl_.config_.policies[static_cast<size_t>(rd.policy)].LimitFor(claim.namespace_name);
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
  for (int ci = 0; ci < static_cast<int>(pools_->cands.size()); ++ci) {
    uint8_t s = Selectable(rd, ci);
    if (s == 3) return InvalidArgumentError(rd.sel_err[ci]);
    if (s != 2) continue;
    if (f.consumable_capacity) {
      std::string err;
      if (!StaticCapacityFits(rd, ci, &err)) {
        if (!err.empty()) {
          const Candidate& c = pools_->cands[ci];
          std::string message = prefix + ": checking capacity for device ";
          message += impl_.DeviceOf(c).name;
          message += ": ";
          message += err;
          return InvalidArgumentError(message);
        }
        continue;
      }
    }
    rd.all_devices.push_back(ci);
  }
  rd.num_devices = static_cast<int64_t>(rd.all_devices.size());
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
          rd.claim = static_cast<int>(ci);
          rd.req = static_cast<int>(ri);
          rd.sub = static_cast<int>(si);
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
        rd.claim = static_cast<int>(ci);
        rd.req = static_cast<int>(ri);
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
        for (int ci = 0; ci < static_cast<int>(pools_->cands.size()); ++ci) {
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
bool Search::PruneCut(ReqData& rd, int start, int64_t need) {
  int64_t found = 0;
  for (int pos = start; pos < static_cast<int>(pools_->cands.size()); ++pos) {
    int ci = rd.Cand(pos);
    if (InUseFor(rd, ci)) continue;
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
  if (claim >= static_cast<int>(claims_.size())) return Step::kTrue;
  ClaimData& cd = claims_[claim];
  if (req >= static_cast<int>(cd.reqs.size())) {
    Step s = AllocateOne(claim + 1, 0, 0, 0, false, 0);
    return s == Step::kMaxSize ? Step::kFalse : s;
  }
  if (!allocate_sub && cd.has_subs[req]) {
    bool all_exceeded = true;
    for (int k = 0; k < static_cast<int>(cd.reqs[req].size()); ++k) {
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
  int64_t available = kMaxResultsPerClaim - static_cast<int64_t>(cd.results.size());
  if (remaining > available) {
    result_limit_hit_ = true;
    return Step::kMaxSize;
  }

  if (rd.all) {
    int ci = rd.all_devices[static_cast<size_t>(dev)];
    Rollback rb;
    int ok = AllocateDevice(claim, rd, ci, /*must=*/true, /*screened=*/false, &rb);
    if (ok < 0) return Step::kError;
    if (ok == 0) return Step::kFalse;
    Step s = AllocateOne(claim, req, sub, dev + 1, allocate_sub, 0);
    if (s != Step::kTrue) Undo(claim, rd, ci, rb);
    return s;
  }

  if (impl_.config_.prune && remaining >= 2 && PruneCut(rd, start, remaining)) {
    return Step::kFalse;
  }
  const int n = static_cast<int>(pools_->cands.size());
  std::string error;
  FilterCtx x;
  x.claim = claim;
  x.rd = &rd;
  x.error = &error;
  for (int pos = start; pos < n; ++pos) {
    const int ci = rd.Cand(pos);
    x.ci = ci;
    FilterResult screen = Screen(x);
    if (screen == FilterResult::kReject) continue;
    if (screen == FilterResult::kError) {
      status_ = InvalidArgumentError(error);
      return Step::kError;
    }
    Rollback rb;
    int ok = AllocateDevice(claim, rd, ci, /*must=*/false, /*screened=*/true, &rb);
    if (ok < 0) return Step::kError;
    if (ok == 0) continue;
    Step s = AllocateOne(claim, req, sub, dev + 1, allocate_sub, pos + 1);
    if (s == Step::kTrue) return s;
    Undo(claim, rd, ci, rb);
    if (s == Step::kError || s == Step::kMaxSize) return s;
  }
  return Step::kFalse;
}

SearchOutcome Search::Run() {
  SearchOutcome out;
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
