#include "controller/allocator/explain.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "controller/allocator/search.h"

namespace draco::alloc {

// Computes one funnel per request/subrequest after a failed (or fatal) search. The search state is
// clean again at this point (every tentative pick was rolled back).
void Search::Explain() {
  Explanation& e = *explain_;
  if (pools_ != nullptr) {
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
  if (pools_ == nullptr || !pools_->error.ok()) return;
  const Features& f = impl_.config_.features;
  const int n = int(pools_->cands.size());
  for (ClaimData& cd : claims_) {
    for (auto& subs : cd.reqs) {
      for (ReqData& rd : subs) {
        if (rd.spec == nullptr || rd.class_idx < 0) continue;
        RequestFunnel fn;
        fn.claim = cd.kobj;
        fn.request = rd.full;
        fn.device_class = rd.spec->device_class_name;
        fn.all_mode = rd.all;
        fn.wanted = rd.num_devices;
        const DeviceClass& cls = impl_.classes_[rd.class_idx];
        std::vector<int> alive(static_cast<size_t>(n), 0);
        for (int i = 0; i < n; ++i) alive[size_t(i)] = i;
        auto stage = [&](std::string name, std::string detail) {
          fn.stages.push_back({std::move(name), int64_t(alive.size()), std::move(detail)});
        };
        stage("devices on node", std::to_string(pools_->pools.size()) + " pools");

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
          // Find the first false selector for the detail.
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
          detail += "class " + cls.name + " selector #" + std::to_string(k) + " `" +
                    cls.selectors[k] + "` rejected " + std::to_string(cnt) + "; ";
        }
        stage("after class selectors", detail);

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
          const ResourceSlice& s = impl_.slices_[c.slice];
          const Device& d = s.devices[c.device];
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
          detail +=
              "device node selection excludes this node for " + std::to_string(node_rejects) + "; ";
        }
        if (binding_rejects > 0) {
          detail +=
              std::to_string(binding_rejects) + " have binding conditions but the feature is off; ";
        }
        stage("after request selectors", detail);

        // Free: not allocated to another claim (admin access ignores that).
        next.clear();
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
        stage("free", busy > 0 ? std::to_string(busy) + " already allocated" : "");

        // Capacity and counters, each device on its own.
        next.clear();
        int64_t cap_rejects = 0, counter_rejects = 0, partition_rejects = 0;
        for (int ci : alive) {
          const Candidate& c = pools_->cands[size_t(ci)];
          const Device& d = impl_.DeviceOf(c);
          if (f.consumable_capacity) {
            int fits = CapacityFits(rd, ci, true);
            if (fits <= 0) {
              ++cap_rejects;
              continue;
            }
          }
          if (!f.partitionable_devices && !d.consumes_counters.empty()) {
            ++partition_rejects;
            continue;
          }
          if (!d.consumes_counters.empty() && !(f.consumable_capacity && CapacityInUse(ci) &&
                                                d.allow_multiple_allocations.value_or(false))) {
            if (!CheckCounters(ci)) {
              ++counter_rejects;
              continue;
            }
            ReleaseCounters(ci);
          }
          next.push_back(ci);
        }
        alive.swap(next);
        detail.clear();
        if (cap_rejects > 0) {
          detail += std::to_string(cap_rejects) + " lack the requested capacity; ";
        }
        if (counter_rejects > 0) {
          detail += std::to_string(counter_rejects) +
                    " would exceed shared counters (partitions of devices in use); ";
        }
        if (partition_rejects > 0) {
          detail += std::to_string(partition_rejects) +
                    " consume counters but partitionable devices are off; ";
        }
        stage("after capacity and counters", detail);

        // Taints.
        next.clear();
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
        detail.clear();
        for (const auto& [t, cnt] : taint_rejects) {
          detail += "untolerated taint " + t + " on " + std::to_string(cnt) + "; ";
        }
        stage("after taints", detail);

        // Constraints: attribute presence, then the best achievable group.
        detail.clear();
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
            for (int64_t v : set->nums)
              ++groups[std::to_string(set->type) + ":" + std::to_string(v)];
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
            detail += kind + k.attribute + ": at most " + std::to_string(best) +
                      " devices share one value; ";
            // Keep only the devices of the best group for the final count.
            alive.resize(size_t(best));
          }
          if (k.distinct && int64_t(groups.size()) < fn.wanted && !alive.empty()) {
            detail += kind + k.attribute + ": only " + std::to_string(groups.size()) +
                      " distinct values; ";
            alive.resize(groups.size());
          }
        }
        stage("after constraints", detail);

        // AllocationPolicy namespace limits (committed + in-flight usage of the namespace).
        if (rd.limit != nullptr && !rd.admin) {
          const AllocationPolicy& pol = impl_.config_.policies[size_t(rd.policy)];
          const std::string& ns = cd.claim->namespace_name;
          Allocator::Impl::Usage used = UsageOf(rd.policy, ns);
          std::string ldetail;
          size_t allowed = alive.size();
          if (rd.limit->max_devices) {
            int64_t room = std::max<int64_t>(0, *rd.limit->max_devices - used.devices);
            if (room < fn.wanted) {
              ldetail += "AllocationPolicy " + pol.name + ": namespace " + ns + " maxDevices " +
                         std::to_string(*rd.limit->max_devices) + ", used " +
                         std::to_string(used.devices) + ", requested " + std::to_string(fn.wanted) +
                         "; ";
            }
            allowed = std::min(allowed, size_t(room));
          }
          for (const auto& [name, max] : rd.limit->max_capacity) {
            Amount have = used.capacity.count(name) ? used.capacity[name] : Amount(0);
            Amount want = 0;
            size_t fit = 0;
            Amount sum = have;
            for (int ci : alive) {
              const auto* c = impl_.DeviceOf(pools_->cands[size_t(ci)]).FindCapacity(name);
              Amount add = c ? c->value.nanos : 0;
              if (fit < size_t(std::max<int64_t>(fn.wanted, 0))) want += add;
              if (sum + add <= max.nanos) {
                sum += add;
                ++fit;
              }
            }
            if (fit < size_t(std::max<int64_t>(fn.wanted, 0))) {
              auto q = [](Amount a) {
                return Qty::FromInt64(int64_t(a / 1000000000),
                                      a % (Amount(1000000000) * 1024) == 0 && a != 0
                                          ? api::Quantity::Format::kBinarySI
                                          : api::Quantity::Format::kDecimalSI)
                    .ToString();
              };
              ldetail += "AllocationPolicy " + pol.name + ": namespace " + ns + " maxCapacity[" +
                         name + "] " + max.ToString() + ", used " + q(have) + ", requested " +
                         q(want) + "; ";
            }
            allowed = std::min(allowed, fit);
          }
          if (allowed < alive.size()) alive.resize(allowed);
          if (ldetail.size() >= 2) ldetail.resize(ldetail.size() - 2);  // trailing "; "
          stage("within namespace limits", ldetail);
        }

        int64_t final_count = int64_t(alive.size());
        fn.satisfiable_alone = final_count >= fn.wanted && fn.wanted > 0 && fn.cel_errors.empty();
        if (!fn.cel_errors.empty()) {
          fn.verdict = "CEL evaluation failed: " + fn.cel_errors.front();
        } else if (rd.all && fn.wanted == 0) {
          fn.verdict = "allocationMode All matched no device";
        } else if (final_count >= fn.wanted) {
          fn.verdict = "enough devices pass every filter on their own (" +
                       std::to_string(final_count) + " >= " + std::to_string(fn.wanted) +
                       "); the conflict is between requests or claims (shared devices, counters, "
                       "constraints across requests) or the 32-result limit";
        } else {
          // Name the stage that removed the last candidates.
          std::string culprit;
          for (size_t i = 1; i < fn.stages.size(); ++i) {
            if (fn.stages[i].count < fn.wanted && fn.stages[i - 1].count >= fn.wanted) {
              culprit = fn.stages[i].name + ": " + fn.stages[i].detail;
              break;
            }
          }
          if (culprit.empty() && !fn.stages.empty() && fn.stages.front().count < fn.wanted) {
            culprit = "the node has only " + std::to_string(fn.stages.front().count) +
                      " devices in usable pools";
          }
          fn.verdict = "needs " + std::to_string(fn.wanted) + ", " + std::to_string(final_count) +
                       " available; eliminated at " + culprit;
        }
        e.requests.push_back(std::move(fn));
      }
    }
  }
}

std::string ExplanationToText(const Explanation& e) {
  std::ostringstream os;
  os << "node " << (e.node.empty() ? "<none>" : e.node) << ": " << OutcomeKindName(e.outcome.kind);
  if (!e.outcome.message.empty()) os << " (" << e.outcome.message << ")";
  os << "\n";
  if (!e.pools.empty()) {
    os << "  pools:\n";
    for (const auto& p : e.pools) os << "    " << p << "\n";
  }
  for (const auto& r : e.requests) {
    os << "  claim " << r.claim << ", request " << r.request << " (class " << r.device_class << ", "
       << (r.all_mode ? "All, " : "") << "needs " << r.wanted << ")\n";
    for (const auto& s : r.stages) {
      os << "    " << s.count << "\t" << s.name;
      if (!s.detail.empty()) os << "  -- " << s.detail;
      os << "\n";
    }
    for (const auto& c : r.cel_errors) os << "    CEL error: " << c << "\n";
    os << "    => " << r.verdict << "\n";
  }
  return os.str();
}

void EncodeExplanation(const Explanation& e, JsonWriter& w) {
  auto str = [&](const std::string& s) { w.String(s.c_str(), rapidjson::SizeType(s.size())); };
  w.StartObject();
  w.Key("node");
  str(e.node);
  w.Key("outcome");
  w.String(std::string(OutcomeKindName(e.outcome.kind)).c_str());
  if (!e.outcome.message.empty()) {
    w.Key("message");
    str(e.outcome.message);
  }
  w.Key("pools");
  w.StartArray();
  for (const auto& p : e.pools) str(p);
  w.EndArray();
  w.Key("requests");
  w.StartArray();
  for (const auto& r : e.requests) {
    w.StartObject();
    w.Key("claim");
    str(r.claim);
    w.Key("request");
    str(r.request);
    w.Key("deviceClassName");
    str(r.device_class);
    w.Key("allMode");
    w.Bool(r.all_mode);
    w.Key("wanted");
    w.Int64(r.wanted);
    w.Key("funnel");
    w.StartArray();
    for (const auto& s : r.stages) {
      w.StartObject();
      w.Key("stage");
      str(s.name);
      w.Key("count");
      w.Int64(s.count);
      if (!s.detail.empty()) {
        w.Key("eliminatedBy");
        str(s.detail);
      }
      w.EndObject();
    }
    w.EndArray();
    w.Key("celErrors");
    w.StartArray();
    for (const auto& c : r.cel_errors) str(c);
    w.EndArray();
    w.Key("verdict");
    str(r.verdict);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

std::string ExplanationToJson(const Explanation& e) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  EncodeExplanation(e, w);
  return std::string(buf.GetString(), buf.GetSize());
}

}  // namespace draco::alloc
