#include "controller/reconcilers/node_fit.h"

namespace draco::reconcilers {

NodeFilterResult FilterNodes(const api::Pod* pod, const std::vector<NodePtr>& nodes,
                             const std::vector<ClaimPtr>& allocated_claims,
                             const ClusterCache& cache) {
  feasibility::Snapshot snap;
  if (pod) {
    snap = cache.FeasibilitySnapshot(pod->metadata.namespace_ + "/" + pod->metadata.name,
                                     /*with_nodes=*/false);
  }
  snap.nodes.assign(nodes.begin(), nodes.end());
  snap.node_allocatable = cache.NodeAllocatable(nodes);
  std::vector<const api::NodeSelector*> allocated;
  for (const auto& c : allocated_claims) {
    if (c->status.allocation && c->status.allocation->node_selector) {
      allocated.push_back(&*c->status.allocation->node_selector);
    }
  }
  return feasibility::FilterNodes(pod, snap, allocated);
}

}  // namespace draco::reconcilers
