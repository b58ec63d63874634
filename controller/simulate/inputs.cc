// Loading simulate's inputs (engine.h: LoadInputs): manifests decoded once with the api codec.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <rapidjson/document.h>

#include "controller/api/codec.h"
#include "controller/api/extended_resource.h"
#include "controller/api/pod_claims.h"
#include "controller/api/validation.h"
#include "controller/simulate/engine.h"
#include "controller/simulate/workloads.h"

namespace draco::simulate {
namespace {

// A Node without status.allocatable (typical of hand-written simulate inputs) is not resource
// limited: kubelet's default of 110 pods and practically unlimited cpu, memory and storage. A
// Node without status.conditions is Ready (the controller's node filter wants a Ready
// condition). As kubelet does, a node is labelled kubernetes.io/hostname=<name> unless it says
// otherwise.
std::shared_ptr<const api::Node> SimulatedNode(api::Node n) {
  n.metadata.labels.try_emplace("kubernetes.io/hostname", n.metadata.name);
  if (n.status.conditions.empty()) {
    api::NodeCondition ready;
    ready.type = "Ready";
    ready.status = "True";
    n.status.conditions.push_back(std::move(ready));
  }
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

template <class T>
void Add(StatusOr<T> v, std::vector<T>& out, Status& st) {
  if (v.ok()) {
    out.push_back(std::move(v).value());
  } else {
    st = v.status();
  }
}

// A Pod manifest. Every spec.resourceClaims entry must name a claim or a template (checked with
// the controller's api::ResolveClaimName), even in a finished pod, which is then left out.
Status AddPod(const std::string& raw_json, Inputs* in) {
  auto pod = api::Decode<api::Pod>(raw_json);
  if (!pod.ok()) return pod.status();
  if (pod->metadata.namespace_.empty()) pod->metadata.namespace_ = "default";
  for (const auto& pc : pod->spec.resource_claims) {
    if (auto r = api::ResolveClaimName(*pod, pc); !r.ok()) {
      return r.status().WithPrefix("pod " + pod->metadata.name);
    }
  }
  // A finished pod holds nothing (kube-scheduler's informer drops it; its claims are released).
  if (pod->status.phase == "Succeeded" || pod->status.phase == "Failed") return OkStatus();
  auto p = std::make_shared<const api::Pod>(std::move(*pod));
  if (!p->spec.node_name.empty()) in->cluster.pods.push_back({p, p->spec.node_name});
  in->pods.push_back(std::move(p));
  return OkStatus();
}

// The pods a workload's controllers would create (see workloads.h), added as Pods.
Status AddWorkload(const rapidjson::Value& doc, Inputs* in) {
  auto pods = ExpandWorkload(doc);
  if (!pods.ok()) return pods.status();
  for (const auto& raw : *pods) {
    if (Status s = AddPod(raw, in); !s.ok()) return s;
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

// One decoded manifest (`doc` is its parsed JSON, `where` names it) into `in`.
Status LoadManifest(const api::Manifest& m, const rapidjson::Document& doc,
                    const std::string& where, Inputs* in) {
  Status st;
  if (const auto* dc = std::get_if<api::DeviceClass>(&m.object)) {
    in->classes.push_back(*dc);
  } else if (const auto* rs = std::get_if<api::ResourceSlice>(&m.object)) {
    in->slices.push_back(std::make_shared<const api::ResourceSlice>(*rs));
  } else if (const auto* tr = std::get_if<api::DeviceTaintRule>(&m.object)) {
    in->rules.push_back(*tr);
  } else if (m.kind == "AllocationPolicy") {
    Add(api::Decode<api::AllocationPolicy>(m.raw_json), in->policies, st);
    if (st.ok()) in->policy_sources.push_back(where);
  } else if (const auto* n = std::get_if<api::Node>(&m.object)) {
    in->cluster.nodes.push_back(SimulatedNode(*n));
  } else if (const auto* c = std::get_if<api::ResourceClaim>(&m.object)) {
    in->claims.push_back(*c);
    if (in->claims.back().metadata.namespace_.empty()) {
      in->claims.back().metadata.namespace_ = "default";
    }
  } else if (const auto* t = std::get_if<api::ResourceClaimTemplate>(&m.object)) {
    in->templates[Key(t->metadata.namespace_, t->metadata.name)] = *t;
  } else if (m.kind == "Pod") {
    st = AddPod(m.raw_json, in);
  } else if (m.kind == "PodGroup" && m.api_version.starts_with("scheduling.k8s.io/")) {
    Add(api::Decode<api::PodGroup>(m.raw_json), in->pod_groups, st);
  } else if (IsWorkloadKind(m.api_version, m.kind)) {
    st = AddWorkload(doc, in);
  } else {
    st = LoadStorage(m, &in->cluster, &in->ignored);
  }
  return st;
}

// Without Node objects, the nodes the slices name (nodeName of a slice or of a device), labelled
// only with their hostname; one nameless node when no slice names one.
void NodesFromSlices(Inputs* in) {
  std::set<std::string> names;
  for (const auto& s : in->slices) {
    if (s->spec.node_name && !s->spec.node_name->empty()) names.insert(*s->spec.node_name);
    for (const auto& d : s->spec.devices) {
      if (d.node_name && !d.node_name->empty()) names.insert(*d.node_name);
    }
  }
  if (names.empty()) names.insert("");
  for (const auto& n : names) {
    api::Node a;
    a.metadata.name = n;
    in->cluster.nodes.push_back(SimulatedNode(std::move(a)));
  }
}

// Upstream's API validation of a DRA object a user wrote (the API server validates live objects
// before draco sees them); OK for other kinds.
Status Validate(const api::Manifest& m) {
  api::FieldErrors errors;
  if (const auto* o = std::get_if<api::DeviceClass>(&m.object)) {
    errors = api::ValidateDeviceClass(*o);
  }
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
    if (Status st = LoadManifest(m, doc, where, in); !st.ok()) return st.WithPrefix(where);
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
                                              c.metadata.name);
    if (c.spec.extended_resource_name && !c.spec.extended_resource_name->empty()) {
      in->cluster.dra_extended_resources.insert(*c.spec.extended_resource_name);
    }
  }
  if (in->cluster.nodes.empty()) NodesFromSlices(in);
  return OkStatus();
}

}  // namespace

Status LoadInputs(const Options& opts, Inputs* in) { return Load(opts, in); }

}  // namespace draco::simulate
