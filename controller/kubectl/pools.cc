#include "controller/kubectl/pools.h"

#include <algorithm>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "controller/allocator/capacity.h"

namespace draco::kubectl {
namespace {

using alloc::Amount;

struct Sum {
  Amount used = 0, total = 0;
  bool binary = false;
};

std::string Format(Amount nanos, bool binary) {
  return alloc::FormatAmount(
      nanos, binary ? api::Quantity::Format::kBinarySI : api::Quantity::Format::kDecimalSI);
}

AmountUse ToUse(const std::string& name, const Sum& s) {
  return {name, Format(s.used, s.binary), Format(s.total, s.binary),
          Format(s.total - s.used, s.binary)};
}

bool IsBinary(const alloc::Qty& q) { return q.q.format() == api::Quantity::Format::kBinarySI; }

// driver/pool/device -> the allocation results that hold it (admin access excluded).
using Holders = std::map<std::tuple<std::string, std::string, std::string>,
                         std::vector<const alloc::DeviceRequestAllocationResult*>>;

Holders AllocatedDevices(const simulate::Simulation& sim) {
  Holders h;
  for (const auto& c : sim.claims) {
    if (!c.allocation) continue;
    for (const auto& r : c.allocation->results) {
      if (r.admin_access.value_or(false)) continue;
      h[{r.driver, r.pool, r.device}].push_back(&r);
    }
  }
  return h;
}

// A taint with an effect (not "None") on the device, or from a DeviceTaintRule when the allocator
// applies those rules (the same selection as the allocator's).
bool Tainted(const alloc::ResourceSlice& s, const alloc::Device& d,
             const std::vector<alloc::DeviceTaintRule>& rules, bool rules_apply) {
  for (const auto& t : d.taints) {
    if (t.effect != "None") return true;
  }
  if (!rules_apply) return false;
  return std::any_of(rules.begin(), rules.end(), [&](const alloc::DeviceTaintRule& r) {
    return r.taint.effect != "None" && r.Selects(s.driver, s.pool, d.name);
  });
}

// The newest generation of each pool, as the allocator sees pools.
std::vector<const alloc::ResourceSlice*> CurrentSlices(const simulate::Simulation& sim) {
  std::map<std::pair<std::string, std::string>, int64_t> newest;
  for (const auto& s : sim.in.slices) {
    auto [it, fresh] = newest.try_emplace({s.driver, s.pool}, s.generation);
    if (!fresh) it->second = std::max(it->second, s.generation);
  }
  std::vector<const alloc::ResourceSlice*> out;
  for (const auto& s : sim.in.slices) {
    if (s.generation == newest[{s.driver, s.pool}]) out.push_back(&s);
  }
  return out;
}

struct PoolAcc {
  PoolRow row;
  std::map<std::string, Sum> capacity;
};

void AddDevice(const alloc::ResourceSlice& s, const alloc::Device& d, const Holders& held,
               const std::vector<alloc::DeviceTaintRule>& rules, bool rules_apply, PoolAcc& acc,
               std::map<std::tuple<std::string, std::string, std::string>, Sum>& counters) {
  ++acc.row.devices;
  auto h = held.find({s.driver, s.pool, d.name});
  bool allocated = h != held.end();
  allocated ? ++acc.row.allocated : ++acc.row.free;
  if (Tainted(s, d, rules, rules_apply)) ++acc.row.tainted;
  for (const auto& [name, cap] : d.capacity) {
    Sum& sum = acc.capacity[name];
    sum.total += cap.value.nanos;
    sum.binary = sum.binary || IsBinary(cap.value);
    if (!allocated) continue;
    for (const auto* r : h->second) {
      auto c = std::find_if(r->consumed_capacity.begin(), r->consumed_capacity.end(),
                            [&](const auto& e) { return e.first == name; });
      sum.used += c != r->consumed_capacity.end() ? c->second.nanos : cap.value.nanos;
      if (c == r->consumed_capacity.end()) break;  // exclusively held: its whole capacity
    }
  }
  if (!allocated) return;
  for (const auto& cc : d.consumes_counters) {
    for (const auto& [counter, q] : cc.counters) {
      Sum& sum = counters[{s.driver + "/" + s.pool, cc.counter_set, counter}];
      sum.used += q.nanos;  // a shared device consumes its counters once
      sum.binary = sum.binary || IsBinary(q);
    }
  }
}

// A claim (never written anywhere) asking for `count` devices of class `cls`.
alloc::ResourceClaim ProbeClaim(const std::string& cls, int64_t count) {
  alloc::ResourceClaim c;
  c.namespace_name = "default";
  c.name = "kubectl-draco-probe";
  alloc::RequestSpec spec;
  spec.name = "probe";
  spec.device_class_name = cls;
  spec.allocation_mode = "ExactCount";
  spec.count = count;
  c.requests.push_back(alloc::DeviceRequest{"probe", spec, {}});
  return c;
}

// The largest ExactCount request of `cls` the allocator would still satisfy on `node`.
FitRow LargestFit(simulate::Simulation& sim, const std::string& cls, const alloc::Node& node,
                  int64_t upper) {
  FitRow row{cls, node.name, 0, ""};
  auto fits = [&](int64_t n) {
    alloc::ResourceClaim c = ProbeClaim(cls, n);
    alloc::SearchOutcome o =
        alloc::ComputeAllocateOnAnyNode(*sim.allocator, std::span(&node, 1), {&c});
    if (o.kind == alloc::Outcome::Kind::kError) row.error = o.message;
    return o.kind == alloc::Outcome::Kind::kAllocated;
  };
  int64_t lo = 0, hi = upper;  // fits(lo) holds; find the largest
  while (lo < hi && row.error.empty()) {
    int64_t mid = lo + (hi - lo + 1) / 2;
    fits(mid) ? lo = mid : hi = mid - 1;
  }
  row.largest = row.error.empty() ? lo : 0;
  return row;
}

// Whether any device on `node` passes the class's selectors (used or not): the allocator's funnel
// for a one-device probe. Rows of classes that have no device on a node are left out.
bool ClassHasDevicesOn(simulate::Simulation& sim, const std::string& cls, const alloc::Node& node) {
  alloc::ResourceClaim c = ProbeClaim(cls, 1);
  alloc::Explanation e = alloc::ComputeExplain(*sim.allocator, node, {&c});
  for (const auto& r : e.requests) {
    for (const auto& st : r.stages) {
      if (st.name == "after class selectors") return st.count > 0;
    }
  }
  return true;  // no funnel to tell: keep the row
}

}  // namespace

PoolsReport ComputePools(simulate::Simulation& sim, const PoolsFilter& filter) {
  const Holders held = AllocatedDevices(sim);
  std::map<std::tuple<std::string, std::string, std::string>, PoolAcc> pools;
  std::map<std::tuple<std::string, std::string, std::string>, Sum> counters;
  std::map<std::string, int64_t> free_on_node;  // node-local free devices
  int64_t free_shared = 0;                      // free devices not local to one node
  for (const alloc::ResourceSlice* s : CurrentSlices(sim)) {
    for (const auto& cs : s->shared_counters) {
      for (const auto& [counter, q] : cs.counters) {
        Sum& sum = counters[{s->driver + "/" + s->pool, cs.name, counter}];
        sum.total += q.nanos;
        sum.binary = sum.binary || IsBinary(q);
      }
    }
    for (const auto& d : s->devices) {
      std::string node = d.node_name.value_or(s->node_name.value_or(""));
      bool shown = (filter.driver.empty() || filter.driver == s->driver) &&
                   (filter.node.empty() || filter.node == node);
      PoolAcc scratch;
      PoolAcc& acc = shown ? pools[{s->driver, s->pool, node}] : scratch;
      acc.row.driver = s->driver;
      acc.row.pool = s->pool;
      acc.row.node = node;
      int64_t was_free = acc.row.free;
      AddDevice(*s, d, held, sim.in.rules, sim.features.device_taint_rules, acc, counters);
      if (acc.row.free > was_free) (node.empty() ? free_shared : free_on_node[node]) += 1;
    }
  }
  PoolsReport r;
  for (auto& [key, acc] : pools) {
    for (const auto& [name, sum] : acc.capacity) acc.row.capacity.push_back(ToUse(name, sum));
    r.pools.push_back(std::move(acc.row));
  }
  for (const auto& [key, sum] : counters) {
    const auto& [dp, set, counter] = key;
    std::string driver = dp.substr(0, dp.find('/')), pool = dp.substr(dp.find('/') + 1);
    if (!filter.driver.empty() && filter.driver != driver) continue;
    r.counters.push_back({driver, pool, ToUse(set + "/" + counter, sum)});
  }
  for (const auto& cls : sim.in.classes) {
    if (!filter.device_class.empty() && filter.device_class != cls.name) continue;
    for (const auto& n : sim.in.nodes) {
      if (!filter.node.empty() && filter.node != n.name) continue;
      auto it = free_on_node.find(n.name);
      int64_t upper = free_shared + (it == free_on_node.end() ? 0 : it->second);
      if (upper == 0 && it == free_on_node.end()) continue;  // no devices here at all
      FitRow row = LargestFit(sim, cls.name, n, upper);
      if (row.largest == 0 && row.error.empty() && !ClassHasDevicesOn(sim, cls.name, n)) continue;
      r.fits.push_back(std::move(row));
    }
  }
  return r;
}

void PrintPoolsText(const PoolsReport& r, bool wide, std::ostream& out) {
  auto table = [&](std::vector<std::vector<std::string>> rows) {
    std::vector<size_t> w;
    for (const auto& row : rows) {
      w.resize(std::max(w.size(), row.size()));
      for (size_t i = 0; i < row.size(); ++i) w[i] = std::max(w[i], row[i].size());
    }
    for (const auto& row : rows) {
      std::string line;
      for (size_t i = 0; i < row.size(); ++i) {
        line += row[i];
        if (i + 1 < row.size()) line += std::string(w[i] - row[i].size() + 3, ' ');
      }
      out << line << "\n";
    }
  };
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> head = {"DRIVER",    "POOL", "NODE",   "DEVICES",
                                   "ALLOCATED", "FREE", "TAINTED"};
  if (wide) head.push_back("CAPACITY USED/TOTAL");
  rows.push_back(head);
  for (const auto& p : r.pools) {
    std::vector<std::string> row = {p.driver,
                                    p.pool,
                                    p.node.empty() ? "<none>" : p.node,
                                    std::to_string(p.devices),
                                    std::to_string(p.allocated),
                                    std::to_string(p.free),
                                    std::to_string(p.tainted)};
    if (wide) {
      std::string caps;
      for (const auto& c : p.capacity) {
        caps += (caps.empty() ? "" : ", ") + c.name + " " + c.used + "/" + c.total;
      }
      row.push_back(caps.empty() ? "-" : caps);
    }
    rows.push_back(std::move(row));
  }
  if (r.pools.empty()) {
    out << "No device pools found.\n";
  } else {
    table(rows);
  }
  if (!r.counters.empty()) {
    out << "\n";
    rows = {{"DRIVER", "POOL", "COUNTER", "USED", "TOTAL", "FREE"}};
    for (const auto& c : r.counters) {
      rows.push_back({c.driver, c.pool, c.use.name, c.use.used, c.use.total, c.use.free});
    }
    table(rows);
  }
  if (!r.fits.empty()) {
    out << "\n";
    rows = {{"CLASS", "NODE", "LARGEST REQUEST THAT FITS"}};
    for (const auto& f : r.fits) {
      std::string v = !f.error.empty() ? "error: " + f.error
                      : f.largest == 1 ? "1 device"
                                       : std::to_string(f.largest) + " devices";
      rows.push_back({f.device_class, f.node, v});
    }
    table(rows);
  }
}

std::string PoolsToJson(const PoolsReport& r) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  auto use = [&](const AmountUse& u) {
    w.StartObject();
    w.Key("name");
    w.String(u.name.c_str());
    w.Key("used");
    w.String(u.used.c_str());
    w.Key("total");
    w.String(u.total.c_str());
    w.Key("free");
    w.String(u.free.c_str());
    w.EndObject();
  };
  w.StartObject();
  w.Key("pools");
  w.StartArray();
  for (const auto& p : r.pools) {
    w.StartObject();
    for (const auto& [k, v] :
         {std::pair{"driver", &p.driver}, {"pool", &p.pool}, {"node", &p.node}}) {
      w.Key(k);
      w.String(v->c_str());
    }
    for (const auto& [k, v] : {std::pair{"devices", p.devices},
                               {"allocated", p.allocated},
                               {"free", p.free},
                               {"tainted", p.tainted}}) {
      w.Key(k);
      w.Int64(v);
    }
    w.Key("capacity");
    w.StartArray();
    for (const auto& c : p.capacity) use(c);
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.Key("counters");
  w.StartArray();
  for (const auto& c : r.counters) {
    w.StartObject();
    w.Key("driver");
    w.String(c.driver.c_str());
    w.Key("pool");
    w.String(c.pool.c_str());
    w.Key("counter");
    use(c.use);
    w.EndObject();
  }
  w.EndArray();
  w.Key("fragmentation");
  w.StartArray();
  for (const auto& f : r.fits) {
    w.StartObject();
    w.Key("deviceClass");
    w.String(f.device_class.c_str());
    w.Key("node");
    w.String(f.node.c_str());
    w.Key("largestRequest");
    w.Int64(f.largest);
    if (!f.error.empty()) {
      w.Key("error");
      w.String(f.error.c_str());
    }
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return buf.GetString();
}

}  // namespace draco::kubectl
