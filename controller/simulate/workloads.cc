#include "controller/simulate/workloads.h"

#include <algorithm>
#include <cstdint>
#include <string_view>

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
  static constexpr std::string_view kAlphabet = "bcdfghjklmnpqrstvwxz2456789";
  uint64_t h = 14695981039346656037ull;  // FNV-1a
  for (unsigned char c : in) h = (h ^ c) * 1099511628211ull;
  std::string out;
  for (size_t i = 0; i < len; ++i) {
    out.push_back(kAlphabet[h % kAlphabet.size()]);
    h = (h / kAlphabet.size()) ^ (h << 29) ^ (0x9e3779b97f4a7c15ull * (i + 1));
  }
  return out;
}

std::string Serialize(const Value& v) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  v.Accept(w);
  return buf.GetString();
}

using Pairs = std::vector<std::pair<std::string, std::string>>;

// What a workload controller adds to the template's metadata: labels and annotations that
// replace the template's, and annotations set only when the template has no such label or
// annotation (a user's value wins).
struct PodMeta {
  Pairs labels;
  Pairs annotations;
  Pairs default_annotations;
};

// Sets `v` under `key` in the object `map[field]` (created when absent).
void Put(Value& map, const char* field, const std::string& key, const std::string& v,
         rapidjson::Document::AllocatorType& a) {
  if (!map.HasMember(field)) map.AddMember(Value(field, a), Value(rapidjson::kObjectType), a);
  Value& m = map[field];
  m.RemoveMember(key.c_str());
  m.AddMember(Value(key.c_str(), a), Value(v.c_str(), a), a);
}

bool Has(const Value& md, const char* field, const std::string& key) {
  const Value* m = Member(md, field);
  return m && m->IsObject() && m->HasMember(key.c_str());
}

// A Pod manifest named `name` in `ns` from a PodTemplateSpec, with `meta` added to the
// template's metadata.
std::string PodFromTemplate(const Value& tmpl, const std::string& ns, const std::string& name,
                            const PodMeta& meta) {
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
  for (const auto& [k, v] : meta.labels) Put(md, "labels", k, v, a);
  for (const auto& [k, v] : meta.annotations) Put(md, "annotations", k, v, a);
  for (const auto& [k, v] : meta.default_annotations) {
    if (!Has(md, "labels", k) && !Has(md, "annotations", k)) Put(md, "annotations", k, v, a);
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

// The number of pods a Job with JobSpec `spec` runs at once.
StatusOr<int64_t> JobPods(const Value& spec, const std::string& where) {
  auto parallelism = Count(spec, "parallelism", 1, where);
  if (!parallelism.ok()) return parallelism.status();
  auto completions = Count(spec, "completions", -1, where);
  if (!completions.ok()) return completions.status();
  int64_t n = *parallelism;
  if (*completions >= 0) n = std::min(n, *completions);
  if (const Value* s = Member(spec, "suspend"); s && s->IsBool() && s->GetBool()) n = 0;
  return n;
}

// Pods of a Job named `job` with JobSpec `spec`; `meta` is added to each (the JobSet's).
Status ExpandJob(const Value& spec, const std::string& ns, const std::string& job,
                 bool indexed_default, const std::string& where, const PodMeta& meta,
                 std::vector<std::string>* out) {
  auto tmpl = PodTemplate(spec, "template", where);
  if (!tmpl.ok()) return tmpl.status();
  auto n = JobPods(spec, where);
  if (!n.ok()) return n.status();
  const Value* mode = Member(spec, "completionMode");
  bool indexed =
      mode && mode->IsString() ? std::string_view(mode->GetString()) == "Indexed" : indexed_default;
  for (int64_t i = 0; i < *n; ++i) {
    std::string idx = std::to_string(i);
    std::string pod_name = job;
    if (indexed) pod_name.append("-").append(idx);
    std::string hashed = job;
    pod_name.append("-").append(SafeHash(hashed.append("/").append(idx), 5));
    PodMeta m = meta;
    m.labels.push_back({"job-name", job});
    if (indexed) m.labels.push_back({"batch.kubernetes.io/job-completion-index", idx});
    out->push_back(PodFromTemplate(**tmpl, ns, pod_name, m));
  }
  return OkStatus();
}

Status ExpandJobSet(const Value& spec, const std::string& ns, const std::string& name,
                    const std::string& where, std::vector<std::string>* out) {
  const Value* rjobs = Member(spec, "replicatedJobs");
  if (!rjobs || !rjobs->IsArray()) return InvalidArgumentError(where + ".replicatedJobs missing");
  struct Replicated {
    std::string name, where;
    int64_t replicas = 0;
    const Value* job_spec = nullptr;
  };
  std::vector<Replicated> rjs;
  int64_t jobs = 0, pods = 0;
  for (rapidjson::SizeType i = 0; i < rjobs->Size(); ++i) {
    const Value& rj = (*rjobs)[i];
    Replicated r;
    r.where = where + ".replicatedJobs[" + std::to_string(i) + "]";
    const Value* rn = Member(rj, "name");
    if (!rn || !rn->IsString()) return InvalidArgumentError(r.where + ".name missing");
    r.name = rn->GetString();
    auto replicas = Count(rj, "replicas", 1, r.where);
    if (!replicas.ok()) return replicas.status();
    r.replicas = *replicas;
    const Value* jt = Member(rj, "template");
    r.job_spec = jt ? Member(*jt, "spec") : nullptr;
    if (!r.job_spec || !r.job_spec->IsObject()) {
      return InvalidArgumentError(r.where + ".template.spec is missing");
    }
    auto per_job = JobPods(*r.job_spec, r.where + ".template.spec");
    if (!per_job.ok()) return per_job.status();
    jobs += r.replicas;
    pods += r.replicas * *per_job;
    rjs.push_back(std::move(r));
  }
  // What the JobSet controller puts on its pods, and the group's size (see workloads.h).
  const std::string global = std::to_string(jobs);
  PodMeta meta;
  meta.labels = {{"jobset.sigs.k8s.io/jobset-name", name},
                 {"jobset.sigs.k8s.io/global-replicas", global}};
  meta.annotations = meta.labels;
  if (pods > 0) meta.default_annotations = {{"draco.dev/group-min-members", std::to_string(pods)}};
  for (const Replicated& r : rjs) {
    for (int64_t j = 0; j < r.replicas; ++j) {
      std::string job = name + "-" + r.name + "-" + std::to_string(j);
      PodMeta m = meta;
      for (Pairs* p : {&m.labels, &m.annotations}) {
        p->push_back({"jobset.sigs.k8s.io/replicatedjob-name", r.name});
        p->push_back({"jobset.sigs.k8s.io/job-index", std::to_string(j)});
      }
      Status s = ExpandJob(*r.job_spec, ns, job, true, r.where + ".template.spec", m, out);
      if (!s.ok()) return s;
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
    // One leader and its workers form a group (group-key: the real controller hashes the
    // namespace and the leader's name too, with SHA-1).
    std::string hashed = ns;
    hashed.append("/").append(group);
    PodMeta meta;
    meta.labels = {{"leaderworkerset.sigs.k8s.io/name", name},
                   {"leaderworkerset.sigs.k8s.io/group-index", std::to_string(g)},
                   {"leaderworkerset.sigs.k8s.io/group-key", SafeHash(hashed, 40)},
                   {"leaderworkerset.sigs.k8s.io/worker-index", "0"}};
    meta.annotations = {{"leaderworkerset.sigs.k8s.io/size", std::to_string(*size)}};
    if (*size > 0) out->push_back(PodFromTemplate(*leader, ns, group, meta));
    for (int64_t k = 1; k < *size; ++k) {
      meta.labels.back().second = std::to_string(k);
      out->push_back(PodFromTemplate(**worker, ns, group + "-" + std::to_string(k), meta));
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
    st = ExpandJob(*spec, ns, name, false, where, PodMeta{}, &out);
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
    PodMeta meta;
    if (kind == "Deployment") meta.labels.push_back({"pod-template-hash", hash});
    for (int64_t i = 0; i < *replicas; ++i) {
      std::string pod = kind == "StatefulSet"
                            ? name + "-" + std::to_string(start + i)
                            : owner + "-" + SafeHash(owner + "/" + std::to_string(i), 5);
      out.push_back(PodFromTemplate(**tmpl, ns, pod, meta));
    }
  }
  if (!st.ok()) return st;
  return out;
}

}  // namespace draco::simulate
