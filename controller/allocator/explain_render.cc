// Rendering of explanations as text and JSON (explain.h).
#include <sstream>

#include "controller/allocator/explain.h"

namespace draco::alloc {
namespace {

void Str(JsonWriter& w, const std::string& s) {
  w.String(s.c_str(), static_cast<rapidjson::SizeType>(s.size()));
}

void KeyStr(JsonWriter& w, const char* key, const std::string& s) {
  w.Key(key);
  Str(w, s);
}

std::string_view ConflictKindName(Conflict::Kind k) {
  switch (k) {
    case Conflict::Kind::kDevices:
      return "devices";
    case Conflict::Kind::kCounter:
      return "counter";
    case Conflict::Kind::kMatchAttribute:
      return "matchAttribute";
    case Conflict::Kind::kDistinctAttribute:
      return "distinctAttribute";
    case Conflict::Kind::kResultLimit:
      return "resultLimit";
    case Conflict::Kind::kSearch:
      break;
  }
  return "search";
}

void EncodeCapacity(const DeviceCapacityShortfall& d, JsonWriter& w) {
  w.StartObject();
  KeyStr(w, "pool", d.pool);
  KeyStr(w, "device", d.device);
  w.Key("capacities");
  w.StartArray();
  for (const CapacityShortfall& c : d.capacities) {
    w.StartObject();
    KeyStr(w, "name", c.name);
    KeyStr(w, "requested", c.requested);
    if (!c.asked.empty()) KeyStr(w, "asked", c.asked);
    if (c.missing) {
      w.Key("missing");
      w.Bool(true);
    } else {
      KeyStr(w, "remaining", c.remaining);
      KeyStr(w, "total", c.total);
    }
    if (c.policy) {
      w.Key("violatesRequestPolicy");
      w.Bool(true);
    }
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

void EncodeCounter(const CounterShortfall& s, JsonWriter& w) {
  w.StartObject();
  KeyStr(w, "pool", s.pool);
  KeyStr(w, "counterSet", s.counter_set);
  KeyStr(w, "counter", s.counter);
  w.Key("devices");
  w.Int64(s.devices);
  if (!s.device.empty()) KeyStr(w, "device", s.device);
  KeyStr(w, "needed", s.needed);
  KeyStr(w, "left", s.left);
  KeyStr(w, "total", s.total);
  w.Key("holders");
  w.StartArray();
  for (const CounterHolder& h : s.holders) {
    w.StartObject();
    KeyStr(w, "holder", h.holder);
    KeyStr(w, "amount", h.amount);
    w.EndObject();
  }
  w.EndArray();
  w.Key("moreHolders");
  w.Int64(s.more_holders);
  w.EndObject();
}

void EncodeConflict(const Conflict& c, JsonWriter& w) {
  w.StartObject();
  KeyStr(w, "kind", std::string(ConflictKindName(c.kind)));
  w.Key("requests");
  w.StartArray();
  for (const auto& r : c.requests) Str(w, r);
  w.EndArray();
  if (!c.attribute.empty()) KeyStr(w, "attribute", c.attribute);
  if (c.needed > 0) {
    w.Key("needed");
    w.Int64(c.needed);
  }
  if (c.available > 0 || c.kind == Conflict::Kind::kDevices) {
    w.Key("available");
    w.Int64(c.available);
  }
  if (c.counter) {
    w.Key("counter");
    EncodeCounter(*c.counter, w);
  }
  KeyStr(w, "text", c.text);
  w.EndObject();
}

}  // namespace

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
  // Conflicts beyond the one each verdict quotes.
  for (const Conflict& c : e.conflicts) {
    bool quoted = false;
    for (const auto& r : e.requests) quoted = quoted || r.verdict.find(c.text) != std::string::npos;
    if (!quoted) os << "  also: " << c.text << "\n";
  }
  return os.str();
}

void EncodeExplanation(const Explanation& e, JsonWriter& w) {
  auto str = [&](const std::string& s) {
    w.String(s.c_str(), static_cast<rapidjson::SizeType>(s.size()));
  };
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
    if (!r.capacity_shortfalls.empty()) {
      w.Key("capacityShortfalls");
      w.StartArray();
      for (const auto& d : r.capacity_shortfalls) EncodeCapacity(d, w);
      w.EndArray();
      w.Key("capacityShortfallsMore");
      w.Int64(r.capacity_more);
    }
    if (!r.counter_shortfalls.empty()) {
      w.Key("counterShortfalls");
      w.StartArray();
      for (const auto& s : r.counter_shortfalls) EncodeCounter(s, w);
      w.EndArray();
      w.Key("counterShortfallsMore");
      w.Int64(r.counters_more);
    }
    w.Key("verdict");
    str(r.verdict);
    w.EndObject();
  }
  w.EndArray();
  if (!e.conflicts.empty()) {
    w.Key("conflicts");
    w.StartArray();
    for (const auto& c : e.conflicts) EncodeConflict(c, w);
    w.EndArray();
  }
  w.EndObject();
}

std::string ExplanationToJson(const Explanation& e) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  EncodeExplanation(e, w);
  return {buf.GetString(), buf.GetSize()};
}

}  // namespace draco::alloc
