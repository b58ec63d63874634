// Explaining a pod or claim on a loaded snapshot (`kubectl draco explain pod/NAME | claim/NAME`
// on the live cluster, `draco explain -f DIR pod/NAME` offline): what each of the pod's
// claims got (node, driver/pool/device, consumed capacity, reservedFor) and, for claims still
// pending, why: the nodes kube-scheduler's filters remove (with the filter) and, per candidate
// node, the allocator's funnel per request with numbers, evaluated against the allocations in
// `sim` (the live cluster's as they are; offline, the caller first runs the groups before the
// pod's). A bare NAME means pod/NAME.
//
// Exit codes: 0 = every claim allocated or the pending ones would be allocated now, 1 = some
// pending claim fits on no node, 2 = the pod or claim is not in the snapshot.
//
// Thread-compatible.
#pragma once

#include <ostream>
#include <string>

#include "controller/allocator/explain.h"
#include "controller/simulate/engine.h"

namespace draco::simulate {

struct ExplainRequest {
  std::string target;  // "pod/NAME", "claim/NAME", "resourceclaim/NAME" or "NAME"
  std::string ns;      // the namespace of NAME
  std::string node;    // restrict the funnels to one node ("" = every candidate)
  std::string output;  // text | wide | json | yaml
};

// `sim` must be built; explaining commits nothing.
int ExplainTarget(Simulation& sim, const ExplainRequest& req, std::ostream& out, std::ostream& err);

// The one node an allocation's node selector names (metadata.name field or
// kubernetes.io/hostname label, operator In with one value), else "" (exposed for tests).
std::string SelectedNode(const api::AllocationResult& r);
// `r` as the JSON object of a claim's status.allocation (api::Encode of the v1 model).
void WriteAllocation(const api::AllocationResult& r, alloc::JsonWriter& w);

// The group that allocates `req.target` in `sim` (a pod's, or the one holding the claim), or null.
// Sets *kind ("pod", "claim" or what the target named) and *name ("ns/name").
const Group* FindTarget(const Simulation& sim, const ExplainRequest& req, std::string* kind,
                        std::string* name);

// JSON text as YAML (block style, keys in input order), as kubectl -o yaml prints.
std::string JsonToYaml(const std::string& json);

}  // namespace draco::simulate
