#include "controller/allocator/scenario.h"

#include <cstdio>
#include <functional>
#include <memory>

#include <rapidjson/document.h>

#include "controller/allocator/from_api.h"
#include "controller/allocator/scenario_json.h"

namespace draco::alloc {
namespace {

// The API objects of list `name` (null entries skipped), converted with `convert` (from_api.h).
template <typename A, typename T, typename F>
Status DecodeList(const rapidjson::Value& doc, const char* name, F convert, std::vector<T>* out) {
  auto it = doc.FindMember(name);
  if (it == doc.MemberEnd() || !it->value.IsArray()) return OkStatus();
  for (const auto& e : it->value.GetArray()) {
    if (e.IsNull()) continue;
    auto v = DecodeApiValue<A>(e);
    if (!v.ok()) return v.status().WithPrefix(name);
    out->push_back(convert(*v));
  }
  return OkStatus();
}

void CanonicalizeShares(std::vector<AllocationResult>& results, int* counter) {
  for (auto& r : results) {
    for (auto& d : r.results) {
      if (!d.share_id) continue;
      char buf[64];
      std::snprintf(buf, sizeof(buf), "00000000-0000-4000-8000-%012d", ++*counter);
      d.share_id = buf;
    }
  }
}

void WriteId(JsonWriter& w, const std::string& id) {
  w.Key("id");
  w.String(id.c_str(), rapidjson::SizeType(id.size()));
}

std::string ErrorLine(const std::string& id, const char* key, const std::string& msg) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  WriteId(w, id);
  w.Key(key);
  w.String(msg.c_str(), rapidjson::SizeType(msg.size()));
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
    s.node = ToAllocNode(*n);
  }
  // ToAllocClaim applies DefaultClaim to claims and allocated claims.
  Status st = DecodeList<api::Node>(doc, "nodes", ToAllocNode, &s.nodes);
  if (st.ok()) st = DecodeList<api::DeviceClass>(doc, "classes", ToAllocClass, &s.classes);
  if (st.ok()) st = DecodeList<api::ResourceSlice>(doc, "slices", ToAllocSlice, &s.slices);
  if (st.ok()) {
    st = DecodeList<api::ResourceClaim>(doc, "allocatedClaims", ToAllocClaim, &s.allocated_claims);
  }
  if (st.ok()) st = DecodeList<api::ResourceClaim>(doc, "claims", ToAllocClaim, &s.claims);
  if (st.ok()) {
    st =
        DecodeList<api::DeviceTaintRule>(doc, "deviceTaintRules", ToAllocTaintRule, &s.taint_rules);
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
  // Both ways of handing over slices and allocated claims are exercised (the copying one and the
  // shared one, which reads claims lazily per pool): they must give identical results.
  StatusOr<std::unique_ptr<Allocator>> alloc = UnknownError("");
  if (std::hash<std::string>{}(s.id) % 2 == 0) {
    alloc = Allocator::Create(cfg, s.classes, s.slices, s.taint_rules, s.allocated_claims);
  } else {
    std::vector<std::shared_ptr<const ResourceSlice>> slices;
    for (const auto& sl : s.slices) slices.push_back(std::make_shared<const ResourceSlice>(sl));
    alloc =
        Allocator::Create(cfg, s.classes, std::move(slices), s.taint_rules,
                          std::make_shared<const std::vector<ResourceClaim>>(s.allocated_claims));
  }
  if (!alloc.ok()) return ErrorLine(s.id, "error", alloc.status().message());
  std::vector<const ResourceClaim*> claims;
  for (const auto& c : s.claims) claims.push_back(&c);

  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  if (s.mode == "fillUp") {
    std::vector<Node> nodes = s.nodes;
    if (nodes.empty()) nodes.push_back(s.node.value_or(Node{}));
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
        CanonicalizeShares(o.results, &shares);
        (*alloc)->Commit(o.results[0]);
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
  Outcome o = (*alloc)->Allocate(s.node.value_or(Node{}), claims);
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
