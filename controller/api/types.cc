#include "controller/api/types.h"

#include <algorithm>

#include "controller/api/node_affinity.h"

namespace draco::api {

NodeRequirementView NodeRequirementOf(const NodeSelectorRequirement& r) {
  return {r.key, r.operator_, r.values};
}

bool RequirementMatches(const NodeSelectorRequirement& r, const StringMap& labels) {
  NodeRequirementView v = NodeRequirementOf(r);
  return ValidateLabelRequirement(v).ok() && LabelRequirementMatches(v, labels);
}

bool TermMatches(const NodeSelectorTerm& term, const StringMap& labels,
                 std::string_view node_name) {
  return !IsEmptyNodeSelectorTerm(term) && ValidateNodeSelectorTerm(term).ok() &&
         ValidNodeSelectorTermMatches(term, labels, node_name);
}

bool NodeSelectorMatches(const NodeSelector& selector, const StringMap& labels,
                         std::string_view node_name) {
  return std::any_of(selector.node_selector_terms.begin(), selector.node_selector_terms.end(),
                     [&](const NodeSelectorTerm& t) { return TermMatches(t, labels, node_name); });
}

bool ToleratesTaint(const TolerationFields& t, const TaintFields& taint) {
  if (!t.effect.empty() && t.effect != taint.effect) return false;
  if (!t.key.empty() && t.key != taint.key) return false;
  if (t.op.empty() || t.op == "Equal") return t.value == taint.value;
  return t.op == "Exists";
}

bool TolerationToleratesTaint(const Toleration& t, const Taint& taint) {
  return ToleratesTaint({t.key, t.operator_, t.value, t.effect},
                        {taint.key, taint.value, taint.effect});
}

bool DeviceTolerationToleratesTaint(const DeviceToleration& t, const DeviceTaint& taint) {
  return ToleratesTaint({t.key, t.operator_, t.value, t.effect},
                        {taint.key, taint.value, taint.effect});
}

bool Node::IsReady() const {
  return std::any_of(
      status.conditions.begin(), status.conditions.end(),
      [](const NodeCondition& c) { return c.type == "Ready" && c.status == "True"; });
}

bool DeviceTaintSelectorMatches(const DeviceTaintSelector& selector, std::string_view driver,
                                std::string_view pool, std::string_view device) {
  if (selector.driver && !selector.driver->empty() && *selector.driver != driver) return false;
  if (selector.pool && !selector.pool->empty() && *selector.pool != pool) return false;
  if (selector.device && !selector.device->empty() && *selector.device != device) return false;
  return true;
}

}  // namespace draco::api
