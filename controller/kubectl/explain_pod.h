// `kubectl draco explain pod/NAME | claim/NAME` on a loaded live snapshot: what each of the pod's
// claims got (node, driver/pool/device, consumed capacity, reservedFor) and, for claims still
// pending, why: the nodes kube-scheduler's filters remove (with the filter) and, per candidate
// node, the allocator's funnel per request with numbers, evaluated against the allocations that
// exist now (other pending pods are not simulated first). A bare NAME means pod/NAME.
//
// Exit codes: 0 = every claim allocated or the pending ones would be allocated now, 1 = some
// pending claim fits on no node, 2 = the pod or claim is not in the snapshot.
//
// Thread-compatible.
#pragma once

#include <ostream>
#include <string>

#include "controller/simulate/engine.h"

namespace draco::kubectl {

struct ExplainRequest {
  std::string target;  // "pod/NAME", "claim/NAME", "resourceclaim/NAME" or "NAME"
  std::string ns;      // the namespace of NAME
  std::string node;    // restrict the funnels to one node ("" = every candidate)
  std::string output;  // text | wide | json | yaml
};

// `sim` must be built and not yet run; explaining does not commit anything.
int ExplainLive(simulate::Simulation& sim, const ExplainRequest& req, std::ostream& out,
                std::ostream& err);

// The one node an allocation's node selector names (metadata.name field or
// kubernetes.io/hostname label, operator In with one value), else "" (exposed for tests).
std::string SelectedNode(const alloc::AllocationResult& r);

}  // namespace draco::kubectl
