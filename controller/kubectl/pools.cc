#include "controller/kubectl/pools.h"

#include <algorithm>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "controller/api/quantity.h"

namespace draco::kubectl {
namespace {

using api::Quantity;

struct Sum {
  Quantity used, total;
  bool binary = false;
};

// `q` in canonical form, in the binary or decimal SI format (as the allocator prints amounts).
std::string Format(const Quantity& q, bool binary) {
  const int64_t units = q.Value();
  if (q == Quantity::FromInt64(units)) {
    return Quantity::FromInt64(units,
                               binary ? Quantity::Format::kBinarySI : Quantity::Format::kDecimalSI)
        .ToString();
  }
  // Fractional: the quantity parser canonicalizes "<n>n" ("1500000000n" -> "1500m").
  auto nanos = Quantity::Parse(std::to_string(q.ScaledValue(-9)) + "n");
  return nanos.ok() ? nanos->ToString() : q.ToString();
}

AmountUse ToUse(const std::string& name, const Sum& s) {
  return {name, Format(s.used, s.binary), Format(s.total, s.binary),
          Format(s.total.Sub(s.used), s.binary)};
}

bool IsBinary(const Quantity& q) { return q.format() == Quantity::Format::kBinarySI; }

// driver/pool/device -> the allocation results that hold it (admin access excluded).
using Holders = std::map<std::tuple<std::string, std::string, std::string>,
                         std::vector<const api::DeviceRequestAllocationResult*>>;

Holders AllocatedDevices(const simulate::Simulation& sim) {
  Holders h;
  for (const auto& c : sim.claims) {
    if (!c.status.allocation) continue;
    for (const auto& r : c.status.allocation->devices.results) {
      if (r.admin_access.value_or(false)) continue;
      h[{r.driver, r.pool, r.device}].push_back(&r);
    }
  }
  return h;
}

// A taint with an effect (not "None") on the device, or from a DeviceTaintRule when the allocator
// applies those rules (the same selection as the allocator's: a rule without a device selector
// selects nothing, each field given must be equal).
bool Tainted(const api::ResourceSliceSpec& s, const api::Device& d,
             const std::vector<api::DeviceTaintRule>& rules, bool rules_apply) {
  for (const auto& t : d.taints) {
    if (t.effect != "None") return true;
  }
  if (!rules_apply) return false;
  return std::any_of(rules.begin(), rules.end(), [&](const api::DeviceTaintRule& r) {
    const auto& sel = r.spec.device_selector;
    return r.spec.taint.effect != "None" && sel && (!sel->driver || *sel->driver == s.driver) &&
           (!sel->pool || *sel->pool == s.pool.name) && (!sel->device || *sel->device == d.name);
  });
}

// The newest generation of each pool, as the allocator sees pools.
std::vector<const api::ResourceSliceSpec*> CurrentSlices(const simulate::Simulation& sim) {
  std::map<std::pair<std::string, std::string>, int64_t> newest;
  for (const auto& s : sim.in.slices) {
    const api::ResourceSliceSpec& spec = s->spec;
    auto [it, fresh] = newest.try_emplace({spec.driver, spec.pool.name}, spec.pool.generation);
    if (!fresh) it->second = std::max(it->second, spec.pool.generation);
  }
  std::vector<const api::ResourceSliceSpec*> out;
  for (const auto& s : sim.in.slices) {
    if (s->spec.pool.generation == newest[{s->spec.driver, s->spec.pool.name}]) {
      out.push_back(&s->spec);
    }
  }
  return out;
}

struct PoolAcc {
  PoolRow row;
  std::map<std::string, Sum> capacity;
};

void AddDevice(const api::ResourceSliceSpec& s, const api::Device& d, const Holders& held,
               const std::vector<api::DeviceTaintRule>& rules, bool rules_apply, PoolAcc& acc,
               std::map<std::tuple<std::string, std::string, std::string>, Sum>& counters) {
  ++acc.row.devices;
  auto h = held.find({s.driver, s.pool.name, d.name});
  bool allocated = h != held.end();
  allocated ? ++acc.row.allocated : ++acc.row.free;
  if (Tainted(s, d, rules, rules_apply)) ++acc.row.tainted;
  for (const auto& [name, cap] : d.capacity) {
    Sum& sum = acc.capacity[name];
    sum.total = sum.total.Add(cap.value);
    sum.binary = sum.binary || IsBinary(cap.value);
    if (!allocated) continue;
    for (const auto* r : h->second) {
      auto c = r->consumed_capacity.find(name);
      sum.used = sum.used.Add(c != r->consumed_capacity.end() ? c->second : cap.value);
      if (c == r->consumed_capacity.end()) break;  // exclusively held: its whole capacity
    }
  }
  if (!allocated) return;
  for (const auto& cc : d.consumes_counters) {
    for (const auto& [counter, q] : cc.counters) {
      Sum& sum = counters[{s.driver + "/" + s.pool.name, cc.counter_set, counter}];
      sum.used = sum.used.Add(q.value);  // a shared device consumes its counters once
      sum.binary = sum.binary || IsBinary(q.value);
    }
  }
}

// A claim (never written anywhere) asking for `count` devices of class `cls`.
api::ResourceClaim ProbeClaim(const std::string& cls, int64_t count) {
  api::ResourceClaim c;
  c.metadata.namespace_ = "default";
  c.metadata.name = "kubectl-draco-probe";
  api::DeviceRequest r;
  r.name = "probe";
  r.exactly.emplace();
  r.exactly->device_class_name = cls;
  r.exactly->allocation_mode = "ExactCount";
  r.exactly->count = count;
  c.spec.devices.requests.push_back(std::move(r));
  return c;
}

// The largest ExactCount request of `cls` the allocator would still satisfy on `node`.
FitRow LargestFit(simulate::Simulation& sim, const std::string& cls, const api::Node& node,
                  int64_t upper) {
  FitRow row{cls, node.metadata.name, 0, ""};
  auto fits = [&](int64_t n) {
    api::ResourceClaim c = ProbeClaim(cls, n);
    alloc::Outcome o = sim.allocator->AllocateOnAnyNode({&node}, {&c});
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
bool ClassHasDevicesOn(simulate::Simulation& sim, const std::string& cls, const api::Node& node) {
  api::ResourceClaim c = ProbeClaim(cls, 1);
  alloc::Explanation e = sim.allocator->Explain(node, {&c});
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
  for (const api::ResourceSliceSpec* s : CurrentSlices(sim)) {
    for (const auto& cs : s->shared_counters) {
      for (const auto& [counter, q] : cs.counters) {
        Sum& sum = counters[{s->driver + "/" + s->pool.name, cs.name, counter}];
        sum.total = sum.total.Add(q.value);
        sum.binary = sum.binary || IsBinary(q.value);
      }
    }
    for (const auto& d : s->devices) {
      std::string node = d.node_name.value_or(s->node_name.value_or(""));
      bool shown = (filter.driver.empty() || filter.driver == s->driver) &&
                   (filter.node.empty() || filter.node == node);
      PoolAcc scratch;
      PoolAcc& acc = shown ? pools[{s->driver, s->pool.name, node}] : scratch;
      acc.row.driver = s->driver;
      acc.row.pool = s->pool.name;
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
    std::string counter_name = set;
    counter_name.append("/").append(counter);
    r.counters.push_back({driver, pool, ToUse(counter_name, sum)});
  }
  for (const auto& c : sim.in.classes) {
    const std::string& cls = c.metadata.name;
    if (!filter.device_class.empty() && filter.device_class != cls) continue;
    for (const auto& node : sim.in.cluster.nodes) {
      const api::Node& n = *node;
      if (!filter.node.empty() && filter.node != n.metadata.name) continue;
      auto it = free_on_node.find(n.metadata.name);
      int64_t upper = free_shared + (it == free_on_node.end() ? 0 : it->second);
      if (upper == 0 && it == free_on_node.end()) continue;  // no devices here at all
      FitRow row = LargestFit(sim, cls, n, upper);
      if (row.largest == 0 && row.error.empty() && !ClassHasDevicesOn(sim, cls, n)) continue;
      r.fits.push_back(std::move(row));
    }
  }
  return r;
}

void PrintPoolsText(const PoolsReport& r, bool wide, std::ostream& out) {
  auto table = [&](const std::vector<std::vector<std::string>>& rows) {
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
  if (wide) head.emplace_back("CAPACITY USED/TOTAL");
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
