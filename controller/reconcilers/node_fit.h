// Node filtering for a gated pod, with kube-scheduler's semantics for the filters draco applies
// before choosing a node for the pod's devices: NodeUnschedulable, node readiness, TaintToleration
// (NoSchedule/NoExecute), NodeAffinity (nodeSelector + required node affinity) and NodeResources
// (allocatable pods, cpu, memory minus the pods bound to or nominated for the node).
// Pure functions; thread-safe.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "controller/api/types.h"
#include "controller/reconcilers/cluster_cache.h"

namespace draco::reconcilers {

// Why a node was rejected; "" when it fits. Short reasons in kube-scheduler's wording.
std::string NodeRejection(const api::Pod& pod, const PodRequests& req, const api::Node& node,
                          const NodeUsage& usage);

// True when `node` matches every allocated claim's allocation.nodeSelector.
bool NodeMatchesAllocations(const api::Node& node, const std::vector<ClaimPtr>& allocated);

// Filters `nodes` for `pod`; `usage` gives current usage per node. Rejections are counted by
// reason for the explanation ("0/5 nodes are available: 2 node(s) were unschedulable, ...").
struct NodeFilterResult {
  std::vector<NodePtr> fit;
  std::map<std::string, int> rejected;  // reason -> count
  std::string Summary(size_t total) const;
};
NodeFilterResult FilterNodes(const api::Pod* pod, const std::vector<NodePtr>& nodes,
                             const std::vector<ClaimPtr>& allocated_claims,
                             const ClusterCache& cache);

}  // namespace draco::reconcilers
