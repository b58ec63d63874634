// Internal to the standard library (stdlib*.cc): the type parameters, cost functions and
// registration helper they share, and the per-family registration functions AddStandardLibrary
// calls. Not part of the draco_cel API; include only from controller/cel/stdlib*.cc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "controller/cel/env.h"

namespace draco::cel::stdlib_internal {

using T = Type;
inline const Type kA = Type::Param("A");
inline const Type kB = Type::Param("B");

// ---- cost functions (cel-go CostTracker, Kubernetes library CostEstimator) --------------------

uint64_t CeilCost(double d);
uint64_t CostMinSize(const Value* a, size_t, const Value&);
uint64_t CostConcat(const Value* a, size_t, const Value&);
uint64_t CostArg1Traversal(const Value* a, size_t, const Value&);
uint64_t CostArg0Traversal(const Value* a, size_t, const Value&);
uint64_t CostArg0Traversal2(const Value* a, size_t, const Value&);
uint64_t CostContains(const Value* a, size_t, const Value&);
uint64_t CostMatches(const Value* a, size_t, const Value&);
uint64_t CostInList(const Value* a, size_t, const Value&);
uint64_t CostJoin(const Value*, size_t, const Value& r);
uint64_t Traversal(const Value& v);
uint64_t CostTraversal0(const Value* a, size_t, const Value&);
uint64_t AllocatingList(double factor, uint64_t size);
uint64_t CostListOutput(const Value*, size_t, const Value& r);
uint64_t CostFlatten(const Value* a, size_t n, const Value&);
uint64_t CostSelfCompare(const Value* a, size_t, const Value&);
uint64_t CostSets1(const Value* a, size_t, const Value&);
uint64_t CostSets2(const Value* a, size_t, const Value&);

// Checked addition (also used by the lists library's sum()).
Value AddInt(const Value* a, EvalContext&);
Value AddUint(const Value* a, EvalContext&);
Value AddDouble(const Value* a, EvalContext&);

// Registers one overload of `fn` on `env`.
void Add(Env& env, const std::string& fn, const std::string& id, bool member,
         std::vector<Type> args, Type result, FunctionImpl impl, CostFunction cost = nullptr);

// ---- families, registered in this order by AddStandardLibrary ---------------------------------

// Equality, ordering, arithmetic, logical not, `in` and size().
void AddOperatorFunctions(Env& env);
// Type conversions: int(), uint(), double(), string(), bytes(), bool(), dyn(), type().
void AddConversionFunctions(Env& env);
// Standard and ext.Strings v2 string functions and the Kubernetes regex library.
void AddStringFunctions(Env& env);
// The Kubernetes lists library, ext.Lists v3 and ext.Sets.
void AddListFunctions(Env& env);
// Optional types, the index/logic/conditional operators and the two-variable comprehension
// helpers.
void AddOptionalFunctions(Env& env);

}  // namespace draco::cel::stdlib_internal
