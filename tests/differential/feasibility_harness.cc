// feasibility_harness: runs draco's feasibility library (controller/feasibility) on scenarios in
// the format of tests/oracle/schedfilter/README.md, for the differential test against
// kube-scheduler's own framework (tests/oracle).
//
// Usage: feasibility_harness [FILE.jsonl]   (stdin when FILE is absent or "-")
// Each line: {"apiVersion":"v1","kind":"List","items":[...]} with Namespace, Node, Pod,
// PersistentVolume, PersistentVolumeClaim, StorageClass and CSINode objects. Pods with a
// spec.nodeName are placed; each other pod is evaluated alone against the placed pods. Output:
//   scenario <i>
//   <namespace>/<pod> <node> <ok | rejecting plugin>      (per pending pod, per node)
// or `scenario <i> error <message>` when the line cannot be decoded.
#include <fstream>
#include <iostream>
#include <string>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "controller/api/codec.h"
#include "controller/feasibility/feasibility.h"

namespace {

using draco::Status;
using draco::feasibility::Snapshot;
namespace api = draco::api;

std::string Compact(const rapidjson::Value& v) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  v.Accept(w);
  return std::string(buf.GetString(), buf.GetSize());
}

template <class T>
Status Add(const std::string& json, size_t i, std::shared_ptr<const T>& out) {
  auto r = api::Decode<T>(json);
  if (!r.ok())
    return draco::InvalidArgumentError("items[" + std::to_string(i) + "]: " + r.status().message());
  out = std::make_shared<T>(std::move(*r));
  return draco::OkStatus();
}

Status Load(const std::string& line, Snapshot& snap,
            std::vector<std::shared_ptr<const api::Pod>>& pending) {
  rapidjson::Document doc;
  doc.Parse(line.c_str(), line.size());
  if (doc.HasParseError() || !doc.IsObject()) return draco::InvalidArgumentError("invalid JSON");
  auto items = doc.FindMember("items");
  if (items == doc.MemberEnd() || !items->value.IsArray()) {
    return draco::InvalidArgumentError("missing items array");
  }
  for (size_t i = 0; i < items->value.Size(); ++i) {
    const auto& it = items->value[i];
    auto kind = it.IsObject() ? it.FindMember("kind") : it.MemberEnd();
    if (!it.IsObject() || kind == it.MemberEnd() || !kind->value.IsString()) {
      return draco::InvalidArgumentError("items[" + std::to_string(i) + "]: missing kind");
    }
    std::string k = kind->value.GetString();
    std::string json = Compact(it);
    Status s = draco::OkStatus();
    if (k == "Node") {
      std::shared_ptr<const api::Node> n;
      s = Add(json, i, n);
      if (s.ok()) snap.nodes.push_back(n);
    } else if (k == "Pod") {
      std::shared_ptr<const api::Pod> p;
      s = Add(json, i, p);
      if (s.ok() && p->spec.node_name.empty()) pending.push_back(p);
      if (s.ok() && !p->spec.node_name.empty()) snap.pods.push_back({p, p->spec.node_name});
    } else if (k == "Namespace") {
      std::shared_ptr<const api::Namespace> o;
      s = Add(json, i, o);
      if (s.ok()) snap.namespaces[o->metadata.name] = o;
    } else if (k == "PersistentVolume") {
      std::shared_ptr<const api::PersistentVolume> o;
      s = Add(json, i, o);
      if (s.ok()) snap.pvs[o->metadata.name] = o;
    } else if (k == "PersistentVolumeClaim") {
      std::shared_ptr<const api::PersistentVolumeClaim> o;
      s = Add(json, i, o);
      if (s.ok()) snap.pvcs[o->metadata.namespace_ + "/" + o->metadata.name] = o;
    } else if (k == "StorageClass") {
      std::shared_ptr<const api::StorageClass> o;
      s = Add(json, i, o);
      if (s.ok()) snap.storage_classes[o->metadata.name] = o;
    } else if (k == "CSINode") {
      std::shared_ptr<const api::CSINode> o;
      s = Add(json, i, o);
      if (s.ok()) snap.csi_nodes[o->metadata.name] = o;
    } else {
      return draco::InvalidArgumentError("items[" + std::to_string(i) + "]: unsupported kind " + k);
    }
    if (!s.ok()) return s;
  }
  return draco::OkStatus();
}

void RunScenario(size_t index, const std::string& line, std::ostream& out) {
  Snapshot snap;
  std::vector<std::shared_ptr<const api::Pod>> pending;
  Status s = Load(line, snap, pending);
  if (!s.ok()) {
    std::string msg = s.message();
    for (char& c : msg) {
      if (c == '\n') c = ' ';
    }
    out << "scenario " << index << " error " << msg << "\n";
    return;
  }
  out << "scenario " << index << "\n";
  for (const auto& pod : pending) {
    auto verdicts = draco::feasibility::Evaluate(*pod, snap);
    for (size_t i = 0; i < verdicts.size(); ++i) {
      out << pod->metadata.namespace_ << "/" << pod->metadata.name << " "
          << snap.nodes[i]->metadata.name << " "
          << (verdicts[i].passed ? std::string("ok") : verdicts[i].plugin) << "\n";
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::ifstream file;
  std::istream* in = &std::cin;
  if (argc > 1 && std::string(argv[1]) != "-") {
    file.open(argv[1]);
    if (!file) {
      std::cerr << "feasibility_harness: cannot open " << argv[1] << "\n";
      return 2;
    }
    in = &file;
  }
  std::ios::sync_with_stdio(false);
  std::string line;
  size_t index = 0;
  while (std::getline(*in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    RunScenario(index++, line, std::cout);
  }
  return 0;
}
