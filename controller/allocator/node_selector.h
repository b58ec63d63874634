// Node selection with the semantics of k8s.io/component-helpers nodeaffinity.NewNodeSelector +
// Match, as used by the upstream allocator's NodeMatches: the strict entry point of the one
// implementation in controller/api/node_affinity.h (an invalid requirement anywhere is an
// error, where kube-scheduler's lazy one only drops the term).
//
// Thread-safe (pure functions).
#pragma once

#include <string_view>

#include "base/status.h"
#include "controller/allocator/compute_model.h"
#include "controller/api/node_affinity.h"

namespace draco::alloc {

// The view of the allocator's requirement for the templates of node_affinity.h (found by ADL).
api::NodeRequirementView NodeRequirementOf(const NodeSelectorRequirement& r);

// Validates `ns` like nodeaffinity.NewNodeSelector (label keys/values, operators, value counts).
// Returns INVALID_ARGUMENT with a description on the first problem.
Status ValidateNodeSelector(const NodeSelector& ns);

// Upstream NodeMatches(node, nodeName, allNodes, nodeSelector): the first set field decides;
// nothing set means "no match". A selector that fails validation is an error.
StatusOr<bool> NodeMatches(const Node& node, std::string_view node_name, bool all_nodes,
                           const NodeSelector* selector);

}  // namespace draco::alloc
