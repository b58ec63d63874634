#include "controller/simulate/workloads.h"

#include <algorithm>
#include <cstdint>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace draco::simulate {
namespace {

using rapidjson::Value;

constexpr std::string_view kApps = "apps/v1";
constexpr std::string_view kBatch = "batch/v1";
constexpr std::string_view kJobSet = "jobset.x-k8s.io/v1alpha2";
constexpr std::string_view kLws = "leaderworkerset.x-k8s.io/v1";

const Value* Member(const Value& v, const char* key) {
  if (!v.IsObject()) return nullptr;
  auto it = v.FindMember(key);
  return it == v.MemberEnd() || it->value.IsNull() ? nullptr : &it->value;
}

std::string StringAt(const Value& v, const char* a, const char* b) {
  const Value* m = Member(v, a);
  const Value* s = m ? Member(*m, b) : nullptr;
  return s && s->IsString() ? s->GetString() : "";
}

// An optional integer field of `obj`: `def` when absent; an error when negative or not an integer.
StatusOr<int64_t> Count(const Value& obj, const char* key, int64_t def, const std::string& where) {
  const Value* v = Member(obj, key);
  if (!v) return def;
  if (!v->IsInt64() || v->GetInt64() < 0) {
    return InvalidArgumentError(where + "." + key + " must be a non-negative integer");
  }
  return v->GetInt64();
}

// Kubernetes' rand.SafeEncodeString alphabet (no vowels, no ambiguous characters).
std::string SafeHash(std::string_view in, size_t len) {
  static constexpr char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";
  uint64_t h = 14695981039346656037ull;  // FNV-1a
  for (unsigned char c : in) h = (h ^ c) * 1099511628211ull;
  std::string out;
  for (size_t i = 0; i < len; ++i) {
    out.push_back(kAlphabet[h % (sizeof(kAlphabet) - 1)]);
    h = (h / (sizeof(kAlphabet) - 1)) ^ (h << 29) ^ (0x9e3779b97f4a7c15ull * (i + 1));
  }
  return out;
}

std::string Serialize(const Value& v) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  v.Accept(w);
  return buf.GetString();
}

// A Pod manifest named `name` in `ns` from a PodTemplateSpec; `labels` are added to the
// template's (the controllers' own labels, e.g. the completion index).
std::string PodFromTemplate(const Value& tmpl, const std::string& ns, const std::string& name,
                            const std::vector<std::pair<std::string, std::string>>& labels) {
  rapidjson::Document pod(rapidjson::kObjectType);
  auto& a = pod.GetAllocator();
  pod.AddMember("apiVersion", "v1", a);
  pod.AddMember("kind", "Pod", a);
  Value md(rapidjson::kObjectType);
  if (const Value* tmd = Member(tmpl, "metadata"); tmd && tmd->IsObject()) {
    for (const char* k : {"labels", "annotations"}) {
      if (const Value* m = Member(*tmd, k); m && m->IsObject()) {
        md.AddMember(Value(k, a), Value(*m, a), a);
      }
    }
  }
  md.AddMember("name", Value(name.c_str(), a), a);
  md.AddMember("namespace", Value(ns.c_str(), a), a);
  if (!labels.empty()) {
    if (!md.HasMember("labels")) md.AddMember("labels", Value(rapidjson::kObjectType), a);
    for (const auto& [k, v] : labels) {
      Value& l = md["labels"];
      l.RemoveMember(k.c_str());
      l.AddMember(Value(k.c_str(), a), Value(v.c_str(), a), a);
    }
  }
  pod.AddMember("metadata", md, a);
  pod.AddMember("spec", Value(*Member(tmpl, "spec"), a), a);
  return Serialize(pod);
}

StatusOr<const Value*> PodTemplate(const Value& spec, const char* key, const std::string& where) {
  const Value* t = Member(spec, key);
  const Value* s = t ? Member(*t, "spec") : nullptr;
  if (!s || !s->IsObject()) return InvalidArgumentError(where + "." + key + ".spec is missing");
  return t;
}

// Pods of a Job named `job` with JobSpec `spec`.
Status ExpandJob(const Value& spec, const std::string& ns, const std::string& job,
                 bool indexed_default, const std::string& where, std::vector<std::string>* out) {
  auto tmpl = PodTemplate(spec, "template", where);
  if (!tmpl.ok()) return tmpl.status();
  auto parallelism = Count(spec, "parallelism", 1, where);
  if (!parallelism.ok()) return parallelism.status();
  auto completions = Count(spec, "completions", -1, where);
  if (!completions.ok()) return completions.status();
  int64_t n = *parallelism;
  if (*completions >= 0) n = std::min(n, *completions);
  if (const Value* s = Member(spec, "suspend"); s && s->IsBool() && s->GetBool()) n = 0;
  const Value* mode = Member(spec, "completionMode");
  bool indexed =
      mode && mode->IsString() ? std::string_view(mode->GetString()) == "Indexed" : indexed_default;
  for (int64_t i = 0; i < n; ++i) {
    std::string idx = std::to_string(i);
    std::string base = indexed ? job + "-" + idx : job;
    std::vector<std::pair<std::string, std::string>> labels = {{"job-name", job}};
    if (indexed) labels.push_back({"batch.kubernetes.io/job-completion-index", idx});
    out->push_back(PodFromTemplate(**tmpl, ns, base + "-" + SafeHash(job + "/" + idx, 5), labels));
  }
  return OkStatus();
}

Status ExpandJobSet(const Value& spec, const std::string& ns, const std::string& name,
                    const std::string& where, std::vector<std::string>* out) {
  const Value* rjobs = Member(spec, "replicatedJobs");
  if (!rjobs || !rjobs->IsArray()) return InvalidArgumentError(where + ".replicatedJobs missing");
  for (rapidjson::SizeType i = 0; i < rjobs->Size(); ++i) {
    const Value& rj = (*rjobs)[i];
    std::string w = where + ".replicatedJobs[" + std::to_string(i) + "]";
    const Value* rn = Member(rj, "name");
    if (!rn || !rn->IsString()) return InvalidArgumentError(w + ".name missing");
    auto replicas = Count(rj, "replicas", 1, w);
    if (!replicas.ok()) return replicas.status();
    const Value* jt = Member(rj, "template");
    const Value* js = jt ? Member(*jt, "spec") : nullptr;
    if (!js || !js->IsObject()) return InvalidArgumentError(w + ".template.spec is missing");
    for (int64_t j = 0; j < *replicas; ++j) {
      std::string job = name + "-" + rn->GetString() + "-" + std::to_string(j);
      if (Status s = ExpandJob(*js, ns, job, true, w + ".template.spec", out); !s.ok()) return s;
    }
  }
  return OkStatus();
}

Status ExpandLeaderWorkerSet(const Value& spec, const std::string& ns, const std::string& name,
                             const std::string& where, std::vector<std::string>* out) {
  auto groups = Count(spec, "replicas", 1, where);
  if (!groups.ok()) return groups.status();
  const Value* lwt = Member(spec, "leaderWorkerTemplate");
  if (!lwt) return InvalidArgumentError(where + ".leaderWorkerTemplate is missing");
  std::string w = where + ".leaderWorkerTemplate";
  auto size = Count(*lwt, "size", 1, w);
  if (!size.ok()) return size.status();
  auto worker = PodTemplate(*lwt, "workerTemplate", w);
  if (!worker.ok()) return worker.status();
  const Value* leader = *worker;
  if (Member(*lwt, "leaderTemplate")) {
    auto l = PodTemplate(*lwt, "leaderTemplate", w);
    if (!l.ok()) return l.status();
    leader = *l;
  }
  for (int64_t g = 0; g < *groups; ++g) {
    std::string group = name + "-" + std::to_string(g);
    std::vector<std::pair<std::string, std::string>> labels = {
        {"leaderworkerset.sigs.k8s.io/name", name},
        {"leaderworkerset.sigs.k8s.io/group-index", std::to_string(g)},
        {"leaderworkerset.sigs.k8s.io/worker-index", "0"}};
    if (*size > 0) out->push_back(PodFromTemplate(*leader, ns, group, labels));
    for (int64_t k = 1; k < *size; ++k) {
      labels.back().second = std::to_string(k);
      out->push_back(PodFromTemplate(**worker, ns, group + "-" + std::to_string(k), labels));
    }
  }
  return OkStatus();
}

}  // namespace

bool IsWorkloadKind(std::string_view api_version, std::string_view kind) {
  if (api_version == kApps) {
    return kind == "Deployment" || kind == "ReplicaSet" || kind == "StatefulSet";
  }
  return (api_version == kBatch && kind == "Job") || (api_version == kJobSet && kind == "JobSet") ||
         (api_version == kLws && kind == "LeaderWorkerSet");
}

StatusOr<std::vector<std::string>> ExpandWorkload(const Value& doc) {
  const Value* av = Member(doc, "apiVersion");
  const Value* kv = Member(doc, "kind");
  std::string api_version = av && av->IsString() ? av->GetString() : "";
  std::string kind = kv && kv->IsString() ? kv->GetString() : "";
  if (!IsWorkloadKind(api_version, kind)) {
    return InvalidArgumentError(api_version + " " + kind + " is not a workload simulate expands");
  }
  std::string name = StringAt(doc, "metadata", "name");
  std::string ns = StringAt(doc, "metadata", "namespace");
  if (ns.empty()) ns = "default";
  if (name.empty()) return InvalidArgumentError(kind + " without metadata.name");
  const Value* spec = Member(doc, "spec");
  if (!spec || !spec->IsObject()) return InvalidArgumentError(kind + " " + name + ": no spec");
  const std::string where = kind + " " + ns + "/" + name + ": spec";
  std::vector<std::string> out;
  Status st;
  if (kind == "Job") {
    st = ExpandJob(*spec, ns, name, false, where, &out);
  } else if (kind == "JobSet") {
    st = ExpandJobSet(*spec, ns, name, where, &out);
  } else if (kind == "LeaderWorkerSet") {
    st = ExpandLeaderWorkerSet(*spec, ns, name, where, &out);
  } else {
    auto tmpl = PodTemplate(*spec, "template", where);
    if (!tmpl.ok()) return tmpl.status();
    auto replicas = Count(*spec, "replicas", 1, where);
    if (!replicas.ok()) return replicas.status();
    int64_t start = 0;
    if (const Value* o = Member(*spec, "ordinals"); o && kind == "StatefulSet") {
      auto s = Count(*o, "start", 0, where + ".ordinals");
      if (!s.ok()) return s.status();
      start = *s;
    }
    // A Deployment's pods belong to its ReplicaSet "<deployment>-<pod-template-hash>".
    std::string hash = SafeHash(Serialize(**tmpl), 10);
    std::string owner = kind == "Deployment" ? name + "-" + hash : name;
    std::vector<std::pair<std::string, std::string>> labels;
    if (kind == "Deployment") labels.push_back({"pod-template-hash", hash});
    for (int64_t i = 0; i < *replicas; ++i) {
      std::string pod = kind == "StatefulSet"
                            ? name + "-" + std::to_string(start + i)
                            : owner + "-" + SafeHash(owner + "/" + std::to_string(i), 5);
      out.push_back(PodFromTemplate(**tmpl, ns, pod, labels));
    }
  }
  if (!st.ok()) return st;
  return out;
}

}  // namespace draco::simulate
