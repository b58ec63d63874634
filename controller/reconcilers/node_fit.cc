#include "controller/reconcilers/node_fit.h"

#include "controller/feasibility/feasibility.h"

namespace draco::reconcilers {

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
  std::vector<feasibility::Verdict> verdicts;
  if (pod) {
    feasibility::Snapshot snap =
        cache.FeasibilitySnapshot(pod->metadata.namespace_ + "/" + pod->metadata.name);
    snap.nodes.assign(nodes.begin(), nodes.end());
    verdicts = feasibility::Evaluate(*pod, snap);
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    const auto& n = nodes[i];
    std::string reason, why;
    if (!NodeMatchesAllocations(*n, allocated_claims)) {
      reason = "node(s) didn't match the node selector of an allocated claim";
    } else if (!n->IsReady()) {
      reason = "node(s) were not ready";
    } else if (pod && !verdicts[i].passed) {
      reason = verdicts[i].reason;
      why = verdicts[i].plugin + ": " +
            (verdicts[i].detail.empty() ? verdicts[i].reason : verdicts[i].detail);
    } else if (!pod && n->spec.unschedulable) {
      reason = "node(s) were unschedulable";
    }
    if (reason.empty()) {
      r.fit.push_back(n);
    } else {
      r.rejected[reason]++;
      r.why[n->metadata.name] = why.empty() ? reason : why;
    }
  }
  return r;
}

}  // namespace draco::reconcilers
