// The CEL type checker: resolves identifiers, fields and function overloads against an Env and
// infers a static type for every node (cel-go's checker, simplified to what the environments here
// need: parametric list/map/optional types, type parameters, dyn, homogeneous aggregate literals).
//
// Check rewrites namespaced calls in place (`sets.contains(a, b)` becomes the global function
// "sets.contains") and returns side tables keyed by node id. Diagnostics are returned as Issues.
// Check is thread-compatible: it mutates only the Ast it is given.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "controller/cel/ast.h"
#include "controller/cel/env.h"
#include "controller/cel/parser.h"

namespace draco::cel {

struct CheckedInfo {
  // Static type of every node.
  std::unordered_map<int64_t, Type> types;
  // Candidate overloads of every call node, in declaration order.
  std::unordered_map<int64_t, std::vector<const Overload*>> overloads;
  // Identifiers that name types (`int`, `list`, ...): id -> type name.
  std::unordered_map<int64_t, std::string> type_idents;
};

// Checks `ast` against `env`. Returns false and fills `issues` on error.
bool Check(const Env& env, Ast& ast, CheckedInfo& info, Issues& issues);

}  // namespace draco::cel
