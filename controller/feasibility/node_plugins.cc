// NodeName, NodeUnschedulable, TaintToleration, NodeAffinity, NodePorts and NodeResourcesFit
// (pkg/scheduler/framework/plugins/{nodename,nodeunschedulable,tainttoleration,nodeaffinity,
// nodeports,noderesources}).
#include <tuple>

#include "controller/feasibility/plugin.h"

namespace draco::feasibility::internal {

ClusterIndex ClusterIndex::Build(const Snapshot& snapshot) {
  ClusterIndex c;
  c.snapshot = &snapshot;
  c.nodes.reserve(snapshot.nodes.size());
  c.by_name.reserve(snapshot.nodes.size());
  const bool precomputed = snapshot.node_allocatable.size() == snapshot.nodes.size();
  for (size_t i = 0; i < snapshot.nodes.size(); ++i) {
    const api::Node& n = *snapshot.nodes[i];
    NodeInfo info;
    info.node = &n;
    const Resources* known = precomputed ? snapshot.node_allocatable[i].get() : nullptr;
    info.allocatable = known != nullptr ? *known : FromResourceList(n.status.allocatable);
    c.by_name.emplace(n.metadata.name, c.nodes.size());
    c.nodes.push_back(std::move(info));
  }
  for (const auto& p : snapshot.pods) {
    auto it = c.by_name.find(p.node);
    if (it == c.by_name.end() || !p.pod) continue;
    // kube-scheduler's pod informer excludes finished pods (status.phase!=Succeeded,Failed).
    if (p.pod->status.phase == "Succeeded" || p.pod->status.phase == "Failed") continue;
    NodeInfo& info = c.nodes[it->second];
    info.pods.push_back(p.pod.get());
    if (p.requests) {
      info.requested.Add(*p.requests);
    } else {
      info.requested.Add(FromResourceList(PlacedPodRequests(*p.pod)));
    }
  }
  return c;
}

bool MatchesRequiredNodeAffinity(const api::Pod& pod, const api::Node& node) {
  for (const auto& [k, v] : pod.spec.node_selector) {
    auto it = node.metadata.labels.find(k);
    if (it == node.metadata.labels.end() || it->second != v) return false;
  }
  const auto& aff = pod.spec.affinity;
  if (aff && aff->node_affinity &&
      aff->node_affinity->required_during_scheduling_ignored_during_execution) {
    return api::NodeSelectorMatches(
        *aff->node_affinity->required_during_scheduling_ignored_during_execution,
        node.metadata.labels, node.metadata.name);
  }
  return true;
}

const api::Taint* FirstUntoleratedTaint(const api::Pod& pod, const api::Node& node) {
  for (const auto& taint : node.spec.taints) {
    if (taint.effect != "NoSchedule" && taint.effect != "NoExecute") continue;
    bool tolerated = false;
    for (const auto& t : pod.spec.tolerations) {
      if (api::TolerationToleratesTaint(t, taint)) {
        tolerated = true;
        break;
      }
    }
    if (!tolerated) return &taint;
  }
  return nullptr;
}

namespace {

class NodeName : public Plugin {
 public:
  std::string_view Name() const override { return "NodeName"; }
  PreResult PreFilter(const api::Pod& pod, const ClusterIndex&) override {
    if (pod.spec.node_name.empty()) return PreResult::Skip();
    PreResult r;
    r.node_names = std::set<std::string>{pod.spec.node_name};
    return r;
  }
  Rejection Filter(const api::Pod& pod, const NodeInfo& n) const override {
    if (pod.spec.node_name.empty() || pod.spec.node_name == n.node->metadata.name) return "";
    return "node(s) didn't match the requested node name";
  }
};

class NodeUnschedulable : public Plugin {
 public:
  std::string_view Name() const override { return "NodeUnschedulable"; }
  PreResult PreFilter(const api::Pod&, const ClusterIndex&) override { return PreResult::Ok(); }
  Rejection Filter(const api::Pod& pod, const NodeInfo& n) const override {
    if (!n.node->spec.unschedulable) return "";
    api::Taint t;
    t.key = "node.kubernetes.io/unschedulable";
    t.effect = "NoSchedule";
    for (const auto& tol : pod.spec.tolerations) {
      if (api::TolerationToleratesTaint(tol, t)) return "";
    }
    return "node(s) were unschedulable";
  }
};

class TaintToleration : public Plugin {
 public:
  std::string_view Name() const override { return "TaintToleration"; }
  PreResult PreFilter(const api::Pod&, const ClusterIndex&) override { return PreResult::Ok(); }
  Rejection Filter(const api::Pod& pod, const NodeInfo& n) const override {
    const api::Taint* t = FirstUntoleratedTaint(pod, *n.node);
    if (!t) return "";
    return "node(s) had untolerated taint {" + t->key + (t->value.empty() ? "" : ": " + t->value) +
           "}";
  }
};

class NodeAffinity : public Plugin {
 public:
  std::string_view Name() const override { return "NodeAffinity"; }
  PreResult PreFilter(const api::Pod& pod, const ClusterIndex&) override {
    const auto& aff = pod.spec.affinity;
    bool no_affinity = !aff || !aff->node_affinity ||
                       !aff->node_affinity->required_during_scheduling_ignored_during_execution;
    if (no_affinity && pod.spec.node_selector.empty()) return PreResult::Skip();
    if (no_affinity) return PreResult::Ok();
    const auto& terms = aff->node_affinity->required_during_scheduling_ignored_during_execution
                            ->node_selector_terms;
    if (terms.empty()) return PreResult::Ok();
    std::optional<std::set<std::string>> names;
    for (const auto& t : terms) {
      std::optional<std::set<std::string>> term_names;
      for (const auto& r : t.match_fields) {
        if (r.key != "metadata.name" || r.operator_ != "In") continue;
        std::set<std::string> s(r.values.begin(), r.values.end());
        if (!term_names) {
          term_names = std::move(s);
        } else {
          std::set<std::string> both;
          for (const auto& v : s) {
            if (term_names->count(v)) both.insert(v);
          }
          term_names = std::move(both);
        }
      }
      if (!term_names) return PreResult::Ok();  // a term without name affinity: all nodes
      if (!names) names.emplace();
      names->insert(term_names->begin(), term_names->end());
    }
    if (names && names->empty()) {
      return PreResult::Reject("pod affinity terms conflict");
    }
    PreResult r;
    r.node_names = std::move(names);
    return r;
  }
  Rejection Filter(const api::Pod& pod, const NodeInfo& n) const override {
    if (MatchesRequiredNodeAffinity(pod, *n.node)) return "";
    return "node(s) didn't match Pod's node affinity/selector";
  }
};

// (ip, protocol, port) with upstream's sanitising: "" ip = 0.0.0.0, "" protocol = TCP.
using HostPort = std::tuple<std::string, std::string, int64_t>;

std::vector<HostPort> HostPorts(const api::Pod& pod) {
  std::vector<HostPort> out;
  auto add = [&](const api::Container& c) {
    for (const auto& p : c.ports) {
      if (p.host_port <= 0) continue;
      out.emplace_back(p.host_ip.empty() ? "0.0.0.0" : p.host_ip,
                       p.protocol.empty() ? "TCP" : p.protocol, p.host_port);
    }
  };
  for (const auto& c : pod.spec.init_containers) {
    if (c.restart_policy && *c.restart_policy == "Always") add(c);
  }
  for (const auto& c : pod.spec.containers) add(c);
  return out;
}

class NodePorts : public Plugin {
 public:
  std::string_view Name() const override { return "NodePorts"; }
  PreResult PreFilter(const api::Pod& pod, const ClusterIndex&) override {
    want_ = HostPorts(pod);
    return want_.empty() ? PreResult::Skip() : PreResult::Ok();
  }
  Rejection Filter(const api::Pod&, const NodeInfo& n) const override {
    for (const auto* p : n.pods) {
      for (const auto& [uip, uproto, uport] : HostPorts(*p)) {
        for (const auto& [ip, proto, port] : want_) {
          if (proto != uproto || port != uport) continue;
          if (ip == "0.0.0.0" || uip == "0.0.0.0" || ip == uip) {
            return "node(s) didn't have free ports for the requested pod ports";
          }
        }
      }
    }
    return "";
  }

 private:
  std::vector<HostPort> want_;
};

class NodeResourcesFit : public Plugin {
 public:
  std::string_view Name() const override { return "NodeResourcesFit"; }
  PreResult PreFilter(const api::Pod& pod, const ClusterIndex& index) override {
    req_ = FromResourceList(PodSpecRequests(pod));
    dra_ = index.snapshot != nullptr ? &index.snapshot->dra_extended_resources : nullptr;
    return PreResult::Ok();
  }
  Rejection Filter(const api::Pod&, const NodeInfo& n) const override {
    const Resources& a = n.allocatable;
    const Resources& u = n.requested;
    if (static_cast<int64_t>(n.pods.size()) + 1 > a.pods) return "Too many pods";
    if (req_.IsZero()) return "";
    if (req_.milli_cpu > 0 && req_.milli_cpu > a.milli_cpu - u.milli_cpu) {
      return "Insufficient cpu";
    }
    if (req_.memory > 0 && req_.memory > a.memory - u.memory) return "Insufficient memory";
    if (req_.ephemeral_storage > 0 &&
        req_.ephemeral_storage > a.ephemeral_storage - u.ephemeral_storage) {
      return "Insufficient ephemeral-storage";
    }
    for (const auto& [name, q] : req_.scalar) {
      if (q <= 0) continue;
      auto at = a.scalar.find(name);
      auto ut = u.scalar.find(name);
      const int64_t allocatable = at == a.scalar.end() ? 0 : at->second;
      // upstream shouldDelegateResourceToDRA: no device plugin offers it here, a class serves it.
      if (allocatable <= 0 && dra_ != nullptr && dra_->count(name) != 0) continue;
      int64_t avail = allocatable - (ut == u.scalar.end() ? 0 : ut->second);
      if (q > avail) return "Insufficient " + name;
    }
    return "";
  }

 private:
  Resources req_;
  const std::set<std::string>* dra_ = nullptr;  // the snapshot's, valid for this evaluation
};

}  // namespace

std::unique_ptr<Plugin> NewNodeName() { return std::make_unique<NodeName>(); }
std::unique_ptr<Plugin> NewNodeUnschedulable() { return std::make_unique<NodeUnschedulable>(); }
std::unique_ptr<Plugin> NewTaintToleration() { return std::make_unique<TaintToleration>(); }
std::unique_ptr<Plugin> NewNodeAffinity() { return std::make_unique<NodeAffinity>(); }
std::unique_ptr<Plugin> NewNodePorts() { return std::make_unique<NodePorts>(); }
std::unique_ptr<Plugin> NewNodeResourcesFit() { return std::make_unique<NodeResourcesFit>(); }

}  // namespace draco::feasibility::internal
