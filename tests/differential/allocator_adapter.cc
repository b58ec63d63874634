// allocator_adapter: draco's allocator behind upstream's internal Allocator interface, for
// upstream's own allocator test table (tests/differential/upstream_suite.sh drives it through the
// Go adapter package in tests/differential/upstream_suite/).
//
// Protocol: one JSON object per line on stdin, one per line on stdout, in order.
//   in:  {"id": ..., "node": <v1 Node>, "classes": [...], "slices": [...],
//         "allocatedClaims": [<claims whose status.allocation carries the allocated state>],
//         "claims": [<claims to allocate, as given: no API-server defaulting>],
//         "features": {<scenario_json.h DecodeFeatures keys, every key set>}, "timeoutMs": N}
//   out: {"id": ..., "steps": N, "results": [<AllocationResult per claim>]}
//        | {"id": ..., "steps": N, "unsatisfiable": true[, "reason": "..."]}
//        | {"id": ..., "steps": N, "error": "..."} | {"id": ..., "timeout": true, "error": "..."}
//        | {"id": ..., "inputError": "..."}
// Allocation is what upstream's Allocate does (no scheduler PreFilter). Each call runs twice:
// with pruning (draco's production search) and without (upstream's exact search order, whose
// allocateOne count is `steps`); differing outcomes are reported as an error, so the suite checks
// both.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "controller/allocator/allocator.h"
#include "controller/allocator/scenario_json.h"

namespace draco::alloc {
namespace {

struct Input {
  std::string id;
  api::Node node;
  std::vector<api::DeviceClass> classes;
  std::vector<std::shared_ptr<const api::ResourceSlice>> slices;
  std::vector<api::ResourceClaim> allocated;
  std::vector<api::ResourceClaim> claims;
  Features features;
  int64_t timeout_ms = 0;
};

// The API objects of list `name`, decoded with api::Decode.
template <typename A>
Status DecodeList(const rapidjson::Value& doc, const char* name, std::vector<A>* out) {
  auto it = doc.FindMember(name);
  if (it == doc.MemberEnd() || !it->value.IsArray()) return OkStatus();
  for (const auto& e : it->value.GetArray()) {
    auto v = DecodeApiValue<A>(e);
    if (!v.ok()) return v.status().WithPrefix(name);
    out->push_back(std::move(*v));
  }
  return OkStatus();
}

StatusOr<Input> Parse(const rapidjson::Document& doc) {
  Input in;
  if (auto it = doc.FindMember("id"); it != doc.MemberEnd() && it->value.IsString()) {
    in.id = it->value.GetString();
  }
  if (auto it = doc.FindMember("node"); it != doc.MemberEnd() && it->value.IsObject()) {
    auto n = DecodeApiValue<api::Node>(it->value);
    if (!n.ok()) return n.status().WithPrefix("node");
    in.node = std::move(*n);
  }
  std::vector<api::ResourceSlice> slices;
  Status st = DecodeList(doc, "classes", &in.classes);
  if (st.ok()) st = DecodeList(doc, "slices", &slices);
  if (st.ok()) st = DecodeList(doc, "allocatedClaims", &in.allocated);
  if (st.ok()) st = DecodeList(doc, "claims", &in.claims);
  if (!st.ok()) return st;
  for (auto& sl : slices)
    in.slices.push_back(std::make_shared<const api::ResourceSlice>(std::move(sl)));
  auto f = doc.FindMember("features");
  if (f == doc.MemberEnd() || !f->value.IsObject()) {
    return InvalidArgumentError("features: missing");
  }
  in.features = DecodeFeatures(f->value);
  if (auto it = doc.FindMember("timeoutMs"); it != doc.MemberEnd() && it->value.IsInt64()) {
    in.timeout_ms = it->value.GetInt64();
  }
  return in;
}

// Runs one Allocate call on a fresh allocator; a Create failure is an error outcome.
Outcome RunOnce(const Input& in, const std::shared_ptr<SelectorCompiler>& selectors, bool prune) {
  Allocator::Config cfg;
  cfg.features = in.features;
  cfg.selectors = selectors;
  cfg.prune = prune;
  cfg.scheduler_prefilter = false;
  cfg.deterministic_share_ids = true;
  cfg.timeout = std::chrono::milliseconds(in.timeout_ms);
  // Claims as given: no API-server defaulting (upstream's tests hand over undefaulted claims).
  cfg.default_claims = false;
  std::vector<const api::ResourceClaim*> allocated;
  for (const auto& c : in.allocated) allocated.push_back(&c);
  auto alloc = Allocator::Create(cfg, in.classes, in.slices, {}, allocated);
  if (!alloc.ok()) return Outcome{Outcome::Kind::kError, {}, alloc.status().message(), "", 0};
  std::vector<const api::ResourceClaim*> claims;
  for (const auto& c : in.claims) claims.push_back(&c);
  return (*alloc)->Allocate(in.node, claims);
}

std::string ResultsJson(const Outcome& o) {
  std::string s;
  for (const auto& r : o.results) s += AllocationResultToJson(r) + "\n";
  return s;
}

void WriteStr(JsonWriter& w, const std::string& s) {
  w.String(s.data(), rapidjson::SizeType(s.size()));
}

std::string Handle(const std::string& line, const std::shared_ptr<SelectorCompiler>& selectors) {
  rapidjson::Document doc;
  doc.Parse(line.data(), line.size());
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  if (doc.HasParseError() || !doc.IsObject()) {
    w.Key("id");
    w.String("");
    w.Key("inputError");
    w.String("invalid JSON");
    w.EndObject();
    return buf.GetString();
  }
  auto in = Parse(doc);
  if (!in.ok()) {
    w.Key("id");
    w.String("");
    w.Key("inputError");
    WriteStr(w, in.status().message());
    w.EndObject();
    return buf.GetString();
  }
  Outcome exact = RunOnce(*in, selectors, /*prune=*/false);
  Outcome pruned = RunOnce(*in, selectors, /*prune=*/true);
  w.Key("id");
  WriteStr(w, in->id);
  w.Key("steps");
  w.Int64(exact.search_steps);
  const bool timed_out =
      exact.kind == Outcome::Kind::kTimeout || pruned.kind == Outcome::Kind::kTimeout;
  if (!timed_out && (exact.kind != pruned.kind || exact.message != pruned.message ||
                     ResultsJson(exact) != ResultsJson(pruned))) {
    w.Key("error");
    WriteStr(w, "pruned search disagrees with the exact search: exact " +
                    std::string(OutcomeKindName(exact.kind)) + " \"" + exact.message +
                    "\", pruned " + std::string(OutcomeKindName(pruned.kind)) + " \"" +
                    pruned.message + "\"");
    w.EndObject();
    return buf.GetString();
  }
  const Outcome& o = exact.kind == Outcome::Kind::kTimeout ? exact : pruned;
  switch (timed_out ? Outcome::Kind::kTimeout : o.kind) {
    case Outcome::Kind::kAllocated:
      w.Key("results");
      w.StartArray();
      for (const auto& r : o.results) EncodeAllocationResult(r, w);
      w.EndArray();
      break;
    case Outcome::Kind::kUnsatisfiable:
      w.Key("unsatisfiable");
      w.Bool(true);
      if (!o.message.empty()) {
        w.Key("reason");
        WriteStr(w, o.message);
      }
      break;
    case Outcome::Kind::kTimeout:
      w.Key("timeout");
      w.Bool(true);
      w.Key("error");
      WriteStr(w, exact.kind == Outcome::Kind::kTimeout ? exact.message : pruned.message);
      break;
    case Outcome::Kind::kError:
      w.Key("error");
      WriteStr(w, o.message);
      break;
  }
  w.EndObject();
  return buf.GetString();
}

}  // namespace
}  // namespace draco::alloc

int main() {
  std::shared_ptr<draco::alloc::SelectorCompiler> selectors =
      draco::alloc::NewCelSelectorCompiler();
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    std::cout << draco::alloc::Handle(line, selectors) << std::endl;  // flush: a peer waits
  }
  return 0;
}
