// The per-request funnel of Allocator::Explain: Search::Explain walks the per-device filter table
// (device_filters.h) stage by stage; here are the filters' renderings. The numbers
// behind the capacity and counter stages are in explain_numbers.cc, the analysis of requests
// that fit alone but not together in explain_conflicts.cc, rendering in explain_render.cc.
#include "controller/allocator/explain.h"

#include <algorithm>
#include <map>

#include "controller/allocator/device_filters.h"
#include "controller/allocator/search.h"

namespace draco::alloc {

// Computes one funnel per request/subrequest after a failed (or fatal) search. The search state is
// clean again at this point (every tentative pick was rolled back).
void Search::Explain() {
  ExplainPools();
  if (pools_ == nullptr || !pools_->error.ok()) return;
  // A failed Prepare leaves the claims after the failing one without their picks.
  for (ClaimData& cd : claims_) cd.picked.resize(pools_->cands.size(), 0);
  std::vector<Survivors> survivors;
  for (ClaimData& cd : claims_) {
    for (auto& subs : cd.reqs) {
      for (ReqData& rd : subs) {
        if (rd.spec == nullptr || rd.class_idx < 0) continue;
        Survivors sv;
        sv.claim = rd.claim;
        sv.rd = &rd;
        sv.funnel = explain_->requests.size();
        explain_->requests.push_back(ExplainRequest(cd, rd, &sv.cands));
        survivors.push_back(std::move(sv));
      }
    }
  }
  const Outcome::Kind kind = explain_->outcome.kind;
  if (kind == Outcome::Kind::kUnsatisfiable || kind == Outcome::Kind::kTimeout) {
    ExplainConflicts(survivors);
  }
}

void Search::ExplainPools() {
  if (pools_ == nullptr) return;
  Explanation& e = *explain_;
  for (const PoolView& p : pools_->pools) {
    const auto& key = impl_.pool_keys_[p.pool_key];
    std::string line = std::string(key.driver) + "/" + std::string(key.pool) + ": ";
    if (p.incomplete) {
      line += "incomplete (not all ResourceSlices of the current generation are published)";
    } else if (p.invalid) {
      line += "invalid (" + p.invalid_reason + ")";
    } else {
      int64_t n = 0;
      for (int si : p.targeting) n += static_cast<int64_t>(impl_.slices_[si].devices.size());
      line += "ok, " + std::to_string(n) + " devices for this node";
    }
    e.pools.push_back(std::move(line));
  }
  for (const auto& o : pools_->obsolete) {
    e.pools.push_back(o + ": ignored (a newer generation is being published)");
  }
}

RequestFunnel Search::ExplainRequest(ClaimData& cd, ReqData& rd, std::vector<int>* survivors) {
  RequestFunnel fn;
  fn.claim = cd.kobj;
  fn.request = rd.full;
  fn.device_class = rd.spec->device_class_name;
  fn.all_mode = rd.all;
  fn.wanted = rd.num_devices;
  std::vector<int> alive(pools_->cands.size(), 0);
  for (size_t i = 0; i < alive.size(); ++i) alive[i] = static_cast<int>(i);
  fn.stages.push_back({"devices on node", static_cast<int64_t>(alive.size()),
                       std::to_string(pools_->pools.size()) + " pools"});
  bool survivors_taken = false;
  for (size_t stage = 0; stage < kFilterStageNames.size(); ++stage) {
    std::string detail;
    bool shown = false;
    for (const DeviceFilter& f : kDeviceFilters) {
      if (static_cast<size_t>(f.stage) != stage || f.funnel == FunnelUse::kNone) continue;
      FunnelStep st{cd, rd, fn, alive, detail, {}, {}, {}};
      if (f.funnel == FunnelUse::kSetLevel) {
        if (!survivors_taken) *survivors = alive;
        survivors_taken = true;
        shown = (this->*f.narrow)(st) || shown;
        continue;
      }
      shown = true;
      ProbeEach(f.check, st);
      (this->*f.describe)(st);
    }
    if (shown) {
      fn.stages.push_back(
          {std::string(kFilterStageNames[stage]), static_cast<int64_t>(alive.size()), detail});
    }
  }
  if (!survivors_taken) *survivors = alive;
  const auto final_count = static_cast<int64_t>(alive.size());
  fn.satisfiable_alone = final_count >= fn.wanted && fn.wanted > 0 && fn.cel_errors.empty();
  fn.verdict = Verdict(fn, rd.all);
  return fn;
}

void Search::ProbeEach(FilterResult (Search::*check)(FilterCtx&), FunnelStep& st) {
  std::vector<int> next;
  for (int ci : st.alive) {
    Rollback rb;
    InternalResult res;
    std::string error;
    FilterCtx x;
    x.claim = st.rd.claim;
    x.rd = &st.rd;
    x.ci = ci;
    x.rb = &rb;
    x.res = &res;
    x.error = &error;
    FilterResult v = (this->*check)(x);
    Undo(st.rd.claim, st.rd, ci, rb);
    if (v == FilterResult::kPass) {
      next.push_back(ci);
    } else if (v == FilterResult::kReject) {
      st.rejected.push_back(ci);
    } else {
      st.errored.push_back(ci);
      st.errors.push_back(std::move(error));
    }
  }
  st.alive.swap(next);
}

namespace {

void AddCelErrors(const std::vector<std::string>& errors, RequestFunnel& fn) {
  for (const std::string& e : errors) {
    if (fn.cel_errors.size() < 3) fn.cel_errors.push_back(e);
  }
}

}  // namespace

void Search::DescribeClassSelectors(FunnelStep& st) {
  AddCelErrors(st.errors, st.fn);
  // Each rejection is attributed to the first false selector.
  const DeviceClass& cls = impl_.classes_[st.rd.class_idx];
  std::map<size_t, int64_t> rejects;
  for (int ci : st.rejected) {
    const Candidate& c = pools_->cands[static_cast<size_t>(ci)];
    for (size_t k = 0; k < cls.selectors.size(); ++k) {
      const auto& comp = impl_.Compile(cls.selectors[k]);
      if (!comp.error.ok()) break;
      auto m = comp.sel->Matches(*impl_.Prepared(c.gid));
      if (m.ok() && !*m) {
        ++rejects[k];
        break;
      }
    }
  }
  for (const auto& [k, cnt] : rejects) {
    st.detail += "class " + cls.name + " selector #" + std::to_string(k) + " `" + cls.selectors[k] +
                 "` rejected " + std::to_string(cnt) + "; ";
  }
}

void Search::DescribeBindingConditions(FunnelStep& st) {
  if (st.rejected.empty()) return;
  st.detail +=
      std::to_string(st.rejected.size()) + " have binding conditions but the feature is off; ";
}

void Search::DescribeRequestSelectors(FunnelStep& st) {
  AddCelErrors(st.errors, st.fn);
  const auto& sels = st.rd.spec->selectors;
  std::map<size_t, int64_t> rejects;
  for (int ci : st.rejected) {
    const Candidate& c = pools_->cands[static_cast<size_t>(ci)];
    for (size_t k = 0; k < sels.size(); ++k) {
      const auto& comp = impl_.Compile(sels[k]);
      if (!comp.error.ok()) break;
      auto m = comp.sel->Matches(*impl_.Prepared(c.gid));
      if (m.ok() && !*m) {
        ++rejects[k];
        break;
      }
    }
  }
  for (const auto& [k, cnt] : rejects) {
    st.detail += "request selector #" + std::to_string(k) + " `" + sels[k] + "` rejected " +
                 std::to_string(cnt) + "; ";
  }
}

void Search::DescribeNodeSelection(FunnelStep& st) {
  AddCelErrors(st.errors, st.fn);
  if (st.rejected.empty()) return;
  st.detail +=
      "device node selection excludes this node for " + std::to_string(st.rejected.size()) + "; ";
}

void Search::DescribeNodeOperations(FunnelStep& st) {
  if (st.rejected.empty()) return;
  st.detail += std::to_string(st.rejected.size()) +
               " are in slices with skipNodeOperations, which needs the "
               "DRAOptionalNodeOperations feature and the node declaring it; ";
}

void Search::DescribeInUse(FunnelStep& st) {
  if (!st.rejected.empty()) st.detail += std::to_string(st.rejected.size()) + " already allocated";
}

void Search::DescribeCapacity(FunnelStep& st) {
  // A device whose consumption cannot be computed lacks the capacity too.
  std::vector<int> rejected = st.rejected;
  rejected.insert(rejected.end(), st.errored.begin(), st.errored.end());
  if (rejected.empty()) return;
  std::sort(rejected.begin(), rejected.end());
  st.detail += std::to_string(rejected.size()) + " lack the requested capacity" +
               CapacityDetail(st.rd, rejected, st.fn) + "; ";
}

void Search::DescribePartitionable(FunnelStep& st) {
  if (st.rejected.empty()) return;
  st.detail +=
      std::to_string(st.rejected.size()) + " consume counters but partitionable devices are off; ";
}

void Search::DescribeCompatibilityGroups(FunnelStep& st) {
  if (st.rejected.empty()) return;
  st.detail += std::to_string(st.rejected.size()) +
               " share no compatibility group with the devices drawing on their counter sets; ";
}

void Search::DescribeCounters(FunnelStep& st) {
  if (st.rejected.empty()) return;
  st.detail += std::to_string(st.rejected.size()) +
               " would exceed shared counters (partitions of devices in use)" +
               CounterDetail(st.rejected, st.fn) + "; ";
}

void Search::DescribeTaints(FunnelStep& st) {
  std::map<std::string, int64_t> rejects;
  for (int ci : st.rejected) {
    const DeviceTaint* t =
        UntoleratedTaint(impl_.DeviceOf(pools_->cands[static_cast<size_t>(ci)]), *st.rd.spec);
    if (t != nullptr) ++rejects[t->key + "=" + t->value + ":" + t->effect];
  }
  for (const auto& [t, cnt] : rejects) {
    st.detail += "untolerated taint " + t + " on " + std::to_string(cnt) + "; ";
  }
}

// Attribute presence, then the best achievable group.
bool Search::NarrowConstraints(FunnelStep& st) {
  ClaimData& cd = st.cd;
  ReqData& rd = st.rd;
  RequestFunnel& fn = st.fn;
  std::vector<int>& alive = st.alive;
  std::string& detail = st.detail;
  std::vector<int> next;
  for (const Constraint& k : cd.constraints) {
    if (!k.Applies(rd)) continue;
    next.clear();
    std::map<std::string, int64_t> groups;
    for (int ci : alive) {
      const Attribute* a = nullptr;  // derived attributes included
      if (!AttributeFor(rd, ci, k.attribute, &a).ok() || a == nullptr) continue;
      next.push_back(ci);
      auto set = AttrSet::From(a);
      if (!set) continue;
      for (int64_t v : set->nums) ++groups[std::to_string(set->type) + ":" + std::to_string(v)];
      for (const auto& v : set->strs) ++groups[std::to_string(set->type) + ":" + v];
    }
    auto missing = static_cast<int64_t>(alive.size() - next.size());
    alive.swap(next);
    int64_t best = 0;
    for (const auto& [v, cnt] : groups) best = std::max(best, cnt);
    std::string kind = k.distinct ? "distinctAttribute " : "matchAttribute ";
    if (missing > 0) {
      detail += kind + k.attribute + ": " + std::to_string(missing) + " lack the attribute; ";
    }
    if (!k.distinct && best < fn.wanted && !alive.empty()) {
      detail +=
          kind + k.attribute + ": at most " + std::to_string(best) + " devices share one value; ";
      // Keep only the devices of the best group for the final count.
      alive.resize(static_cast<size_t>(best));
    }
    if (k.distinct && static_cast<int64_t>(groups.size()) < fn.wanted && !alive.empty()) {
      detail +=
          kind + k.attribute + ": only " + std::to_string(groups.size()) + " distinct values; ";
      alive.resize(groups.size());
    }
  }
  return true;
}

// AllocationPolicy namespace limits (committed + in-flight usage of the namespace).
bool Search::NarrowNamespaceLimits(FunnelStep& st) {
  ReqData& rd = st.rd;
  if (rd.limit == nullptr || rd.admin) return false;
  RequestFunnel& fn = st.fn;
  std::vector<int>& alive = st.alive;
  const AllocationPolicy& pol = impl_.config_.policies[static_cast<size_t>(rd.policy)];
  const std::string& ns = st.cd.claim->namespace_name;
  Allocator::Impl::Usage used = UsageOf(rd.policy, ns);
  std::string ldetail;
  size_t allowed = alive.size();
  if (rd.limit->max_devices) {
    int64_t room = std::max<int64_t>(0, *rd.limit->max_devices - used.devices);
    if (room < fn.wanted) {
      ldetail += "AllocationPolicy " + pol.name + ": namespace " + ns + " maxDevices " +
                 std::to_string(*rd.limit->max_devices) + ", used " + std::to_string(used.devices) +
                 ", requested " + std::to_string(fn.wanted) + "; ";
    }
    allowed = std::min(allowed, static_cast<size_t>(room));
  }
  const size_t wanted = static_cast<size_t>(std::max<int64_t>(fn.wanted, 0));
  for (const auto& [name, max] : rd.limit->max_capacity) {
    Amount have = used.capacity.count(name) ? used.capacity[name] : static_cast<Amount>(0);
    Amount want = 0;
    size_t fit = 0;
    Amount sum = have;
    for (int ci : alive) {
      // As if each device were allocated whole (the consumed capacity of a shared one is not
      // known before the search picks it).
      const Amount add = Allocator::Impl::CapacityNamed(
          Allocator::Impl::LimitCapacities(impl_.DeviceOf(pools_->cands[static_cast<size_t>(ci)]),
                                           false, {}),
          name);
      if (fit < wanted) want += add;
      if (sum + add <= max.nanos) {
        sum += add;
        ++fit;
      }
    }
    if (fit < wanted) {
      auto q = [](Amount a) {
        return Qty::FromInt64(static_cast<int64_t>(a / 1000000000),
                              a % (static_cast<Amount>(1000000000) * 1024) == 0 && a != 0
                                  ? api::Quantity::Format::kBinarySI
                                  : api::Quantity::Format::kDecimalSI)
            .ToString();
      };
      ldetail += "AllocationPolicy ";
      ldetail += pol.name;
      ldetail += ": namespace ";
      ldetail += ns;
      ldetail += " maxCapacity[";
      ldetail += name;
      ldetail += "] ";
      ldetail += max.ToString();
      ldetail += ", used ";
      ldetail += q(have);
      ldetail += ", requested ";
      ldetail += q(want);
      ldetail += "; ";
    }
    allowed = std::min(allowed, fit);
  }
  if (allowed < alive.size()) alive.resize(allowed);
  if (ldetail.size() >= 2) ldetail.resize(ldetail.size() - 2);  // trailing "; "
  st.detail += ldetail;
  return true;
}

std::string Search::Verdict(const RequestFunnel& fn, bool all_mode) {
  const int64_t final_count = fn.stages.empty() ? 0 : fn.stages.back().count;
  if (!fn.cel_errors.empty()) return "CEL evaluation failed: " + fn.cel_errors.front();
  if (all_mode && fn.wanted == 0) return "allocationMode All matched no device";
  if (final_count >= fn.wanted) {
    // ExplainConflicts completes this once it knows what the requests conflict on.
    return "enough devices pass every filter on their own (" + std::to_string(final_count) +
           " >= " + std::to_string(fn.wanted) + ")";
  }
  // Name the stage that removed the last candidates.
  std::string culprit;
  for (size_t i = 1; i < fn.stages.size(); ++i) {
    if (fn.stages[i].count < fn.wanted && fn.stages[i - 1].count >= fn.wanted) {
      culprit = fn.stages[i].name + ": " + fn.stages[i].detail;
      break;
    }
  }
  if (culprit.empty() && !fn.stages.empty() && fn.stages.front().count < fn.wanted) {
    culprit =
        "the node has only " + std::to_string(fn.stages.front().count) + " devices in usable pools";
  }
  return "needs " + std::to_string(fn.wanted) + ", " + std::to_string(final_count) +
         " available; eliminated at " + culprit;
}

}  // namespace draco::alloc
