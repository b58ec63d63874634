#include "controller/simulate/engine.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "controller/allocator/allocator.h"
#include "controller/allocator/explain.h"
#include "controller/allocator/features.h"
#include "controller/allocator/from_api.h"
#include "controller/allocator/node_selector.h"
#include "controller/api/codec.h"
#include "controller/api/validation.h"
#include "controller/feasibility/feasibility.h"
#include "controller/simulate/extended_resources.h"
#include "controller/simulate/workloads.h"

namespace draco::simulate {
namespace {

// A Node without status.allocatable (typical of hand-written simulate inputs) is not resource
// limited: kubelet's default of 110 pods and practically unlimited cpu, memory and storage. As
// kubelet does, a node is labelled kubernetes.io/hostname=<name> unless it says otherwise.
std::shared_ptr<const api::Node> SimulatedNode(api::Node n) {
  n.metadata.labels.try_emplace("kubernetes.io/hostname", n.metadata.name);
  if (n.status.allocatable.empty()) {
    for (const auto& [k, v] : {std::pair<const char*, const char*>{"pods", "110"},
                               {"cpu", "1M"},
                               {"memory", "1E"},
                               {"ephemeral-storage", "1E"}}) {
      n.status.allocatable[k] = *api::Quantity::Parse(v);
    }
  }
  return std::make_shared<const api::Node>(std::move(n));
}

template <class T>
Status DecodeInto(const std::string& json, std::shared_ptr<const T>* out) {
  auto v = api::Decode<T>(json);
  if (!v.ok()) return v.status();
  *out = std::make_shared<const T>(std::move(*v));
  return OkStatus();
}

// PersistentVolumes, PersistentVolumeClaims, StorageClasses, CSINodes, Namespaces; objects of
// other kinds are listed in `ignored`.
Status LoadStorage(const api::Manifest& m, feasibility::Snapshot* c,
                   std::vector<std::string>* ignored) {
  if (m.kind == "PersistentVolume") {
    std::shared_ptr<const api::PersistentVolume> o;
    if (Status s = DecodeInto(m.raw_json, &o); !s.ok()) return s;
    c->pvs[o->metadata.name] = o;
  } else if (m.kind == "PersistentVolumeClaim") {
    std::shared_ptr<const api::PersistentVolumeClaim> o;
    if (Status s = DecodeInto(m.raw_json, &o); !s.ok()) return s;
    std::string ns = o->metadata.namespace_.empty() ? "default" : o->metadata.namespace_;
    c->pvcs[ns + "/" + o->metadata.name] = o;
  } else if (m.kind == "StorageClass") {
    std::shared_ptr<const api::StorageClass> o;
    if (Status s = DecodeInto(m.raw_json, &o); !s.ok()) return s;
    c->storage_classes[o->metadata.name] = o;
  } else if (m.kind == "CSINode") {
    std::shared_ptr<const api::CSINode> o;
    if (Status s = DecodeInto(m.raw_json, &o); !s.ok()) return s;
    c->csi_nodes[o->metadata.name] = o;
  } else if (m.kind == "Namespace") {
    std::shared_ptr<const api::Namespace> o;
    if (Status s = DecodeInto(m.raw_json, &o); !s.ok()) return s;
    c->namespaces[o->metadata.name] = o;
  } else {
    rapidjson::Document doc;
    doc.Parse(m.raw_json.c_str());
    std::string name;
    if (doc.IsObject() && doc.HasMember("metadata") && doc["metadata"].IsObject() &&
        doc["metadata"].HasMember("name") && doc["metadata"]["name"].IsString()) {
      name = doc["metadata"]["name"].GetString();
    }
    ignored->push_back(m.kind + "/" + name);
  }
  return OkStatus();
}

}  // namespace

std::string Key(const std::string& ns, const std::string& name) {
  return (ns.empty() ? "default" : ns) + "/" + name;
}

namespace {

Status ReadPaths(const std::vector<std::string>& paths, std::vector<std::string>* files) {
  namespace fs = std::filesystem;
  for (const auto& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<std::string> found;
      for (const auto& e : fs::directory_iterator(p, ec)) {
        std::string ext = e.path().extension().string();
        if (e.is_regular_file() && (ext == ".yaml" || ext == ".yml" || ext == ".json")) {
          found.push_back(e.path().string());
        }
      }
      std::sort(found.begin(), found.end());
      files->insert(files->end(), found.begin(), found.end());
    } else if (fs::exists(p, ec)) {
      files->push_back(p);
    } else {
      return NotFoundError("path " + p + " does not exist");
    }
  }
  if (files->empty()) return InvalidArgumentError("no manifest files given (-f FILE|DIR)");
  return OkStatus();
}

StatusOr<Pod> DecodePod(const rapidjson::Value& v) {
  Pod p;
  if (auto md = v.FindMember("metadata"); md != v.MemberEnd() && md->value.IsObject()) {
    if (auto n = md->value.FindMember("name"); n != md->value.MemberEnd() && n->value.IsString()) {
      p.name = n->value.GetString();
    }
    if (auto n = md->value.FindMember("namespace");
        n != md->value.MemberEnd() && n->value.IsString()) {
      p.ns = n->value.GetString();
    }
  }
  if (p.ns.empty()) p.ns = "default";
  auto spec = v.FindMember("spec");
  if (spec == v.MemberEnd() || !spec->value.IsObject()) return p;
  const auto& s = spec->value;
  if (auto n = s.FindMember("nodeName"); n != s.MemberEnd() && n->value.IsString()) {
    p.node_name = n->value.GetString();
  }
  if (auto rc = s.FindMember("resourceClaims"); rc != s.MemberEnd() && rc->value.IsArray()) {
    for (const auto& e : rc->value.GetArray()) {
      PodClaimRef r;
      auto get = [&](const char* k) -> std::string {
        auto it = e.FindMember(k);
        return it != e.MemberEnd() && it->value.IsString() ? it->value.GetString() : "";
      };
      r.name = get("name");
      r.claim_name = get("resourceClaimName");
      r.template_name = get("resourceClaimTemplateName");
      if (r.claim_name.empty() && r.template_name.empty()) {
        return InvalidArgumentError("pod " + p.name + ", resourceClaims " + r.name +
                                    ": needs resourceClaimName or resourceClaimTemplateName");
      }
      p.claims.push_back(std::move(r));
    }
  }
  return p;
}

template <class T>
void Add(StatusOr<T> v, std::vector<T>& out, Status& st) {
  if (v.ok()) {
    out.push_back(std::move(v).value());
  } else {
    st = v.status();
  }
}

// A Pod manifest (`doc` parsed from `raw_json`) in both models simulate uses.
Status AddPod(const rapidjson::Value& doc, const std::string& raw_json, Inputs* in) {
  auto v = DecodePod(doc);
  if (!v.ok()) return v.status();
  auto a = api::Decode<api::Pod>(raw_json);
  if (!a.ok()) return a.status();
  if (a->metadata.namespace_.empty()) a->metadata.namespace_ = "default";
  // A finished pod holds nothing (kube-scheduler's informer drops it; its claims are released).
  if (a->status.phase == "Succeeded" || a->status.phase == "Failed") return OkStatus();
  v->api = std::make_shared<const api::Pod>(std::move(*a));
  if (!v->node_name.empty()) in->cluster.pods.push_back({v->api, v->node_name});
  in->pods.push_back(std::move(v).value());
  return OkStatus();
}

// The pods a workload's controllers would create (see workloads.h), added as Pods.
Status AddWorkload(const rapidjson::Value& doc, Inputs* in) {
  auto pods = ExpandWorkload(doc);
  if (!pods.ok()) return pods.status();
  for (const auto& raw : *pods) {
    rapidjson::Document pod;
    pod.Parse(raw.c_str());
    if (Status s = AddPod(pod, raw, in); !s.ok()) return s;
  }
  std::string ns = "default", name;
  if (const auto md = doc.FindMember("metadata"); md != doc.MemberEnd()) {
    if (auto n = md->value.FindMember("namespace");
        n != md->value.MemberEnd() && n->value.IsString()) {
      ns = n->value.GetString();
    }
    name = md->value["name"].GetString();  // ExpandWorkload checked it
  }
  in->workloads.push_back(std::string(doc["kind"].GetString()) + " " + ns + "/" + name + ": " +
                          std::to_string(pods->size()) + " pods");
  return OkStatus();
}

}  // namespace

void PrintExplanations(const std::vector<alloc::Explanation>& explanations, bool skip_allocated,
                       const std::string& indent, std::ostream& out) {
  constexpr size_t kListedEmptyNodes = 10;
  std::vector<std::string> empty;
  for (const auto& e : explanations) {
    const bool allocated = e.outcome.kind == alloc::Outcome::Kind::kAllocated;
    if (allocated && skip_allocated) continue;
    bool none = !allocated && !e.requests.empty();
    for (const auto& r : e.requests) {
      none = none && r.cel_errors.empty() && !r.stages.empty() && r.stages.front().count == 0;
    }
    if (none) {
      empty.push_back(e.node);
      continue;
    }
    std::istringstream lines(alloc::ExplanationToText(e));
    for (std::string l; std::getline(lines, l);) out << indent << l << "\n";
  }
  if (empty.empty()) return;
  out << indent << "no devices for these requests on " << empty.size()
      << (empty.size() == 1 ? " node:" : " nodes:");
  for (size_t i = 0; i < empty.size() && i < kListedEmptyNodes; ++i) out << " " << empty[i];
  if (empty.size() > kListedEmptyNodes) out << " +" << empty.size() - kListedEmptyNodes << " more";
  out << "\n";
}

std::string IgnoredLine(const Inputs& in) {
  if (in.ignored.empty()) return "";
  std::string line =
      "ignored: " + std::to_string(in.ignored.size()) +
      (in.ignored.size() == 1 ? " object of an unknown kind: " : " objects of unknown kinds: ");
  for (size_t i = 0; i < in.ignored.size(); ++i) line += (i ? ", " : "") + in.ignored[i];
  return line;
}

namespace {

// One decoded manifest (`doc` is its parsed JSON) into `in`.
Status LoadManifest(const api::Manifest& m, const rapidjson::Document& doc, Inputs* in) {
  Status st;
  if (const auto* dc = std::get_if<api::DeviceClass>(&m.object)) {
    in->classes.push_back(alloc::ToAllocClass(*dc));
    in->api_classes.push_back(*dc);
  } else if (const auto* rs = std::get_if<api::ResourceSlice>(&m.object)) {
    in->slices.push_back(alloc::ToAllocSlice(*rs));
    in->api_slices.push_back(std::make_shared<const api::ResourceSlice>(*rs));
  } else if (const auto* tr = std::get_if<api::DeviceTaintRule>(&m.object)) {
    in->rules.push_back(alloc::ToAllocTaintRule(*tr));
  } else if (m.kind == "AllocationPolicy") {
    auto a = api::Decode<api::AllocationPolicy>(m.raw_json);
    Add(a.ok() ? alloc::ToAllocPolicy(*a) : StatusOr<alloc::AllocationPolicy>(a.status()),
        in->policies, st);
  } else if (const auto* n = std::get_if<api::Node>(&m.object)) {
    auto sim = SimulatedNode(*n);
    in->nodes.push_back(alloc::ToAllocNode(*sim));
    in->cluster.nodes.push_back(std::move(sim));
  } else if (const auto* c = std::get_if<api::ResourceClaim>(&m.object)) {
    ResourceClaim v = alloc::ToAllocClaim(*c);
    if (v.namespace_name.empty()) v.namespace_name = "default";
    in->claims.push_back(std::move(v));
  } else if (const auto* t = std::get_if<api::ResourceClaimTemplate>(&m.object)) {
    ResourceClaim v = alloc::ToAllocClaimTemplate(*t);
    if (v.namespace_name.empty()) v.namespace_name = "default";
    std::string k = Key(v.namespace_name, v.name);
    in->templates[k] = std::move(v);
  } else if (m.kind == "Pod") {
    st = AddPod(doc, m.raw_json, in);
  } else if (m.kind == "PodGroup" && m.api_version.starts_with("scheduling.k8s.io/")) {
    Add(api::Decode<api::PodGroup>(m.raw_json), in->pod_groups, st);
  } else if (IsWorkloadKind(m.api_version, m.kind)) {
    st = AddWorkload(doc, in);
  } else {
    st = LoadStorage(m, &in->cluster, &in->ignored);
  }
  return st;
}

// Upstream's API validation of a DRA object a user wrote (the API server validates live objects
// before draco sees them); OK for other kinds.
Status Validate(const api::Manifest& m) {
  api::FieldErrors errors;
  if (const auto* o = std::get_if<api::DeviceClass>(&m.object))
    errors = api::ValidateDeviceClass(*o);
  if (const auto* o = std::get_if<api::ResourceClaim>(&m.object)) {
    errors = api::ValidateResourceClaim(*o);
  }
  if (const auto* o = std::get_if<api::ResourceClaimTemplate>(&m.object)) {
    errors = api::ValidateResourceClaimTemplate(*o);
  }
  if (const auto* o = std::get_if<api::ResourceSlice>(&m.object)) {
    errors = api::ValidateResourceSlice(*o);
  }
  if (const auto* o = std::get_if<api::DeviceTaintRule>(&m.object)) {
    errors = api::ValidateDeviceTaintRule(*o);
  }
  return api::ToStatus(errors);
}

// Every manifest of one source (a file's or a document's text); `validate` for user-written input.
Status LoadText(const std::string& source, const std::string& text, bool validate, Inputs* in) {
  auto manifests = api::DecodeManifests(text);
  if (!manifests.ok()) return manifests.status().WithPrefix(source);
  for (size_t i = 0; i < manifests->size(); ++i) {
    const api::Manifest& m = (*manifests)[i];
    rapidjson::Document doc;
    doc.Parse(m.raw_json.c_str());
    std::string where = source + ": document " + std::to_string(i + 1) + " (" + m.kind + ")";
    if (doc.HasParseError()) return InvalidArgumentError(where + ": invalid JSON");
    if (Status st = validate ? Validate(m) : OkStatus(); !st.ok()) return st.WithPrefix(where);
    if (Status st = LoadManifest(m, doc, in); !st.ok()) return st.WithPrefix(where);
  }
  return OkStatus();
}

Status Load(const Options& opts, Inputs* in) {
  for (const auto& d : opts.documents) {
    if (Status s = LoadText(d.source, d.text, false, in); !s.ok()) return s;
  }
  std::vector<std::string> files;
  if (opts.documents.empty() || !opts.paths.empty()) {
    if (Status s = ReadPaths(opts.paths, &files); !s.ok()) return s;
  }
  for (const auto& f : files) {
    std::ifstream is(f);
    std::stringstream ss;
    ss << is.rdbuf();
    if (Status s = LoadText(f, ss.str(), true, in); !s.ok()) return s;
  }
  for (const auto& c : in->classes) {
    in->cluster.dra_extended_resources.insert(std::string(api::kDeviceClassResourcePrefix) +
                                              c.name);
    if (!c.extended_resource_name.empty()) {
      in->cluster.dra_extended_resources.insert(c.extended_resource_name);
    }
  }
  if (in->nodes.empty()) {
    std::set<std::string> names;
    for (const auto& s : in->slices) {
      if (s.node_name && !s.node_name->empty()) names.insert(*s.node_name);
      for (const auto& d : s.devices) {
        if (d.node_name && !d.node_name->empty()) names.insert(*d.node_name);
      }
    }
    for (const auto& n : names) {
      in->nodes.push_back(alloc::Node{n, {{"kubernetes.io/hostname", n}}, {}});
    }
    if (in->nodes.empty()) in->nodes.push_back(alloc::Node{});
    for (const auto& n : in->nodes) {
      api::Node a;
      a.metadata.name = n.name;
      in->cluster.nodes.push_back(SimulatedNode(std::move(a)));
    }
  }
  return OkStatus();
}

// by_key's entry for the claim that `pod`'s status records for its claim `ref_name`, or end().
std::map<std::string, size_t>::const_iterator RecordedClaim(
    const api::Pod& pod, const std::string& ref_name, const std::map<std::string, size_t>& by_key) {
  for (const auto& st : pod.status.resource_claim_statuses) {
    if (st.name == ref_name && st.resource_claim_name) {
      return by_key.find(Key(pod.metadata.namespace_, *st.resource_claim_name));
    }
  }
  return by_key.end();
}

}  // namespace

Status Build(const Options& opts, Simulation* sim) {
  if (Status s = Load(opts, &sim->in); !s.ok()) return s;
  alloc::Features features = alloc::DefaultFeatures(opts.kubernetes_minor);
  if (Status s = alloc::ApplyFeatureGates(opts.feature_gates, opts.kubernetes_minor, features);
      !s.ok()) {
    return s.WithPrefix("--feature-gates");
  }
  // Without DRAExtendedResource kube-scheduler leaves extended resources to device plugins.
  if (!features.extended_resource) sim->in.cluster.dra_extended_resources.clear();
  std::map<std::string, size_t> by_key;
  for (auto& c : sim->in.claims) {
    by_key[Key(c.namespace_name, c.name)] = sim->claims.size();
    sim->claims.push_back(c);
  }
  std::set<size_t> referenced;
  std::vector<const api::DeviceClass*> api_classes;
  for (const auto& c : sim->in.api_classes) api_classes.push_back(&c);
  const api::ExtendedResourceClasses ext_classes = api::MapExtendedResourceClasses(api_classes);
  for (const Pod& p : sim->in.pods) {
    Group g;
    g.label = "pod " + p.ns + "/" + p.name;
    for (const auto& ref : p.claims) {
      if (!ref.claim_name.empty()) {
        auto it = by_key.find(Key(p.ns, ref.claim_name));
        if (it == by_key.end()) {
          g.problem = "resource claim " + p.ns + "/" + ref.claim_name + " not found";
          continue;
        }
        referenced.insert(it->second);
        g.claims.push_back(it->second);
        continue;
      }
      // A live pod's generated claim, recorded in its status by the claim controller.
      if (auto it = RecordedClaim(*p.api, ref.name, by_key); it != by_key.end()) {
        referenced.insert(it->second);
        g.claims.push_back(it->second);
        continue;
      }
      auto t = sim->in.templates.find(Key(p.ns, ref.template_name));
      if (t == sim->in.templates.end()) {
        g.problem = "resource claim template " + p.ns + "/" + ref.template_name + " not found";
        continue;
      }
      ResourceClaim c = t->second;
      c.name = p.name + "-" + ref.name;
      c.namespace_name = p.ns;
      c.annotations["resource.kubernetes.io/pod-claim-name"] = ref.name;
      alloc::DefaultClaim(c);
      by_key[Key(c.namespace_name, c.name)] = sim->claims.size();
      referenced.insert(sim->claims.size());
      g.claims.push_back(sim->claims.size());
      sim->claims.push_back(std::move(c));
    }
    g.pod = static_cast<int>(&p - sim->in.pods.data());
    // Extended resources: the recorded claim (live dump), else the one kube-scheduler would make.
    auto ext_name = by_key.find(Key(p.ns, api::ExtendedResourceClaimName(*p.api)));
    StatusOr<std::optional<ResourceClaim>> ext = std::optional<ResourceClaim>();
    if (features.extended_resource) ext = ExtendedResourceClaim(*p.api, p.ns, ext_classes);
    if (ext_name != by_key.end()) {
      referenced.insert(ext_name->second);
      g.claims.push_back(ext_name->second);
    } else if (!ext.ok()) {
      g.problem = ext.status().message();
    } else if (*ext) {
      g.claims.push_back(sim->claims.size());
      sim->claims.push_back(std::move(**ext));
    }
    sim->groups.push_back(std::move(g));
  }
  for (size_t i = 0; i < sim->in.claims.size(); ++i) {
    if (referenced.count(i) || sim->claims[i].allocation) continue;
    Group g;
    g.label = "claim " + sim->claims[i].namespace_name + "/" + sim->claims[i].name;
    g.claims.push_back(i);
    g.candidates = sim->in.nodes;
    sim->groups.push_back(std::move(g));
  }
  alloc::ComputeConfig& cfg = sim->allocator_config;
  cfg.selectors = alloc::NewCelSelectorCompiler();
  cfg.timeout = std::chrono::milliseconds(10000);
  cfg.policies = sim->in.policies;
  cfg.features = features;
  sim->features = features;
  return ResetAllocator(*sim);
}

void PrintAllocation(const ResourceClaim& c, const AllocationResult& r, std::ostream& out) {
  out << "  claim " << c.namespace_name << "/" << c.name << "\n";
  for (const auto& d : r.results) {
    out << "    " << d.request << " -> " << d.driver << "/" << d.pool << "/" << d.device;
    if (d.admin_access.value_or(false)) out << " (admin access)";
    if (d.share_id) out << " share " << *d.share_id;
    for (const auto& [k, q] : d.consumed_capacity) out << " " << k << "=" << q.ToString();
    out << "\n";
  }
  for (const auto& cfg : r.config) {
    out << "    config " << cfg.source << " " << cfg.opaque.driver << " "
        << cfg.opaque.parameters_json;
    if (!cfg.requests.empty()) {
      out << " for";
      for (const auto& q : cfg.requests) out << " " << q;
    }
    out << "\n";
  }
  if (r.node_selector) {
    std::string ns;
    for (const auto& t : r.node_selector->terms) {
      for (const auto& e : t.match_fields)
        ns += " " + e.key + " " + e.op + " " + (e.values.empty() ? "" : e.values[0]);
      for (const auto& e : t.match_expressions) {
        ns += " " + e.key + " " + e.op;
        for (const auto& v : e.values) ns += " " + v;
      }
    }
    out << "    nodeSelector:" << ns << "\n";
  }
}

// The nodes a pod group may use, filtered as `draco run` filters them (reconcilers/node_fit.h):
// the node must match the node selector of every claim of the group already allocated, must be
// Ready when it reports conditions (hand-written nodes without status are taken as Ready), and
// must pass kube-scheduler's filters (controller/feasibility). One line per node that does not.
std::vector<alloc::Node> FeasibleCandidates(const Simulation& sim, const Pod& pod, const Group& g,
                                            std::vector<std::string>* filtered) {
  feasibility::Snapshot snap = sim.in.cluster;
  std::erase_if(snap.pods, [&](const feasibility::PlacedPod& p) { return p.pod == pod.api; });
  std::vector<feasibility::Verdict> v = feasibility::Evaluate(*pod.api, snap);
  std::vector<alloc::Node> out;
  for (size_t i = 0; i < v.size() && i < sim.in.nodes.size(); ++i) {
    const alloc::Node& n = sim.in.nodes[i];
    const api::Node& node = *sim.in.cluster.nodes[i];
    bool matches = true;
    for (size_t c : g.claims) {
      const auto& a = sim.claims[c].allocation;
      if (!a || !a->node_selector) continue;
      auto m = alloc::NodeMatches(n, "", false, &*a->node_selector);
      matches = matches && m.ok() && *m;
    }
    if (!matches) {
      filtered->push_back(n.name +
                          ": node(s) didn't match the node selector of an allocated claim");
    } else if (!node.status.conditions.empty() && !node.IsReady()) {
      filtered->push_back(n.name + ": node(s) were not ready");
    } else if (v[i].passed) {
      out.push_back(n);
    } else {
      filtered->push_back(n.name + ": " + v[i].plugin + ": " +
                          (v[i].detail.empty() ? v[i].reason : v[i].detail));
    }
  }
  return out;
}

GroupOutcome RunGroup(Simulation& sim, const Group& g, bool explain, const std::string& only_node,
                      const std::string& prefer) {
  GroupOutcome go;
  if (!g.problem.empty()) {
    go.message = g.problem;
    return go;
  }
  std::vector<const ResourceClaim*> claims;
  for (size_t i : g.claims) {
    if (!sim.claims[i].allocation) claims.push_back(&sim.claims[i]);
  }
  if (claims.empty()) {
    go.allocated = true;
    go.message = g.claims.empty() ? "no resource claims" : "all claims already allocated";
    return go;
  }
  const Pod* pod = g.pod >= 0 ? &sim.in.pods[static_cast<size_t>(g.pod)] : nullptr;
  std::vector<alloc::Node> all =
      pod ? FeasibleCandidates(sim, *pod, g, &go.filtered) : g.candidates;
  std::vector<alloc::Node> cands;
  for (const auto& n : all) {
    if (only_node.empty() || n.name == only_node) cands.push_back(n);
  }
  if (cands.empty()) {
    go.message = "no candidate node: " + std::to_string(all.size()) + "/" +
                 std::to_string(sim.in.nodes.size()) + " nodes pass kube-scheduler's filters";
    return go;
  }
  if (explain) {
    for (const auto& n : cands) {
      go.explanations.push_back(alloc::ComputeExplain(*sim.allocator, n, claims));
    }
    return go;
  }
  size_t start = 0;
  for (size_t k = 0; k < cands.size(); ++k) start = cands[k].name == prefer ? k : start;
  alloc::SearchOutcome o = alloc::ComputeAllocateOnAnyNode(*sim.allocator, cands, claims, start);
  if (o.kind == alloc::Outcome::Kind::kAllocated) {
    go.allocated = true;
    go.node = o.node;
    for (size_t k = 0; k < claims.size(); ++k) {
      alloc::ComputeCommit(*sim.allocator, *claims[k], o.results[k]);
      const_cast<ResourceClaim*>(claims[k])->allocation = o.results[k];
    }
    // The pod now counts as placed for later pods (affinity, spread, ports, resources).
    if (pod && pod->node_name.empty()) sim.in.cluster.pods.push_back({pod->api, o.node});
    return go;
  }
  go.message =
      std::string(alloc::OutcomeKindName(o.kind)) + (o.message.empty() ? "" : ": " + o.message);
  for (const auto& n : cands) {
    go.explanations.push_back(alloc::ComputeExplain(*sim.allocator, n, claims));
  }
  return go;
}

}  // namespace draco::simulate
