// The standard library's cost functions and its overload registration helper.
#include <algorithm>
#include <cmath>

#include "controller/cel/stdlib_internal.h"

namespace draco::cel::stdlib_internal {

// ---- cost functions ---------------------------------------------------------------------------

uint64_t CeilCost(double d) { return static_cast<uint64_t>(std::ceil(d)); }

uint64_t CostMinSize(const Value* a, size_t, const Value&) {
  if (a[0].kind() == Kind::kOpaque) return 1;  // Kubernetes types: unit cost
  return CeilCost(static_cast<double>(std::min(ActualSize(a[0]), ActualSize(a[1]))) *
                  kStringTraversalCostFactor);
}
uint64_t CostConcat(const Value* a, size_t, const Value&) {
  return CeilCost(static_cast<double>(ActualSize(a[0]) + ActualSize(a[1])) *
                  kStringTraversalCostFactor);
}
uint64_t CostArg1Traversal(const Value* a, size_t, const Value&) {
  return CeilCost(static_cast<double>(ActualSize(a[1])) * kStringTraversalCostFactor);
}
uint64_t CostArg0Traversal(const Value* a, size_t, const Value&) {
  return CeilCost(static_cast<double>(ActualSize(a[0])) * kStringTraversalCostFactor);
}
uint64_t CostArg0Traversal2(const Value* a, size_t, const Value&) {
  return CeilCost(static_cast<double>(ActualSize(a[0])) * 2 * kStringTraversalCostFactor);
}
uint64_t CostContains(const Value* a, size_t, const Value&) {
  return CeilCost(static_cast<double>(ActualSize(a[0])) * kStringTraversalCostFactor) *
         CeilCost(static_cast<double>(ActualSize(a[1])) * kStringTraversalCostFactor);
}
uint64_t CostMatches(const Value* a, size_t, const Value&) {
  return CeilCost((1.0 + static_cast<double>(ActualSize(a[0]))) * kStringTraversalCostFactor) *
         CeilCost(static_cast<double>(ActualSize(a[1])) * kRegexStringLengthCostFactor);
}
uint64_t CostInList(const Value* a, size_t, const Value&) { return ActualSize(a[1]); }
uint64_t CostJoin(const Value*, size_t, const Value& r) {
  return CeilCost(static_cast<double>(ActualSize(r)) * 2 * kStringTraversalCostFactor);
}
// Kubernetes traversalCost(): strings/bytes floor(len*0.1), lists/maps summed, scalars 1.
uint64_t Traversal(const Value& v) {
  switch (v.kind()) {
    case Kind::kString:
    case Kind::kBytes:
      return static_cast<uint64_t>(static_cast<double>(v.str().size()) *
                                   kStringTraversalCostFactor);
    case Kind::kList: {
      uint64_t c = 0;
      for (const Value& e : v.list().elems()) c += Traversal(e);
      return c;
    }
    case Kind::kMap: {
      uint64_t c = 0;
      for (size_t i = 0; i < v.map().size(); ++i) {
        c += Traversal(v.map().KeyAt(i)) + Traversal(v.map().ValueAt(i));
      }
      return c;
    }
    default:
      return 1;
  }
}
uint64_t CostTraversal0(const Value* a, size_t, const Value&) { return Traversal(a[0]); }
uint64_t AllocatingList(double factor, uint64_t size) {
  return static_cast<uint64_t>(static_cast<double>(size) * factor) + 1 + kListCreateBaseCost;
}
uint64_t CostListOutput(const Value*, size_t, const Value& r) {
  return AllocatingList(1, ActualSize(r));
}
uint64_t CostFlatten(const Value* a, size_t n, const Value&) {
  double depth = 1.0;
  if (n == 2 && a[1].kind() == Kind::kInt) depth = static_cast<double>(a[1].int_value());
  if (depth < 0) depth = 1.0;
  return AllocatingList(depth, ActualSize(a[0]));
}
uint64_t CostSelfCompare(const Value* a, size_t, const Value&) {
  uint64_t sz = ActualSize(a[0]);
  double factor = 2.0;
  if (sz == 0) return AllocatingList(factor, 0);
  if (a[0].kind() == Kind::kList) {
    Kind k = a[0].list().Get(0).kind();
    if (k == Kind::kString || k == Kind::kBytes) factor += kStringTraversalCostFactor;
  }
  return AllocatingList(factor, sz * sz);
}
uint64_t CostSets1(const Value* a, size_t, const Value&) {
  return 1 + ActualSize(a[0]) * ActualSize(a[1]);
}
uint64_t CostSets2(const Value* a, size_t, const Value&) {
  return 1 + static_cast<uint64_t>(static_cast<double>(ActualSize(a[0]) * ActualSize(a[1])) * 2);
}

void Add(Env& env, const std::string& fn, const std::string& id, bool member,
         std::vector<Type> args, Type result, FunctionImpl impl, CostFunction cost) {
  Overload o;
  o.id = id;
  o.member = member;
  o.args = std::move(args);
  o.result = std::move(result);
  o.impl = impl;
  o.cost = cost;
  env.AddOverload(fn, std::move(o));
}

}  // namespace draco::cel::stdlib_internal
