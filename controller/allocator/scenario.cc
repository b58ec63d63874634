#include "controller/allocator/scenario.h"

#include <array>
#include <cstdio>
#include <functional>
#include <memory>

#include <rapidjson/document.h>

#include "controller/allocator/compute_api.h"
#include "controller/allocator/from_api.h"
#include "controller/allocator/scenario_json.h"

namespace draco::alloc {
namespace {

// The API objects of list `name` (null entries skipped), decoded with api::Decode.
template <typename A, typename T, typename F>
Status DecodeList(const rapidjson::Value& doc, const char* name, F wrap, std::vector<T>* out) {
  auto it = doc.FindMember(name);
  if (it == doc.MemberEnd() || !it->value.IsArray()) return OkStatus();
  for (const auto& e : it->value.GetArray()) {
    if (e.IsNull()) continue;
    auto v = DecodeApiValue<A>(e);
    if (!v.ok()) return v.status().WithPrefix(name);
    out->push_back(wrap(std::move(*v)));
  }
  return OkStatus();
}

template <typename A>
A Same(A a) {
  return a;
}

void CanonicalizeShares(std::vector<api::AllocationResult>& results, int* counter) {
  for (auto& r : results) {
    for (auto& d : r.devices.results) {
      if (!d.share_id) continue;
      std::array<char, 64> buf{};
      std::snprintf(buf.data(), buf.size(), "00000000-0000-4000-8000-%012d", ++*counter);
      d.share_id = buf.data();
    }
  }
}

void WriteId(JsonWriter& w, const std::string& id) {
  w.Key("id");
  w.String(id.c_str(), static_cast<rapidjson::SizeType>(id.size()));
}

std::string ErrorLine(const std::string& id, const char* key, const std::string& msg) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  WriteId(w, id);
  w.Key(key);
  w.String(msg.c_str(), static_cast<rapidjson::SizeType>(msg.size()));
  w.EndObject();
  return buf.GetString();
}

}  // namespace

StatusOr<Scenario> ParseScenario(std::string_view line) {
  rapidjson::Document doc;
  doc.Parse(line.data(), line.size());
  if (doc.HasParseError() || !doc.IsObject()) return InvalidArgumentError("invalid JSON");
  Scenario s;
  if (auto it = doc.FindMember("id"); it != doc.MemberEnd() && it->value.IsString()) {
    s.id = it->value.GetString();
  }
  if (auto it = doc.FindMember("mode"); it != doc.MemberEnd() && it->value.IsString()) {
    s.mode = it->value.GetString();
  }
  if (auto it = doc.FindMember("node"); it != doc.MemberEnd() && it->value.IsObject()) {
    auto n = DecodeApiValue<api::Node>(it->value);
    if (!n.ok()) return n.status();
    s.node = std::move(*n);
  }
  auto shared = [](api::ResourceSlice sl) {
    return std::make_shared<const api::ResourceSlice>(std::move(sl));
  };
  Status st = DecodeList<api::Node>(doc, "nodes", Same<api::Node>, &s.nodes);
  if (st.ok()) {
    st = DecodeList<api::DeviceClass>(doc, "classes", Same<api::DeviceClass>, &s.classes);
  }
  if (st.ok()) st = DecodeList<api::ResourceSlice>(doc, "slices", shared, &s.slices);
  if (st.ok()) {
    st = DecodeList<api::ResourceClaim>(doc, "allocatedClaims", Same<api::ResourceClaim>,
                                        &s.allocated_claims);
  }
  if (st.ok()) {
    st = DecodeList<api::ResourceClaim>(doc, "claims", Same<api::ResourceClaim>, &s.claims);
  }
  if (st.ok()) {
    st = DecodeList<api::DeviceTaintRule>(doc, "deviceTaintRules", Same<api::DeviceTaintRule>,
                                          &s.taint_rules);
  }
  if (!st.ok()) return st;
  if (auto it = doc.FindMember("features"); it != doc.MemberEnd() && it->value.IsObject()) {
    s.features = DecodeFeatures(it->value);
  }
  return s;
}

std::string RunScenario(const Scenario& s, const RunOptions& opts) {
  Allocator::Config cfg;
  cfg.features = s.features;
  cfg.selectors = opts.selectors;
  cfg.prune = opts.prune;
  cfg.timeout = opts.timeout;
  cfg.deterministic_share_ids = true;
  // Both ways of handing over allocated claims are exercised (the public one, read in Create,
  // and the allocator-internal shared one, read lazily per pool): they must give identical
  // results.
  StatusOr<std::unique_ptr<Allocator>> alloc = UnknownError("");
  std::vector<const api::ResourceClaim*> allocated;
  for (const auto& c : s.allocated_claims) allocated.push_back(&c);
  if (std::hash<std::string>{}(s.id) % 2 == 0) {
    alloc = Allocator::Create(cfg, s.classes, s.slices, s.taint_rules, allocated);
  } else if (auto compute = ToComputeConfig(cfg); !compute.ok()) {
    alloc = compute.status();
  } else {
    auto shared = std::make_shared<std::vector<ResourceClaim>>();
    for (const auto& c : s.allocated_claims) shared->push_back(ToAllocClaim(c));
    alloc = CreateAllocator(std::move(*compute),
                            Snapshot::Build(cfg.features, s.classes, s.slices, s.taint_rules),
                            std::shared_ptr<const std::vector<ResourceClaim>>(std::move(shared)));
  }
  if (!alloc.ok()) return ErrorLine(s.id, "error", alloc.status().message());
  std::vector<const api::ResourceClaim*> claims;
  for (const auto& c : s.claims) claims.push_back(&c);

  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  if (s.mode == "fillUp") {
    const api::Node single = s.node.value_or(api::Node{});
    std::vector<const api::Node*> nodes;
    for (const auto& n : s.nodes) nodes.push_back(&n);
    if (nodes.empty()) nodes.push_back(&single);
    int shares = 0;
    w.StartObject();
    WriteId(w, s.id);
    w.Key("fillUp");
    w.StartArray();
    for (size_t i = 0; i < claims.size(); ++i) {
      Outcome o = (*alloc)->AllocateOnAnyNode(nodes, {claims[i]}, i % nodes.size());
      if (o.kind == Outcome::Kind::kError || o.kind == Outcome::Kind::kTimeout) {
        return ErrorLine(s.id, "error", o.message);
      }
      w.StartObject();
      if (o.kind == Outcome::Kind::kAllocated) {
        (*alloc)->Commit(*claims[i], o.results[0]);
        CanonicalizeShares(o.results, &shares);
        w.Key("node");
        w.String(o.node.c_str());
        w.Key("result");
        EncodeAllocationResult(o.results[0], w);
      } else {
        w.Key("unsatisfiable");
        w.Bool(true);
      }
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    return buf.GetString();
  }
  if (!s.mode.empty() && s.mode != "single") {
    return ErrorLine(s.id, "error", "unknown mode \"" + s.mode + "\"");
  }
  Outcome o = (*alloc)->Allocate(s.node.value_or(api::Node{}), claims);
  w.StartObject();
  WriteId(w, s.id);
  switch (o.kind) {
    case Outcome::Kind::kAllocated: {
      int shares = 0;
      CanonicalizeShares(o.results, &shares);
      w.Key("results");
      w.StartArray();
      for (const auto& r : o.results) EncodeAllocationResult(r, w);
      w.EndArray();
      break;
    }
    case Outcome::Kind::kUnsatisfiable:
      w.Key("unsatisfiable");
      w.Bool(true);
      if (!o.message.empty()) {
        w.Key("reason");
        w.String(o.message.c_str());
      }
      break;
    case Outcome::Kind::kTimeout:
      w.Key("timeout");
      w.Bool(true);
      w.Key("error");
      w.String(o.message.c_str());
      break;
    case Outcome::Kind::kError:
      w.Key("error");
      w.String(o.message.c_str());
      break;
  }
  w.EndObject();
  return buf.GetString();
}

std::string RunScenarioLine(std::string_view line, const RunOptions& opts) {
  auto s = ParseScenario(line);
  if (!s.ok()) {
    std::string id;
    rapidjson::Document doc;
    doc.Parse(line.data(), line.size());
    if (!doc.HasParseError() && doc.IsObject()) {
      auto it = doc.FindMember("id");
      if (it != doc.MemberEnd() && it->value.IsString()) id = it->value.GetString();
    }
    return ErrorLine(id, "inputError", s.status().message());
  }
  return RunScenario(*s, opts);
}

}  // namespace draco::alloc
