// Why requests that each pass every per-device filter cannot be allocated together. Each check
// is a necessary condition for a solution, so a failed check proves the conflict: too few
// distinct candidate devices for a set of requests (Hall's condition), a shared counter that
// cannot cover the cheapest devices a set of requests must take from it, and matchAttribute /
// distinctAttribute constraints across requests that no value (or too few values) can satisfy.
// When none applies the search itself ruled out every combination (or hit its limits).
#include <algorithm>
#include <map>
#include <set>

#include "controller/allocator/capacity.h"
#include "controller/allocator/explain.h"
#include "controller/allocator/search.h"

namespace draco::alloc {
namespace {

constexpr size_t kMaxConflicts = 3;
// Every subset of up to this many requests is checked; beyond it only all requests together,
// each request alone and each claim.
constexpr size_t kMaxSubsetRequests = 8;
constexpr size_t kMaxValuesShown = 3;

}  // namespace

// One request of a claim: its subrequests that pass alone, merged (any of them may be used).
struct Search::ConflictUnit {
  std::string claim;  // namespace/name
  std::string name;   // request name
  int64_t wanted = 0;
  bool alone = false;  // some (sub)request passes every per-device filter alone
  bool admin = false;
  bool shared = false;  // a candidate may be allocated more than once (consumable capacity)
  std::vector<const Search::Survivors*> subs;
  std::vector<size_t> funnels;
  std::vector<int> cands;  // sorted, unique
};

namespace {

using Unit = Search::ConflictUnit;

std::string Names(const std::vector<Unit>& units, const std::vector<size_t>& idx) {
  bool one_claim = true;
  for (size_t i : idx) one_claim = one_claim && units[i].claim == units[idx[0]].claim;
  std::string out = idx.size() > 1 ? "requests " : "request ";
  for (size_t j = 0; j < idx.size(); ++j) {
    out += j == 0 ? "" : (j + 1 == idx.size() ? " and " : ", ");
    out += (one_claim ? "" : units[idx[j]].claim + "/") + units[idx[j]].name;
  }
  if (one_claim) out += " of claim " + units[idx[0]].claim;
  return out;
}

std::vector<std::string> Qualified(const std::vector<Unit>& units, const std::vector<size_t>& idx) {
  std::vector<std::string> out;
  out.reserve(idx.size());
  for (size_t i : idx) out.push_back(units[i].claim + "/" + units[i].name);
  return out;
}

// The union of the candidates of `idx` and the devices they need together.
std::vector<int> Union(const std::vector<Unit>& units, const std::vector<size_t>& idx,
                       int64_t* wanted) {
  std::vector<int> u;
  *wanted = 0;
  for (size_t i : idx) {
    u.insert(u.end(), units[i].cands.begin(), units[i].cands.end());
    *wanted += units[i].wanted;
  }
  std::sort(u.begin(), u.end());
  u.erase(std::unique(u.begin(), u.end()), u.end());
  return u;
}

std::string ValueText(const std::string& key) { return key.substr(key.find(':') + 1); }

void AddConflict(Explanation& e, Conflict c) {
  if (e.conflicts.size() < kMaxConflicts) e.conflicts.push_back(std::move(c));
}

// The sets of requests to check: every subset when there are few, else each request alone, each
// claim's requests and all of them; smallest first. Requests that do not take devices
// exclusively (admin access, shareable devices) are left out.
std::vector<std::vector<size_t>> CheckSets(const std::vector<Unit>& units) {
  std::vector<size_t> plain;  // requests that take devices exclusively
  for (size_t i = 0; i < units.size(); ++i) {
    if (!units[i].admin && !units[i].shared) plain.push_back(i);
  }
  std::vector<std::vector<size_t>> sets;
  if (plain.size() <= kMaxSubsetRequests) {
    for (uint32_t m = 1; m < (1u << plain.size()); ++m) {
      std::vector<size_t> s;
      for (size_t j = 0; j < plain.size(); ++j) {
        if (m & (1u << j)) s.push_back(plain[j]);
      }
      sets.push_back(std::move(s));
    }
  } else {
    for (size_t i : plain) sets.push_back({i});
    std::map<std::string, std::vector<size_t>> by_claim;
    for (size_t i : plain) by_claim[units[i].claim].push_back(i);
    for (auto& [claim, s] : by_claim) sets.push_back(s);
    sets.push_back(plain);
  }
  std::stable_sort(sets.begin(), sets.end(),
                   [](const auto& a, const auto& b) { return a.size() < b.size(); });
  return sets;
}

}  // namespace

std::vector<Search::ConflictUnit> Search::ConflictUnits(const std::vector<Survivors>& survivors) {
  const Explanation& e = *explain_;
  const Features& f = impl_.config_.features;
  // Requests, with their subrequests merged.
  std::vector<Unit> units;
  std::map<std::pair<int, int>, size_t> unit_of;
  for (const Survivors& sv : survivors) {
    auto [it, fresh] = unit_of.try_emplace({sv.claim, sv.rd->req}, units.size());
    if (fresh) {
      units.emplace_back();
      units.back().claim = claims_[static_cast<size_t>(sv.claim)].kobj;
      units.back().name = sv.rd->parent.empty() ? sv.rd->name : sv.rd->parent;
    }
    Unit& u = units[it->second];
    if (!e.requests[sv.funnel].satisfiable_alone) continue;
    u.wanted = u.alone ? std::min(u.wanted, sv.rd->num_devices) : sv.rd->num_devices;
    u.alone = true;
    u.admin = u.admin || sv.rd->admin;
    u.subs.push_back(&sv);
    u.funnels.push_back(sv.funnel);
    u.cands.insert(u.cands.end(), sv.cands.begin(), sv.cands.end());
  }
  for (Unit& u : units) {
    std::sort(u.cands.begin(), u.cands.end());
    u.cands.erase(std::unique(u.cands.begin(), u.cands.end()), u.cands.end());
    for (int ci : u.cands) {
      const Device& d = impl_.DeviceOf(pools_->cands[static_cast<size_t>(ci)]);
      u.shared =
          u.shared || (f.consumable_capacity && d.allow_multiple_allocations.value_or(false));
    }
  }
  return units;
}

void Search::ConflictOnDevices(const std::vector<ConflictUnit>& units,
                               const std::vector<std::vector<size_t>>& sets) {
  // Hall's condition over the smallest failing set.
  for (const auto& s : sets) {
    if (s.size() < 2) continue;
    int64_t wanted = 0;
    std::vector<int> u = Union(units, s, &wanted);
    if (static_cast<int64_t>(u.size()) >= wanted) continue;
    Conflict c;
    c.kind = Conflict::Kind::kDevices;
    c.requests = Qualified(units, s);
    c.needed = wanted;
    c.available = static_cast<int64_t>(u.size());
    c.text = Names(units, s) + " together need " + std::to_string(wanted) + " devices, " +
             std::to_string(u.size()) + " pass their filters";
    AddConflict(*explain_, std::move(c));
    break;
  }
}

void Search::ConflictOnCounters(const std::vector<ConflictUnit>& units,
                                const std::vector<std::vector<size_t>>& sets) {
  // The cheapest devices the set must take from a counter exceed what is left.
  bool counter_found = false;
  for (const auto& s : sets) {
    if (counter_found) break;
    int64_t wanted = 0;
    std::vector<int> u = Union(units, s, &wanted);
    std::map<std::pair<int, int>, std::vector<Amount>> draws;  // (pool view, counter) -> amounts
    for (int ci : u) {
      const Candidate& c = pools_->cands[static_cast<size_t>(ci)];
      for (const auto& [k, amount] : c.consumption) draws[{c.pool, k}].push_back(amount);
    }
    for (auto& [key, amounts] : draws) {
      const auto free = static_cast<int64_t>(u.size() - amounts.size());
      const int64_t must = wanted - free;
      if (must <= 0 || must > static_cast<int64_t>(amounts.size())) continue;
      std::sort(amounts.begin(), amounts.end());
      Amount least = 0;
      for (int64_t j = 0; j < must; ++j) least += amounts[static_cast<size_t>(j)];
      auto& pool = const_cast<PoolView&>(pools_->pools[static_cast<size_t>(key.first)]);
      if (least <= impl_.AvailableCounters(pool)[static_cast<size_t>(key.second)]) continue;
      Conflict c;
      c.kind = Conflict::Kind::kCounter;
      c.requests = Qualified(units, s);
      c.counter = CounterState(key.first, key.second);
      c.counter->devices = must;
      c.counter->needed = FormatAmount(least, CounterFormat(pool, key.second));
      c.needed = must;
      c.text = Names(units, s) + " must take " + std::to_string(must) + " devices drawing on " +
               CounterShortfallText(*c.counter);
      c.text.replace(c.text.find(": needs "), 8, ", which need at least ");
      AddConflict(*explain_, std::move(c));
      counter_found = true;
      break;
    }
  }
}

void Search::ConflictOnConstraints(const std::vector<ConflictUnit>& units) {
  for (size_t ci = 0; ci < claims_.size(); ++ci) {
    for (const Constraint& k : claims_[ci].constraints) {
      std::vector<size_t> bound;  // requests every usable subrequest of which is constrained
      for (size_t i = 0; i < units.size(); ++i) {
        if (units[i].subs.empty() || units[i].subs.front()->claim != static_cast<int>(ci)) continue;
        bool all = true;
        for (const Survivors* sv : units[i].subs) all = all && k.Applies(*sv->rd);
        if (all) bound.push_back(i);
      }
      if (bound.size() < 2) continue;
      // Per request: the most devices any usable subrequest has per value.
      std::vector<std::map<std::string, int64_t>> per(bound.size());
      std::map<std::string, std::set<int>> devices_of;  // value -> candidates (all requests)
      for (size_t j = 0; j < bound.size(); ++j) {
        for (const Survivors* sv : units[bound[j]].subs) {
          std::map<std::string, int64_t> counts;
          for (int cand : sv->cands) {
            const Attribute* a = nullptr;
            if (!AttributeFor(*sv->rd, cand, k.attribute, &a).ok()) continue;
            auto set = AttrSet::From(a);
            if (!set) continue;
            std::vector<std::string> keys;
            for (int64_t v : set->nums) {
              keys.push_back(std::to_string(set->type) + ":" + std::to_string(v));
            }
            for (const auto& v : set->strs) keys.push_back(std::to_string(set->type) + ":" + v);
            for (const auto& key : keys) {
              ++counts[key];
              devices_of[key].insert(cand);
            }
          }
          for (const auto& [key, n] : counts) {
            if (n >= sv->rd->num_devices) per[j][key] = std::max(per[j][key], n);
          }
        }
      }
      int64_t wanted = 0;
      for (size_t i : bound) wanted += units[i].wanted;
      Conflict c;
      c.requests = Qualified(units, bound);
      c.attribute = k.attribute;
      if (k.distinct) {
        if (static_cast<int64_t>(devices_of.size()) >= wanted) continue;
        c.kind = Conflict::Kind::kDistinctAttribute;
        c.needed = wanted;
        c.available = static_cast<int64_t>(devices_of.size());
        c.text = "distinctAttribute " + k.attribute + " over " + Names(units, bound) + ": " +
                 std::to_string(wanted) + " devices need distinct values, their candidates have " +
                 std::to_string(devices_of.size());
        AddConflict(*explain_, std::move(c));
        continue;
      }
      bool any = false;
      for (const auto& [key, devs] : devices_of) {
        bool ok = static_cast<int64_t>(devs.size()) >= wanted;
        for (size_t j = 0; ok && j < bound.size(); ++j) ok = per[j].count(key) > 0;
        any = any || ok;
      }
      if (any) continue;
      c.kind = Conflict::Kind::kMatchAttribute;
      c.needed = wanted;
      c.text = "matchAttribute " + k.attribute + " over " + Names(units, bound) +
               ": no single value has enough devices for all of them (";
      for (size_t j = 0; j < bound.size(); ++j) {
        const Unit& un = units[bound[j]];
        c.text += (j > 0 ? "; " : "") + un.name + " needs " + std::to_string(un.wanted);
        // The values this request's candidates carry, most devices first.
        std::vector<std::pair<int64_t, std::string>> vals;
        for (const auto& [key, devs] : devices_of) {
          int64_t n = 0;
          for (int cand : un.cands) n += static_cast<int64_t>(devs.count(cand));
          if (n > 0) vals.emplace_back(-n, key);
        }
        std::sort(vals.begin(), vals.end());
        for (size_t v = 0; v < vals.size() && v < kMaxValuesShown; ++v) {
          c.text += (v == 0 ? ": " : ", ") + ValueText(vals[v].second) + " on " +
                    std::to_string(-vals[v].first);
        }
        if (vals.empty()) c.text += ": no candidate has a value";
      }
      c.text += ")";
      AddConflict(*explain_, std::move(c));
    }
  }
}

void Search::ExplainConflicts(const std::vector<Survivors>& survivors) {
  Explanation& e = *explain_;
  std::vector<ConflictUnit> units = ConflictUnits(survivors);
  std::vector<size_t> failing;
  for (size_t i = 0; i < units.size(); ++i) {
    if (!units[i].alone) failing.push_back(i);
  }
  if (failing.empty()) {
    std::vector<std::vector<size_t>> sets = CheckSets(units);
    ConflictOnDevices(units, sets);
    ConflictOnCounters(units, sets);
    ConflictOnConstraints(units);
    if (result_limit_hit_) {
      Conflict c;
      c.kind = Conflict::Kind::kResultLimit;
      c.available = kMaxResultsPerClaim;
      c.text = "some combinations were cut by the limit of " + std::to_string(kMaxResultsPerClaim) +
               " devices per claim";
      AddConflict(e, std::move(c));
    }
    if (e.conflicts.empty()) {
      Conflict c;
      c.kind = Conflict::Kind::kSearch;
      for (const ConflictUnit& u : units) c.requests.push_back(u.claim + "/" + u.name);
      c.text = e.outcome.kind == Outcome::Kind::kTimeout
                   ? "the search timed out before it found a combination for all requests together"
                   : "no combination of devices satisfies all requests and claims together (the "
                     "search checks shared devices, shared counters, compatibility groups and "
                     "constraints across requests at once)";
      AddConflict(e, std::move(c));
    }
  }
  // Complete the verdicts of the requests that pass alone.
  for (RequestFunnel& fn : e.requests) {
    if (!fn.satisfiable_alone) continue;
    std::string tail;
    if (!failing.empty()) tail = "but " + Names(units, failing) + " cannot be satisfied on its own";
    const std::string self = fn.claim + "/" + fn.request.substr(0, fn.request.find('/'));
    for (const Conflict& c : e.conflicts) {
      if (std::find(c.requests.begin(), c.requests.end(), self) != c.requests.end()) {
        tail = c.text;
        break;
      }
    }
    if (tail.empty() && !e.conflicts.empty()) tail = e.conflicts.front().text;
    if (!tail.empty()) fn.verdict += "; " + tail;
  }
}

}  // namespace draco::alloc
