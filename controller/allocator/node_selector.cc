#include "controller/allocator/node_selector.h"

#include "controller/api/node_affinity.h"

namespace draco::alloc {

api::NodeRequirementView NodeRequirementOf(const NodeSelectorRequirement& r) {
  return {r.key, r.op, r.values};
}

Status ValidateNodeSelector(const NodeSelector& ns) {
  for (const auto& t : ns.terms) {
    if (Status s = api::ValidateNodeSelectorTerm(t); !s.ok()) return s;
  }
  return OkStatus();
}

StatusOr<bool> NodeMatches(const Node& node, std::string_view node_name, bool all_nodes,
                           const NodeSelector* selector) {
  if (!node_name.empty()) return node.name == node_name;
  if (all_nodes) return true;
  if (selector == nullptr) return false;
  if (Status s = ValidateNodeSelector(*selector); !s.ok()) return s;
  for (const auto& t : selector->terms) {
    if (api::IsEmptyNodeSelectorTerm(t)) continue;
    if (api::ValidNodeSelectorTermMatches(t, node.labels, node.name)) return true;
  }
  return false;
}

}  // namespace draco::alloc
