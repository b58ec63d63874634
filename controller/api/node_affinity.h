// Node selection with the semantics of k8s.io/component-helpers scheduling/corev1/nodeaffinity:
// the one implementation of matching a NodeSelector against a node. Its two upstream entry
// points differ only in what an invalid requirement does, and both are built from the functions
// here:
//   - LazyErrorNodeSelector (kube-scheduler's NodeAffinity, volume binding, the controller's
//     check of allocated claims): a term with an invalid requirement matches nothing;
//     api::NodeSelectorMatches (core_types.h).
//   - NewNodeSelector (the DRA allocator's NodeMatches): any invalid requirement makes the whole
//     selector an error; alloc::NodeMatches (controller/allocator/node_selector.h).
// The term helpers are templates so that the allocator's own model of a NodeSelectorTerm uses
// them too: a Term has `match_expressions` and `match_fields`, and each of their elements `r`
// converts with an overload `NodeRequirementOf(r)` found by argument-dependent lookup.
//
// Thread-safe (pure functions).
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "controller/api/core_types.h"
#include "controller/api/meta_types.h"

namespace draco::api {

// One requirement of a node selector term, whichever model holds it. Refers to the
// requirement's storage, which must outlive the view.
struct NodeRequirementView {
  const std::string& key;
  const std::string& op;  // In NotIn Exists DoesNotExist Gt Lt
  const std::vector<std::string>& values;
};

// The view of a core/v1 requirement (the allocator declares its own overload).
NodeRequirementView NodeRequirementOf(const NodeSelectorRequirement& r);

// labels.NewRequirement's checks of a matchExpressions entry (operator, label key, value count,
// integer Gt/Lt value, label values). INVALID_ARGUMENT describing the first problem.
Status ValidateLabelRequirement(const NodeRequirementView& r);
// The field-selector checks of a matchFields entry (In/NotIn with exactly one value).
Status ValidateFieldRequirement(const NodeRequirementView& r);
// Whether a requirement that passed its validation matches the node's labels / name. Fields are
// a fields.Set with metadata.name only: any other key reads as "".
bool LabelRequirementMatches(const NodeRequirementView& r, const StringMap& labels);
bool FieldRequirementMatches(const NodeRequirementView& r, std::string_view node_name);

// A term without requirements selects nothing (nodeaffinity leaves it out).
template <typename Term>
bool IsEmptyNodeSelectorTerm(const Term& t) {
  return t.match_expressions.empty() && t.match_fields.empty();
}

// Parses a term as nodeaffinity does: OK, or the first invalid requirement's error.
template <typename Term>
Status ValidateNodeSelectorTerm(const Term& t) {
  for (const auto& r : t.match_expressions) {
    if (Status s = ValidateLabelRequirement(NodeRequirementOf(r)); !s.ok()) return s;
  }
  for (const auto& r : t.match_fields) {
    if (Status s = ValidateFieldRequirement(NodeRequirementOf(r)); !s.ok()) return s;
  }
  return OkStatus();
}

// Whether a valid, non-empty term matches: every expression matches the labels and, when the
// node has a name (nodeaffinity's fields set is empty otherwise), every field matches it.
template <typename Term>
bool ValidNodeSelectorTermMatches(const Term& t, const StringMap& labels,
                                  std::string_view node_name) {
  for (const auto& r : t.match_expressions) {
    if (!LabelRequirementMatches(NodeRequirementOf(r), labels)) return false;
  }
  if (node_name.empty()) return true;
  return std::all_of(t.match_fields.begin(), t.match_fields.end(), [&](const auto& r) {
    return FieldRequirementMatches(NodeRequirementOf(r), node_name);
  });
}

}  // namespace draco::api
