// Node filtering for a gated pod before draco chooses a node for its devices: the controller's
// call of feasibility::FilterNodes (controller/feasibility/node_filter.h, the rule set `draco
// simulate`, `draco explain` and `kubectl draco` share): kube-scheduler v1.37.2's default Filter
// plugins (NodeName, NodeUnschedulable, TaintToleration, NodeAffinity, NodePorts,
// NodeResourcesFit, VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone,
// PodTopologySpread, InterPodAffinity) on the cache's feasibility snapshot, plus two rules of
// draco's own: the node must be Ready, and it must match the nodeSelector of every claim already
// allocated for the pod.
// Pure functions of their arguments; thread-safe.
#pragma once

#include <vector>

#include "controller/api/types.h"
#include "controller/feasibility/node_filter.h"
#include "controller/reconcilers/cluster_cache.h"

namespace draco::reconcilers {

using feasibility::NodeFilterResult;

// Filters `nodes` for `pod` (null: a claim without a pod; only readiness and schedulability
// apply) with the cache's feasibility snapshot (the pod itself left out) and the
// allocation.nodeSelector of each claim of `allocated_claims`.
NodeFilterResult FilterNodes(const api::Pod* pod, const std::vector<NodePtr>& nodes,
                             const std::vector<ClaimPtr>& allocated_claims,
                             const ClusterCache& cache);

}  // namespace draco::reconcilers
