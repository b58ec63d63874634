#include "controller/simulate/explain_pod.h"

#include <algorithm>
#include <sstream>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <yaml-cpp/yaml.h>

#include "controller/allocator/explain.h"
#include "controller/api/codec.h"

namespace draco::simulate {
namespace {

const api::ResourceClaim* FindClaim(const Simulation& sim, const std::string& key) {
  for (const auto& c : sim.claims) {
    if (c.metadata.namespace_ + "/" + c.metadata.name == key) return &c;
  }
  return nullptr;
}

std::string PodLine(const api::Pod& p) {
  std::string s = "pod " + p.metadata.namespace_ + "/" + p.metadata.name + ": " +
                  (p.status.phase.empty() ? "Pending" : p.status.phase);
  s += p.spec.node_name.empty() ? ", not on a node yet" : ", on node " + p.spec.node_name;
  if (!p.spec.scheduling_gates.empty()) {
    s += ", scheduling gates:";
    for (const auto& g : p.spec.scheduling_gates) s += " " + g.name;
  }
  return s;
}

std::string ClaimLine(const api::ResourceClaim& c) {
  std::string s = "claim " + c.metadata.namespace_ + "/" + c.metadata.name;
  if (auto it = c.metadata.annotations.find("resource.kubernetes.io/pod-claim-name");
      it != c.metadata.annotations.end()) {
    s += " (pod claim " + it->second + ")";
  }
  if (!c.status.allocation) return s + ": PENDING";
  std::string node = SelectedNode(*c.status.allocation);
  s += ": allocated" + (node.empty() ? std::string() : " on node " + node);
  if (!c.status.reserved_for.empty()) {
    s += ", reserved for";
    for (const auto& r : c.status.reserved_for) s += " " + r.name;
  }
  return s;
}

void WriteJson(const Simulation& sim, const Group* g,
               const std::vector<const api::ResourceClaim*>& claims, const GroupOutcome& go,
               const std::vector<std::string>& fits, std::string* json) {
  rapidjson::StringBuffer buf;
  alloc::JsonWriter w(buf);
  w.StartObject();
  if (g && g->pod >= 0) {
    const api::Pod& p = *sim.in.pods[static_cast<size_t>(g->pod)];
    w.Key("pod");
    w.String((p.metadata.namespace_ + "/" + p.metadata.name).c_str());
    w.Key("node");
    w.String(p.spec.node_name.c_str());
  }
  w.Key("claims");
  w.StartArray();
  for (const auto* c : claims) {
    w.StartObject();
    w.Key("claim");
    w.String((c->metadata.namespace_ + "/" + c->metadata.name).c_str());
    w.Key("allocated");
    w.Bool(c->status.allocation.has_value());
    if (c->status.allocation) {
      w.Key("node");
      w.String(SelectedNode(*c->status.allocation).c_str());
      w.Key("allocation");
      WriteAllocation(*c->status.allocation, w);
    }
    w.EndObject();
  }
  w.EndArray();
  w.Key("wouldFitOn");
  w.StartArray();
  for (const auto& n : fits) w.String(n.c_str());
  w.EndArray();
  if (!go.message.empty()) {
    w.Key("message");
    w.String(go.message.c_str());
  }
  w.Key("filteredNodes");
  w.StartArray();
  for (const auto& f : go.filtered) w.String(f.c_str());
  w.EndArray();
  w.Key("explanations");
  w.StartArray();
  for (const auto& e : go.explanations) alloc::EncodeExplanation(e, w);
  w.EndArray();
  w.EndObject();
  *json = buf.GetString();
}

void YamlValue(const rapidjson::Value& v, YAML::Emitter& e) {
  if (v.IsObject()) {
    e << YAML::BeginMap;
    for (const auto& m : v.GetObject()) {
      e << YAML::Key << std::string(m.name.GetString(), m.name.GetStringLength()) << YAML::Value;
      YamlValue(m.value, e);
    }
    e << YAML::EndMap;
  } else if (v.IsArray()) {
    e << YAML::BeginSeq;
    for (const auto& x : v.GetArray()) YamlValue(x, e);
    e << YAML::EndSeq;
  } else if (v.IsString()) {
    e << std::string(v.GetString(), v.GetStringLength());
  } else if (v.IsBool()) {
    e << v.GetBool();
  } else if (v.IsInt64()) {
    e << v.GetInt64();
  } else if (v.IsUint64()) {
    e << v.GetUint64();
  } else if (v.IsNumber()) {
    e << v.GetDouble();
  } else {
    e << YAML::Null;
  }
}

}  // namespace

const Group* FindTarget(const Simulation& sim, const ExplainRequest& req, std::string* kind,
                        std::string* name) {
  std::string t = req.target;
  *kind = "pod";
  if (auto slash = t.find('/'); slash != std::string::npos) {
    *kind = t.substr(0, slash);
    t = t.substr(slash + 1);
  }
  if (*kind == "pods" || *kind == "po") *kind = "pod";
  if (*kind == "resourceclaim" || *kind == "resourceclaims" || *kind == "claims") *kind = "claim";
  *name = req.ns + "/" + t;
  for (const auto& g : sim.groups) {
    if (*kind == "pod" && g.label == "pod " + *name) return &g;
    if (*kind != "claim") continue;
    for (size_t i : g.claims) {
      const auto& c = sim.claims[i];
      if (c.metadata.namespace_ + "/" + c.metadata.name == *name) return &g;
    }
  }
  // An allocated claim no pod references has no group.
  return nullptr;
}

std::string JsonToYaml(const std::string& json) {
  rapidjson::Document d;
  d.Parse(json.c_str());
  if (d.HasParseError()) return json;
  YAML::Emitter e;
  e << YAML::Block;
  YamlValue(d, e);
  return std::string(e.c_str()) + "\n";
}

void WriteAllocation(const api::AllocationResult& r, alloc::JsonWriter& w) {
  std::string json = api::Encode(r);
  w.RawValue(json.data(), json.size(), rapidjson::kObjectType);
}

std::string SelectedNode(const api::AllocationResult& r) {
  if (!r.node_selector || r.node_selector->node_selector_terms.size() != 1) return "";
  const auto& t = r.node_selector->node_selector_terms[0];
  for (const auto& e : t.match_fields) {
    if (e.key == "metadata.name" && e.operator_ == "In" && e.values.size() == 1) return e.values[0];
  }
  for (const auto& e : t.match_expressions) {
    if (e.key == "kubernetes.io/hostname" && e.operator_ == "In" && e.values.size() == 1) {
      return e.values[0];
    }
  }
  return "";
}

int ExplainTarget(Simulation& sim, const ExplainRequest& req, std::ostream& out,
                  std::ostream& err) {
  std::string kind, name;
  const Group* g = FindTarget(sim, req, &kind, &name);
  const api::ResourceClaim* lone = g ? nullptr : FindClaim(sim, name);
  if (kind != "pod" && kind != "claim") {
    err << "error: explain takes pod/NAME or claim/NAME, not " << kind << "/...\n";
    return kExitInput;
  }
  if (!g && !lone) {
    err << "error: " << kind << " " << name << " not found"
        << (kind == "pod" ? " (or it has finished)" : "") << "\n";
    return kExitInput;
  }
  std::vector<const api::ResourceClaim*> claims;
  if (g) {
    for (size_t i : g->claims) claims.push_back(&sim.claims[i]);
  } else {
    claims.push_back(lone);
  }
  // Only a group has claims to allocate (a claim without one is allocated and unreferenced).
  const bool pending = g && std::any_of(claims.begin(), claims.end(),
                                        [](const auto* c) { return !c->status.allocation; });
  GroupOutcome go;
  std::vector<std::string> fits;
  if (pending) {
    go = RunGroup(sim, *g, true, req.node);
    for (const auto& e : go.explanations) {
      if (e.outcome.kind == alloc::Outcome::Kind::kAllocated) fits.push_back(e.node);
    }
  }
  const int rc = !pending || !fits.empty() ? kExitOk : kExitUnallocated;
  if (req.output == "json" || req.output == "yaml") {
    std::string json;
    WriteJson(sim, g, claims, go, fits, &json);
    out << (req.output == "yaml" ? JsonToYaml(json) : json + "\n");
    return rc;
  }
  if (g && g->pod >= 0) out << PodLine(*sim.in.pods[static_cast<size_t>(g->pod)]) << "\n";
  if (g && g->claims.empty()) out << "  no resource claims: nothing for draco to allocate\n";
  if (g && !g->problem.empty()) out << "  problem: " << g->problem << "\n";
  for (const auto* c : claims) {
    out << "  " << ClaimLine(*c) << "\n";
    if (!c->status.allocation) continue;
    std::ostringstream alloc_text;
    PrintAllocation(*c, *c->status.allocation, alloc_text);
    std::istringstream lines(alloc_text.str());
    std::string l;
    std::getline(lines, l);  // the claim's name, printed above
    while (std::getline(lines, l)) out << "  " << l << "\n";
  }
  if (!pending) return rc;
  out << "pending claims, against the allocations that exist now:\n";
  for (const auto& f : go.filtered) {
    if (req.node.empty() || f.starts_with(req.node + ": ")) out << "  filtered " << f << "\n";
  }
  if (!go.message.empty() && go.explanations.empty()) out << "  " << go.message << "\n";
  // Nodes that fit are named by the verdict line (their funnels with -o wide).
  PrintExplanations(go.explanations, req.output != "wide", "  ", out);
  if (fits.empty()) {
    out << "fits on no node now\n";
  } else {
    out << "would be allocated now on " << fits.size() << " node(s):";
    for (size_t i = 0; i < fits.size() && i < 10; ++i) out << " " << fits[i];
    out << (fits.size() > 10 ? " ..." : "") << "\n";
  }
  return rc;
}

}  // namespace draco::simulate
