// Test doubles for the reconcilers' seams (header-only, tests only).
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "controller/reconcilers/cluster_cache.h"
#include "controller/reconcilers/interfaces.h"
#include "k8sclient/api_error.h"

namespace draco::reconcilers::testing {

inline Status ApiErr(int code, const std::string& reason) {
  k8s::ApiError e;
  e.http_code = code;
  e.reason = reason;
  e.message = reason;
  return e.ToStatus();
}

// In-memory API server for claims and pods: resourceVersions, 409 on stale updates, generateName,
// status/main-resource separation, call log, failure injection.
class FakeWriter : public ApiWriter {
 public:
  std::map<std::string, api::ResourceClaim> claims;  // ns/name
  std::map<std::string, api::Pod> pods;
  std::vector<std::string> calls;
  // Call names to fail once with 500 (409 for "conflict:", 403 for "forbidden:", a connection
  // reset for "transport:"; "lost:create" creates the claim and then reports a connection reset,
  // as when the answer is lost).
  std::set<std::string> fail_next;
  int rv = 1000;
  int name_seq = 0;
  // Run once, just before the named call ("apply", "create", "status", ...) is served: lets a test
  // interleave another sync there, as a second worker would.
  std::map<std::string, std::function<void()>> interleave_before;

  bool Fail(const std::string& call, Status* st) {
    if (auto it = interleave_before.find(call); it != interleave_before.end()) {
      auto f = std::move(it->second);
      interleave_before.erase(it);
      f();
    }
    if (fail_next.erase("conflict:" + call)) {
      *st = ApiErr(409, "Conflict");
      return true;
    }
    if (fail_next.erase("forbidden:" + call)) {
      *st = ApiErr(403, "Forbidden");
      return true;
    }
    if (fail_next.erase("transport:" + call)) {
      *st = UnavailableError(call + ": Connection reset by peer");
      return true;
    }
    if (fail_next.erase(call)) {
      *st = ApiErr(500, "InternalError");
      return true;
    }
    return false;
  }
  static std::string K(const std::string& ns, const std::string& n) { return ns + "/" + n; }

  StatusOr<ClaimPtr> CreateClaim(const api::ResourceClaim& c) override {
    calls.push_back("create " + c.metadata.generate_name);
    Status st;
    if (Fail("create", &st)) return st;
    api::ResourceClaim s = c;
    if (s.metadata.name.empty())
      s.metadata.name = c.metadata.generate_name + "x" + std::to_string(++name_seq);
    if (claims.count(K(s.metadata.namespace_, s.metadata.name))) {
      return ApiErr(409, "AlreadyExists");
    }
    s.metadata.uid = "uid-" + s.metadata.name;
    s.metadata.resource_version = std::to_string(++rv);
    s.metadata.creation_timestamp = "2026-01-01T00:00:00Z";
    claims[K(s.metadata.namespace_, s.metadata.name)] = s;
    if (fail_next.erase("lost:create")) return UnavailableError("create: Connection reset by peer");
    return std::make_shared<const api::ResourceClaim>(s);
  }
  StatusOr<ClaimPtr> Put(const api::ResourceClaim& c, bool status) {
    auto it = claims.find(K(c.metadata.namespace_, c.metadata.name));
    if (it == claims.end()) return ApiErr(404, "NotFound");
    if (c.metadata.resource_version != it->second.metadata.resource_version) {
      return ApiErr(409, "Conflict");
    }
    api::ResourceClaim s = it->second;
    if (status) {
      s.status = c.status;
    } else {
      s.metadata.finalizers = c.metadata.finalizers;
      s.metadata.labels = c.metadata.labels;
      s.metadata.annotations = c.metadata.annotations;
    }
    s.metadata.resource_version = std::to_string(++rv);
    if (s.metadata.deletion_timestamp && s.metadata.finalizers.empty()) {
      claims.erase(it);
    } else {
      it->second = s;
    }
    return std::make_shared<const api::ResourceClaim>(s);
  }
  StatusOr<ClaimPtr> UpdateClaim(const api::ResourceClaim& c) override {
    calls.push_back("update " + c.metadata.name);
    Status st;
    if (Fail("update", &st)) return st;
    return Put(c, false);
  }
  StatusOr<ClaimPtr> UpdateClaimStatus(const api::ResourceClaim& c) override {
    calls.push_back("status " + c.metadata.name);
    Status st;
    if (Fail("status", &st)) return st;
    return Put(c, true);
  }
  Status DeleteClaim(const std::string& ns, const std::string& name,
                     const std::string& uid) override {
    calls.push_back("delete " + name);
    auto it = claims.find(K(ns, name));
    if (it == claims.end()) return ApiErr(404, "NotFound");
    if (!uid.empty() && it->second.metadata.uid != uid) return ApiErr(409, "Conflict");
    if (it->second.metadata.finalizers.empty()) {
      claims.erase(it);
    } else {
      it->second.metadata.deletion_timestamp = "2026-01-01T00:00:01Z";
      it->second.metadata.resource_version = std::to_string(++rv);
    }
    return OkStatus();
  }
  StatusOr<PodPtr> ApplyPodClaimStatuses(
      const api::Pod& pod, const std::vector<api::PodResourceClaimStatus>& statuses) override {
    calls.push_back("apply " + pod.metadata.name);
    Status st;
    if (Fail("apply", &st)) return st;
    api::Pod p = pods.count(K(pod.metadata.namespace_, pod.metadata.name))
                     ? pods[K(pod.metadata.namespace_, pod.metadata.name)]
                     : pod;
    p.status.resource_claim_statuses = statuses;
    p.metadata.resource_version = std::to_string(++rv);
    pods[K(pod.metadata.namespace_, pod.metadata.name)] = p;
    return std::make_shared<const api::Pod>(p);
  }
  StatusOr<PodPtr> NominatePod(const api::Pod& pod,
                               const std::vector<api::PodResourceClaimStatus>* statuses,
                               const std::string& node) override {
    calls.push_back("nominate " + pod.metadata.name + " " + node +
                    (statuses != nullptr ? " with statuses" : ""));
    Status st;
    if (Fail("nominate", &st)) return st;
    api::Pod p = pods.count(K(pod.metadata.namespace_, pod.metadata.name))
                     ? pods[K(pod.metadata.namespace_, pod.metadata.name)]
                     : pod;
    if (statuses != nullptr) p.status.resource_claim_statuses = *statuses;
    p.status.nominated_node_name = node;
    p.metadata.resource_version = std::to_string(++rv);
    pods[K(pod.metadata.namespace_, pod.metadata.name)] = p;
    return std::make_shared<const api::Pod>(p);
  }
  StatusOr<PodPtr> RemoveSchedulingGate(const api::Pod& pod, std::string_view gate,
                                        const std::string& pin_node) override {
    calls.push_back("ungate " + pod.metadata.name + (pin_node.empty() ? "" : " pin " + pin_node));
    Status st;
    if (Fail("ungate", &st)) return st;
    api::Pod p = pods.count(K(pod.metadata.namespace_, pod.metadata.name))
                     ? pods[K(pod.metadata.namespace_, pod.metadata.name)]
                     : pod;
    std::erase_if(p.spec.scheduling_gates, [&](const auto& g) { return g.name == gate; });
    if (!pin_node.empty()) Pin(p, pin_node);
    p.metadata.resource_version = std::to_string(++rv);
    pods[K(pod.metadata.namespace_, pod.metadata.name)] = p;
    return std::make_shared<const api::Pod>(p);
  }
  // The pin as the real writer adds it: `metadata.name In [node]` ANDed into every required term.
  static void Pin(api::Pod& p, const std::string& node) {
    api::NodeSelectorRequirement r;
    r.key = "metadata.name";
    r.operator_ = "In";
    r.values = {node};
    if (!p.spec.affinity) p.spec.affinity.emplace();
    if (!p.spec.affinity->node_affinity) p.spec.affinity->node_affinity.emplace();
    auto& req = p.spec.affinity->node_affinity->required_during_scheduling_ignored_during_execution;
    if (!req) req.emplace();
    if (req->node_selector_terms.empty()) req->node_selector_terms.emplace_back();
    for (auto& t : req->node_selector_terms) t.match_fields.push_back(r);
  }
  std::map<std::string, api::Pod> live_pods;
  StatusOr<PodPtr> GetPodLive(const std::string& ns, const std::string& name) override {
    calls.push_back("get " + name);
    auto it = live_pods.find(K(ns, name));
    if (it == live_pods.end()) return PodPtr(nullptr);
    return std::make_shared<const api::Pod>(it->second);
  }
  std::map<std::string, api::PodGroup> pod_groups;  // status applies land here; also live GETs
  StatusOr<PodGroupPtr> ApplyPodGroupClaimStatuses(
      const api::PodGroup& group,
      const std::vector<api::PodGroupResourceClaimStatus>& statuses) override {
    calls.push_back("apply podgroup " + group.metadata.name);
    Status st;
    if (Fail("apply podgroup", &st)) return st;
    const std::string k = K(group.metadata.namespace_, group.metadata.name);
    api::PodGroup g = pod_groups.count(k) ? pod_groups[k] : group;
    g.status.resource_claim_statuses = statuses;
    g.metadata.resource_version = std::to_string(++rv);
    pod_groups[k] = g;
    return std::make_shared<const api::PodGroup>(g);
  }
  std::vector<api::Pod> created_pods;  // CreatePod; names are generateName + a counter
  StatusOr<PodPtr> CreatePod(const api::Pod& pod) override {
    calls.push_back("create pod " + pod.metadata.generate_name);
    Status st;
    if (Fail("create pod", &st)) return st;
    api::Pod p = pod;
    p.metadata.name = pod.metadata.generate_name + std::to_string(created_pods.size());
    p.metadata.uid = "probe-uid-" + std::to_string(created_pods.size());
    created_pods.push_back(p);
    return std::make_shared<const api::Pod>(p);
  }
  Status DeletePod(const std::string& ns, const std::string& name, const std::string&) override {
    calls.push_back("delete pod " + K(ns, name));
    Status st;
    if (Fail("delete pod", &st)) return st;
    return OkStatus();
  }
  Status CreateClaimTemplate(const api::ResourceClaimTemplate& t) override {
    calls.push_back("create template " + K(t.metadata.namespace_, t.metadata.name));
    Status st;
    if (Fail("create template", &st)) return st;
    return OkStatus();
  }
  StatusOr<PodGroupPtr> GetPodGroupLive(const std::string& ns, const std::string& name) override {
    calls.push_back("get podgroup " + name);
    auto it = pod_groups.find(K(ns, name));
    if (it == pod_groups.end()) return PodGroupPtr(nullptr);
    return std::make_shared<const api::PodGroup>(it->second);
  }
  int Count(const std::string& prefix) const {
    int n = 0;
    for (const auto& c : calls) n += c.rfind(prefix, 0) == 0;
    return n;
  }
};

class FakeEvents : public EventSink {
 public:
  struct Ev {
    EventTarget target;
    std::string type, reason, message;
  };
  std::vector<Ev> events;
  void Record(const EventTarget& t, std::string_view type, std::string_view reason,
              std::string message) override {
    events.push_back({t, std::string(type), std::string(reason), std::move(message)});
  }
};

class FakeQueue : public Enqueuer {
 public:
  std::set<std::string> added;
  std::set<std::string> urgent;  // keys added with AddUrgent (also in `added`)
  std::set<std::string> next;    // keys added with AddNext (also in `urgent` and `added`)
  void Add(const std::string& key) override { added.insert(key); }
  void AddAfter(const std::string& key, Clock::Duration) override { added.insert(key); }
  void AddUrgent(const std::string& key) override {
    added.insert(key);
    urgent.insert(key);
  }
  void AddNext(const std::string& key) override {
    AddUrgent(key);
    next.insert(key);
  }
};

// Allocates every request on the first candidate node, device "dev-<n>" from pool = node name,
// or returns a scripted failure.
class FakeAllocator : public ClaimAllocator {
 public:
  std::optional<AllocateResponse> next_failure;
  int calls = 0;
  int invalidations = 0;  // Settle(..., written=false) calls
  int settled = 0;        // claims settled
  int next_device = 0;
  std::vector<std::string> last_candidates;
  // Results without a nodeSelector (devices reachable from every node) instead of node-local.
  bool network_attached = false;
  // Copied into every device result (devices with binding conditions).
  std::vector<std::string> binding_conditions;
  std::vector<std::string> binding_failure_conditions;
  AllocateResponse Allocate(const AllocateRequest& req) override {
    ++calls;
    last_candidates.clear();
    for (const auto& n : req.candidates) last_candidates.push_back(n->metadata.name);
    if (next_failure) {
      auto r = *next_failure;
      next_failure.reset();
      return r;
    }
    AllocateResponse r;
    r.kind = AllocateResponse::Kind::kAllocated;
    r.node = req.candidates.front()->metadata.name;
    for (size_t i = 0; i < req.claims.size(); ++i) {
      api::AllocationResult a;
      api::DeviceRequestAllocationResult d;
      d.request = "gpu";
      d.driver = "gpu.example.com";
      d.pool = r.node;
      d.device = "dev-" + std::to_string(next_device++);
      d.binding_conditions = binding_conditions;
      d.binding_failure_conditions = binding_failure_conditions;
      a.devices.results.push_back(d);
      api::NodeSelector ns;
      api::NodeSelectorTerm t;
      api::NodeSelectorRequirement req_;
      req_.key = "metadata.name";
      req_.operator_ = "In";
      req_.values = {r.node};
      t.match_fields.push_back(req_);
      ns.node_selector_terms.push_back(t);
      if (!network_attached) a.node_selector = ns;
      r.results.push_back(a);
    }
    return r;
  }
  void Settle(const std::vector<ClaimPtr>& claims, bool written) override {
    settled += static_cast<int>(claims.size());
    if (!written) ++invalidations;
  }
};

// Plays the informer: the fake API server's claims and pods into the cache.
inline void PlayInformer(const FakeWriter& writer, ClusterCache& cache) {
  for (const auto& [k, c] : writer.claims) {
    cache.UpsertClaim(std::make_shared<const api::ResourceClaim>(c));
  }
  for (const auto& [k, p] : writer.pods) cache.UpsertPod(std::make_shared<const api::Pod>(p));
}

}  // namespace draco::reconcilers::testing
