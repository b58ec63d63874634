#include "controller/feasibility/node_filter.h"

#include "controller/feasibility/feasibility.h"

namespace draco::feasibility {

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

bool MatchesAllocatedSelectors(const api::Node& node,
                               const std::vector<const api::NodeSelector*>& allocated) {
  for (const api::NodeSelector* s : allocated) {
    if (s && !api::NodeSelectorMatches(*s, node.metadata.labels, node.metadata.name)) return false;
  }
  return true;
}

NodeFilterResult FilterNodes(const api::Pod* pod, const Snapshot& snapshot,
                             const std::vector<const api::NodeSelector*>& allocated) {
  NodeFilterResult r;
  std::vector<Verdict> verdicts;
  if (pod) verdicts = Evaluate(*pod, snapshot);
  for (size_t i = 0; i < snapshot.nodes.size(); ++i) {
    const auto& n = snapshot.nodes[i];
    std::string reason, why;
    if (!MatchesAllocatedSelectors(*n, allocated)) {
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

}  // namespace draco::feasibility
