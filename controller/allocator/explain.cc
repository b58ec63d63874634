// The per-request funnel of Allocator::Explain: Search::Explain and its stages. The numbers
// behind the capacity and counter stages are in explain_numbers.cc, the analysis of requests
// that fit alone but not together in explain_conflicts.cc, rendering in explain_render.cc.
#include "controller/allocator/explain.h"

#include <algorithm>
#include <map>

#include "controller/allocator/search.h"

namespace draco::alloc {

// Computes one funnel per request/subrequest after a failed (or fatal) search. The search state is
// clean again at this point (every tentative pick was rolled back).
void Search::Explain() {
  ExplainPools();
  if (pools_ == nullptr || !pools_->error.ok()) return;
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
      for (int si : p.targeting) n += int64_t(impl_.slices_[si].devices.size());
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
  for (size_t i = 0; i < alive.size(); ++i) alive[i] = int(i);
  fn.stages.push_back(
      {"devices on node", int64_t(alive.size()), std::to_string(pools_->pools.size()) + " pools"});
  StageSelectors(rd, fn, alive);
  StageFreeAndCapacity(rd, fn, alive);
  StageTaints(rd, fn, alive);
  *survivors = alive;
  StageConstraints(cd, rd, fn, alive);
  if (rd.limit != nullptr && !rd.admin) StageLimits(cd, rd, fn, alive);
  const int64_t final_count = int64_t(alive.size());
  fn.satisfiable_alone = final_count >= fn.wanted && fn.wanted > 0 && fn.cel_errors.empty();
  fn.verdict = Verdict(fn, rd.all);
  return fn;
}

void Search::StageSelectors(ReqData& rd, RequestFunnel& fn, std::vector<int>& alive) {
  const Features& f = impl_.config_.features;
  const DeviceClass& cls = impl_.classes_[rd.class_idx];
  // Class selectors, attributing each rejection to the first false selector.
  std::map<size_t, int64_t> class_rejects;
  std::vector<int> next;
  for (int ci : alive) {
    std::string err;
    uint8_t r = impl_.ClassSelect(rd.class_idx, pools_->cands[size_t(ci)].gid, &err);
    if (r == 2) {
      next.push_back(ci);
      continue;
    }
    if (r == 3) {
      if (fn.cel_errors.size() < 3) fn.cel_errors.push_back(err);
      continue;
    }
    const Candidate& c = pools_->cands[size_t(ci)];
    for (size_t k = 0; k < cls.selectors.size(); ++k) {
      const auto& comp = impl_.Compile(cls.selectors[k]);
      if (!comp.error.ok()) break;
      auto m = comp.sel->Matches(*impl_.Prepared(c.gid));
      if (m.ok() && !*m) {
        ++class_rejects[k];
        break;
      }
    }
  }
  alive.swap(next);
  std::string detail;
  for (const auto& [k, cnt] : class_rejects) {
    detail += "class " + cls.name + " selector #" + std::to_string(k) + " `" + cls.selectors[k] +
              "` rejected " + std::to_string(cnt) + "; ";
  }
  fn.stages.push_back({"after class selectors", int64_t(alive.size()), detail});

  // Request selectors (and per-device node selection, binding-condition feature gate).
  std::map<size_t, int64_t> req_rejects;
  int64_t node_rejects = 0, binding_rejects = 0;
  next.clear();
  for (int ci : alive) {
    uint8_t r = Selectable(rd, ci);
    if (r == 2) {
      next.push_back(ci);
      continue;
    }
    if (r == 3) {
      if (fn.cel_errors.size() < 3) fn.cel_errors.push_back(rd.sel_err[size_t(ci)]);
      continue;
    }
    const Candidate& c = pools_->cands[size_t(ci)];
    const Device& d = impl_.DeviceOf(c);
    if (!f.device_binding && d.binding_conditions && !d.binding_conditions->empty()) {
      ++binding_rejects;
      continue;
    }
    bool found = false;
    for (size_t k = 0; k < rd.spec->selectors.size(); ++k) {
      const auto& comp = impl_.Compile(rd.spec->selectors[k]);
      if (!comp.error.ok()) break;
      auto m = comp.sel->Matches(*impl_.Prepared(c.gid));
      if (m.ok() && !*m) {
        ++req_rejects[k];
        found = true;
        break;
      }
    }
    if (!found) ++node_rejects;
  }
  alive.swap(next);
  detail.clear();
  for (const auto& [k, cnt] : req_rejects) {
    detail += "request selector #" + std::to_string(k) + " `" + rd.spec->selectors[k] +
              "` rejected " + std::to_string(cnt) + "; ";
  }
  if (node_rejects > 0) {
    detail += "device node selection excludes this node for " + std::to_string(node_rejects) + "; ";
  }
  if (binding_rejects > 0) {
    detail += std::to_string(binding_rejects) + " have binding conditions but the feature is off; ";
  }
  fn.stages.push_back({"after request selectors", int64_t(alive.size()), detail});
}

void Search::StageFreeAndCapacity(ReqData& rd, RequestFunnel& fn, std::vector<int>& alive) {
  const Features& f = impl_.config_.features;
  // Free: not allocated to another claim (admin access ignores that).
  std::vector<int> next;
  int64_t busy = 0;
  for (int ci : alive) {
    const Device& d = impl_.DeviceOf(pools_->cands[size_t(ci)]);
    bool multi = f.consumable_capacity && d.allow_multiple_allocations.value_or(false);
    if (!rd.admin && !multi && InUse(ci)) {
      ++busy;
      continue;
    }
    next.push_back(ci);
  }
  alive.swap(next);
  fn.stages.push_back(
      {"free", int64_t(alive.size()), busy > 0 ? std::to_string(busy) + " already allocated" : ""});

  // Capacity and counters, each device on its own.
  next.clear();
  std::vector<int> cap_rejects, counter_rejects;
  int64_t partition_rejects = 0;
  for (int ci : alive) {
    const Device& d = impl_.DeviceOf(pools_->cands[size_t(ci)]);
    if (f.consumable_capacity && CapacityFits(rd, ci, true) <= 0) {
      cap_rejects.push_back(ci);
      continue;
    }
    if (!f.partitionable_devices && !d.consumes_counters.empty()) {
      ++partition_rejects;
      continue;
    }
    if (!d.consumes_counters.empty() && !(f.consumable_capacity && CapacityInUse(ci) &&
                                          d.allow_multiple_allocations.value_or(false))) {
      if (!CheckCounters(ci)) {
        counter_rejects.push_back(ci);
        continue;
      }
      ReleaseCounters(ci);
    }
    next.push_back(ci);
  }
  alive.swap(next);
  std::string detail;
  if (!cap_rejects.empty()) {
    detail += std::to_string(cap_rejects.size()) + " lack the requested capacity" +
              DescribeCapacity(rd, cap_rejects, fn) + "; ";
  }
  if (!counter_rejects.empty()) {
    detail += std::to_string(counter_rejects.size()) +
              " would exceed shared counters (partitions of devices in use)" +
              DescribeCounters(counter_rejects, fn) + "; ";
  }
  if (partition_rejects > 0) {
    detail +=
        std::to_string(partition_rejects) + " consume counters but partitionable devices are off; ";
  }
  fn.stages.push_back({"after capacity and counters", int64_t(alive.size()), detail});
}

void Search::StageTaints(ReqData& rd, RequestFunnel& fn, std::vector<int>& alive) {
  const Features& f = impl_.config_.features;
  std::vector<int> next;
  std::map<std::string, int64_t> taint_rejects;
  for (int ci : alive) {
    const Device& d = impl_.DeviceOf(pools_->cands[size_t(ci)]);
    if (f.device_taints && TaintBlocks(d, *rd.spec)) {
      for (const auto& t : d.taints) {
        if (t.effect == "NoSchedule" || t.effect == "NoExecute") {
          ++taint_rejects[t.key + "=" + t.value + ":" + t.effect];
          break;
        }
      }
      continue;
    }
    next.push_back(ci);
  }
  alive.swap(next);
  std::string detail;
  for (const auto& [t, cnt] : taint_rejects) {
    detail += "untolerated taint " + t + " on " + std::to_string(cnt) + "; ";
  }
  fn.stages.push_back({"after taints", int64_t(alive.size()), detail});
}

// Attribute presence, then the best achievable group.
void Search::StageConstraints(ClaimData& cd, ReqData& rd, RequestFunnel& fn,
                              std::vector<int>& alive) {
  std::string detail;
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
    int64_t missing = int64_t(alive.size() - next.size());
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
      alive.resize(size_t(best));
    }
    if (k.distinct && int64_t(groups.size()) < fn.wanted && !alive.empty()) {
      detail +=
          kind + k.attribute + ": only " + std::to_string(groups.size()) + " distinct values; ";
      alive.resize(groups.size());
    }
  }
  fn.stages.push_back({"after constraints", int64_t(alive.size()), detail});
}

// AllocationPolicy namespace limits (committed + in-flight usage of the namespace).
void Search::StageLimits(ClaimData& cd, ReqData& rd, RequestFunnel& fn, std::vector<int>& alive) {
  const AllocationPolicy& pol = impl_.config_.policies[size_t(rd.policy)];
  const std::string& ns = cd.claim->namespace_name;
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
    allowed = std::min(allowed, size_t(room));
  }
  const size_t wanted = size_t(std::max<int64_t>(fn.wanted, 0));
  for (const auto& [name, max] : rd.limit->max_capacity) {
    Amount have = used.capacity.count(name) ? used.capacity[name] : Amount(0);
    Amount want = 0;
    size_t fit = 0;
    Amount sum = have;
    for (int ci : alive) {
      const auto* c = impl_.DeviceOf(pools_->cands[size_t(ci)]).FindCapacity(name);
      Amount add = c ? c->value.nanos : 0;
      if (fit < wanted) want += add;
      if (sum + add <= max.nanos) {
        sum += add;
        ++fit;
      }
    }
    if (fit < wanted) {
      auto q = [](Amount a) {
        return Qty::FromInt64(int64_t(a / 1000000000),
                              a % (Amount(1000000000) * 1024) == 0 && a != 0
                                  ? api::Quantity::Format::kBinarySI
                                  : api::Quantity::Format::kDecimalSI)
            .ToString();
      };
      ldetail += "AllocationPolicy " + pol.name + ": namespace " + ns + " maxCapacity[" + name +
                 "] " + max.ToString() + ", used " + q(have) + ", requested " + q(want) + "; ";
    }
    allowed = std::min(allowed, fit);
  }
  if (allowed < alive.size()) alive.resize(allowed);
  if (ldetail.size() >= 2) ldetail.resize(ldetail.size() - 2);  // trailing "; "
  fn.stages.push_back({"within namespace limits", int64_t(alive.size()), ldetail});
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
