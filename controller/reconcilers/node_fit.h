// Node filtering for a gated pod before draco chooses a node for its devices: kube-scheduler
// v1.37.2's default Filter plugins through controller/feasibility (NodeName, NodeUnschedulable,
// TaintToleration, NodeAffinity, NodePorts, NodeResourcesFit, VolumeRestrictions,
// NodeVolumeLimits, VolumeBinding, VolumeZone, PodTopologySpread, InterPodAffinity) on the
// cache's feasibility snapshot, plus two rules of draco's own: the node must be Ready, and it must
// match the nodeSelector of every claim already allocated for the pod.
// Pure functions of their arguments; thread-safe.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "controller/api/types.h"
#include "controller/reconcilers/cluster_cache.h"

namespace draco::reconcilers {

// True when `node` matches every allocated claim's allocation.nodeSelector.
bool NodeMatchesAllocations(const api::Node& node, const std::vector<ClaimPtr>& allocated);

// Filters `nodes` for `pod` (null: a claim without a pod; only readiness and schedulability
// apply). Rejections are counted by reason for the summary ("0/5 nodes are available: 2 node(s)
// were unschedulable, ...") and kept per node for explanations ("node-1: InterPodAffinity: pod
// anti-affinity with wedge/occupant").
struct NodeFilterResult {
  std::vector<NodePtr> fit;
  std::map<std::string, int> rejected;     // reason -> count
  std::map<std::string, std::string> why;  // node -> "Plugin: detail or reason"
  std::string Summary(size_t total) const;
};
NodeFilterResult FilterNodes(const api::Pod* pod, const std::vector<NodePtr>& nodes,
                             const std::vector<ClaimPtr>& allocated_claims,
                             const ClusterCache& cache);

}  // namespace draco::reconcilers
