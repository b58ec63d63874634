#include "controller/reconcilers/node_fit.h"

#include <cmath>

namespace draco::reconcilers {
namespace {

int64_t Allocatable(const api::Node& node, const char* name, bool milli) {
  auto it = node.status.allocatable.find(name);
  if (it == node.status.allocatable.end()) return -1;  // unknown: no limit
  double v = it->second.AsApproximateFloat64();
  return static_cast<int64_t>(std::floor(milli ? v * 1000 : v));
}

bool Tolerated(const api::Pod& pod, const api::Taint& taint) {
  for (const auto& t : pod.spec.tolerations) {
    if (api::TolerationToleratesTaint(t, taint)) return true;
  }
  return false;
}

}  // namespace

std::string NodeRejection(const api::Pod& pod, const PodRequests& req, const api::Node& node,
                          const NodeUsage& usage) {
  if (node.spec.unschedulable) {
    api::Taint t;
    t.key = "node.kubernetes.io/unschedulable";
    t.effect = "NoSchedule";
    if (!Tolerated(pod, t)) return "node(s) were unschedulable";
  }
  if (!node.IsReady()) return "node(s) were not ready";
  for (const auto& taint : node.spec.taints) {
    if (taint.effect != "NoSchedule" && taint.effect != "NoExecute") continue;
    if (!Tolerated(pod, taint)) return "node(s) had untolerated taint";
  }
  for (const auto& [k, v] : pod.spec.node_selector) {
    auto it = node.metadata.labels.find(k);
    if (it == node.metadata.labels.end() || it->second != v) {
      return "node(s) didn't match Pod's node affinity/selector";
    }
  }
  if (pod.spec.affinity && pod.spec.affinity->node_affinity &&
      pod.spec.affinity->node_affinity->required_during_scheduling_ignored_during_execution) {
    const auto& sel =
        *pod.spec.affinity->node_affinity->required_during_scheduling_ignored_during_execution;
    if (!api::NodeSelectorMatches(sel, node.metadata.labels, node.metadata.name)) {
      return "node(s) didn't match Pod's node affinity/selector";
    }
  }
  int64_t pods = Allocatable(node, "pods", false);
  if (pods >= 0 && usage.pods + 1 > pods) return "Too many pods";
  int64_t cpu = Allocatable(node, "cpu", true);
  if (cpu >= 0 && req.milli_cpu > 0 && usage.milli_cpu + req.milli_cpu > cpu) {
    return "Insufficient cpu";
  }
  int64_t mem = Allocatable(node, "memory", false);
  if (mem >= 0 && req.memory > 0 && usage.memory + req.memory > mem) return "Insufficient memory";
  return "";
}

bool NodeMatchesAllocations(const api::Node& node, const std::vector<ClaimPtr>& allocated) {
  for (const auto& c : allocated) {
    if (!c->status.allocation || !c->status.allocation->node_selector) continue;
    if (!api::NodeSelectorMatches(*c->status.allocation->node_selector, node.metadata.labels,
                                  node.metadata.name)) {
      return false;
    }
  }
  return true;
}

std::string NodeFilterResult::Summary(size_t total) const {
  std::string s = std::to_string(fit.size()) + "/" + std::to_string(total) + " nodes are available";
  if (rejected.empty()) return s;
  s += ":";
  bool first = true;
  for (const auto& [reason, n] : rejected) {
    s += (first ? " " : ", ") + std::to_string(n) + " " + reason;
    first = false;
  }
  return s;
}

NodeFilterResult FilterNodes(const api::Pod* pod, const std::vector<NodePtr>& nodes,
                             const std::vector<ClaimPtr>& allocated_claims,
                             const ClusterCache& cache) {
  NodeFilterResult r;
  PodRequests req = pod ? ComputePodRequests(*pod) : PodRequests{};
  for (const auto& n : nodes) {
    std::string why;
    if (!NodeMatchesAllocations(*n, allocated_claims)) {
      why = "node(s) didn't match the node selector of an allocated claim";
    } else if (pod) {
      why = NodeRejection(*pod, req, *n, cache.Usage(n->metadata.name));
    } else if (!n->IsReady() || n->spec.unschedulable) {
      why = "node(s) were not ready or unschedulable";
    }
    if (why.empty()) {
      r.fit.push_back(n);
    } else {
      r.rejected[why]++;
    }
  }
  return r;
}

}  // namespace draco::reconcilers
