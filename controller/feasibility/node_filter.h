// draco's node filter: the nodes on which the devices of a gated pod (or of a standalone claim)
// may be allocated. `draco run` (reconcilers/node_fit.h) and `draco simulate`, `draco explain` and
// `kubectl draco` (simulate/engine.cc) all call FilterNodes, so what explain says about a node is
// what the controller does with it.
//
// Per node, in `snapshot.nodes` order, the first rule that fails names the rejection:
//  1. the node matches the nodeSelector of every claim of the pod already allocated
//     ("node(s) didn't match the node selector of an allocated claim");
//  2. the node is Ready: a Ready condition with status True ("node(s) were not ready");
//  3. with a pod, kube-scheduler's default Filter plugins (Evaluate in feasibility.h; the reason
//     is the plugin's, e.g. "node(s) didn't match pod anti-affinity rules"); without a pod, the
//     node is not spec.unschedulable ("node(s) were unschedulable").
// Pure functions of their arguments; thread-safe.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "controller/api/types.h"
#include "controller/feasibility/snapshot.h"

namespace draco::feasibility {

// Rejections are counted by reason for the summary ("0/5 nodes are available: 2 node(s) were
// unschedulable, ...") and kept per node for explanations ("InterPodAffinity: pod anti-affinity
// with wedge/occupant"; the reason alone for rules 1 and 2 and for an unschedulable node).
struct NodeFilterResult {
  std::vector<std::shared_ptr<const api::Node>> fit;  // snapshot order
  std::map<std::string, int> rejected;                // reason -> count
  std::map<std::string, std::string> why;             // node name -> "Plugin: detail or reason"
  // "2/5 nodes are available: 1 Insufficient cpu, 2 node(s) were not ready" (reasons sorted).
  std::string Summary(size_t total) const;
};

// True when `node` matches every selector of `allocated` (nulls are skipped): rule 1 above.
bool MatchesAllocatedSelectors(const api::Node& node,
                               const std::vector<const api::NodeSelector*>& allocated);

// Applies the rules above to every node of `snapshot.nodes`. `pod` may be null (a claim no pod
// references); when set it must not be among `snapshot.pods` (see Evaluate). `allocated` holds
// the allocation.nodeSelector of each of the pod's claims that is allocated already.
NodeFilterResult FilterNodes(const api::Pod* pod, const Snapshot& snapshot,
                             const std::vector<const api::NodeSelector*>& allocated);

}  // namespace draco::feasibility
