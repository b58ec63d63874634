// The standard library's list functions: Kubernetes lists, ext.Lists v3 and ext.Sets.
#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "controller/cel/stdlib_internal.h"

namespace draco::cel::stdlib_internal {
namespace {

// ---- lists ------------------------------------------------------------------------------------

Value ListIndexOf(const Value* a, EvalContext&) {
  const auto& e = a[0].list().elems();
  for (size_t i = 0; i < e.size(); ++i) {
    if (ValueEquals(e[i], a[1])) return Value::Int(static_cast<int64_t>(i));
  }
  return Value::Int(-1);
}
Value ListLastIndexOf(const Value* a, EvalContext&) {
  const auto& e = a[0].list().elems();
  for (size_t i = e.size(); i > 0; --i) {
    if (ValueEquals(e[i - 1], a[1])) return Value::Int(static_cast<int64_t>(i - 1));
  }
  return Value::Int(-1);
}
Value IsSorted(const Value* a, EvalContext&) {
  const auto& e = a[0].list().elems();
  for (size_t i = 1; i < e.size(); ++i) {
    auto c = ValueCompare(e[i - 1], e[i]);
    if (!c) return NoSuchOverload("isSorted");
    if (*c > 0) return Value::Bool(false);
  }
  return Value::Bool(true);
}
template <Kind kZero>
Value Sum(const Value* a, EvalContext& ctx) {
  Value acc = kZero == Kind::kInt ? Value::Int(0)
                                  : (kZero == Kind::kUint ? Value::Uint(0) : Value::Double(0));
  for (const Value& v : a[0].list().elems()) {
    std::array<Value, 2> args{acc, v};
    if (acc.kind() != v.kind()) return NoSuchOverload("sum");
    switch (v.kind()) {
      case Kind::kInt:
        acc = AddInt(args.data(), ctx);
        break;
      case Kind::kUint:
        acc = AddUint(args.data(), ctx);
        break;
      case Kind::kDouble:
        acc = AddDouble(args.data(), ctx);
        break;
      default:
        return NoSuchOverload("sum");
    }
    if (acc.IsError()) return acc;
  }
  return acc;
}
template <bool kMax>
Value MinMax(const Value* a, EvalContext&) {
  const auto& e = a[0].list().elems();
  if (e.empty()) {
    return Value::Error(kMax ? "max(list) argument must not be empty"
                             : "min(list) argument must not be empty");
  }
  Value best = e[0];
  for (size_t i = 1; i < e.size(); ++i) {
    auto c = ValueCompare(e[i], best);
    if (!c) return NoSuchOverload(kMax ? "max" : "min");
    if (kMax ? *c > 0 : *c < 0) best = e[i];
  }
  return best;
}
Value Includes(const Value* a, EvalContext&) {
  if (a[0].kind() == Kind::kList) {
    for (const Value& v : a[0].list().elems()) {
      if (ValueEquals(v, a[1])) return Value::Bool(true);
    }
    return Value::Bool(false);
  }
  return Value::Bool(ValueEquals(a[0], a[1]));
}
Value ListSlice(const Value* a, EvalContext&) {
  int64_t s = a[1].int_value(), e = a[2].int_value();
  auto n = static_cast<int64_t>(a[0].list().size());
  if (s < 0 || e < 0) {
    return Value::Error("cannot slice(" + std::to_string(s) + ", " + std::to_string(e) +
                        "), negative indexes not supported");
  }
  if (s > e) {
    return Value::Error("cannot slice(" + std::to_string(s) + ", " + std::to_string(e) +
                        "), start index must be less than or equal to end index");
  }
  if (e > n) {
    return Value::Error("cannot slice(" + std::to_string(s) + ", " + std::to_string(e) +
                        "), list is length " + std::to_string(n));
  }
  const auto& el = a[0].list().elems();
  return Value::List(std::vector<Value>(el.begin() + s, el.begin() + e));
}
void FlattenInto(const Value& l, int64_t depth, std::vector<Value>& out) {
  for (const Value& v : l.list().elems()) {
    if (v.kind() == Kind::kList && depth > 0) {
      FlattenInto(v, depth - 1, out);
    } else {
      out.push_back(v);
    }
  }
}
Value Flatten(const Value* a, EvalContext&) {
  std::vector<Value> out;
  FlattenInto(a[0], 1, out);
  return Value::List(std::move(out));
}
Value FlattenN(const Value* a, EvalContext&) {
  if (a[1].int_value() < 0) return Value::Error("level must be non-negative");
  std::vector<Value> out;
  FlattenInto(a[0], a[1].int_value(), out);
  return Value::List(std::move(out));
}
Value Distinct(const Value* a, EvalContext&) {
  std::vector<Value> out;
  for (const Value& v : a[0].list().elems()) {
    bool seen = false;
    for (const Value& o : out) seen |= ValueEquals(o, v);
    if (!seen) out.push_back(v);
  }
  return Value::List(std::move(out));
}
Value Reverse(const Value* a, EvalContext&) {
  std::vector<Value> out(a[0].list().elems().rbegin(), a[0].list().elems().rend());
  return Value::List(std::move(out));
}
bool ComparableKind(Kind k) {
  return k == Kind::kInt || k == Kind::kUint || k == Kind::kDouble || k == Kind::kBool ||
         k == Kind::kString || k == Kind::kBytes ||
         (k == Kind::kOpaque);  // timestamps/durations are opaque host values here
}
// ext.Lists sortListByAssociatedKeys: orders `list` by `keys` (same length, one comparable kind).
Value SortByKeys(const Value& list, const Value& keys) {
  size_t n = list.list().size();
  if (n != keys.list().size()) {
    return Value::Error(
        "@sortByAssociatedKeys() expected a list of the same size as the associated keys list, "
        "but got " +
        std::to_string(n) + " and " + std::to_string(keys.list().size()) +
        " elements respectively");
  }
  if (n == 0) return list;
  const auto& k = keys.list().elems();
  if (!ComparableKind(k[0].kind())) return Value::Error("list elements must be comparable");
  if (n > 1) {
    for (const Value& v : k) {
      if (v.kind() != k[0].kind() || v.TypeName() != k[0].TypeName()) {
        return Value::Error("list elements must have the same type");
      }
    }
  }
  std::vector<size_t> idx(n);
  for (size_t i = 0; i < n; ++i) idx[i] = i;
  std::stable_sort(idx.begin(), idx.end(), [&](size_t x, size_t y) {
    auto c = ValueCompare(k[x], k[y]);
    return c && *c < 0;
  });
  std::vector<Value> out;
  out.reserve(n);
  for (size_t i : idx) out.push_back(list.list().Get(i));
  return Value::List(std::move(out));
}
Value Sort(const Value* a, EvalContext&) { return SortByKeys(a[0], a[0]); }
Value SortByAssociatedKeys(const Value* a, EvalContext&) { return SortByKeys(a[0], a[1]); }
uint64_t CostSortBy(const Value* a, size_t, const Value& r) {
  const Value* keys = &a[1];
  return CostSelfCompare(keys, 1, r);
}
Value Range(const Value* a, EvalContext&) {
  if (a[0].int_value() < 0) {
    return Value::Error("lists.range: size must be non-negative, got " +
                        std::to_string(a[0].int_value()));
  }
  std::vector<Value> out;
  for (int64_t i = 0; i < a[0].int_value(); ++i) out.push_back(Value::Int(i));
  return Value::List(std::move(out));
}
Value First(const Value* a, EvalContext&) {
  if (a[0].list().size() == 0) return Value::Optional(std::nullopt);
  return Value::Optional(a[0].list().Get(0));
}
Value Last(const Value* a, EvalContext&) {
  if (a[0].list().size() == 0) return Value::Optional(std::nullopt);
  return Value::Optional(a[0].list().Get(a[0].list().size() - 1));
}
bool ListHas(const Value& l, const Value& v) {
  for (const Value& e : l.list().elems()) {
    if (ValueEquals(e, v)) return true;
  }
  return false;
}
Value SetsContains(const Value* a, EvalContext&) {
  for (const Value& v : a[1].list().elems()) {
    if (!ListHas(a[0], v)) return Value::Bool(false);
  }
  return Value::Bool(true);
}
Value SetsEquivalent(const Value* a, EvalContext& ctx) {
  Value r = SetsContains(a, ctx);
  if (!r.bool_value()) return r;
  std::array<Value, 2> rev{a[1], a[0]};
  return SetsContains(rev.data(), ctx);
}
Value SetsIntersects(const Value* a, EvalContext&) {
  for (const Value& v : a[1].list().elems()) {
    if (ListHas(a[0], v)) return Value::Bool(true);
  }
  return Value::Bool(false);
}

}  // namespace

void AddListFunctions(Env& env) {
  const T I = T::Int(), U = T::Uint(), D = T::Double(), S = T::String(), By = T::Bytes(),
          Bo = T::Bool(), Dy = T::Dyn();
  const T LA = T::List(kA);
  // Kubernetes lists library v1.
  struct Named {
    const char* name;
    Type type;
  };
  const std::vector<Named> comparable = {{"int", I},
                                         {"uint", U},
                                         {"double", D},
                                         {"bool", Bo},
                                         {"duration", T::Opaque("google.protobuf.Duration")},
                                         {"timestamp", T::Opaque("google.protobuf.Timestamp")},
                                         {"string", S},
                                         {"bytes", By}};
  for (const Named& n : comparable) {
    Add(env, "isSorted", std::string("list_") + n.name + "_is_sorted_bool", true, {T::List(n.type)},
        Bo, IsSorted, CostTraversal0);
    Add(env, "max", std::string("list_") + n.name + "_max_" + n.name, true, {T::List(n.type)},
        n.type, MinMax<true>, CostTraversal0);
    Add(env, "min", std::string("list_") + n.name + "_min_" + n.name, true, {T::List(n.type)},
        n.type, MinMax<false>, CostTraversal0);
  }
  Add(env, "sum", "list_int_sum_int", true, {T::List(I)}, I, Sum<Kind::kInt>, CostTraversal0);
  Add(env, "sum", "list_uint_sum_uint", true, {T::List(U)}, U, Sum<Kind::kUint>, CostTraversal0);
  Add(env, "sum", "list_double_sum_double", true, {T::List(D)}, D, Sum<Kind::kDouble>,
      CostTraversal0);
  Add(env, "indexOf", "list_a_index_of_int", true, {LA, kA}, I, ListIndexOf, CostTraversal0);
  Add(env, "lastIndexOf", "list_a_last_index_of_int", true, {LA, kA}, I, ListLastIndexOf,
      CostTraversal0);
  Add(env, "includes", "list_includes_dyn_dyn", true, {Dy, Dy}, Bo, Includes, CostTraversal0);

  // ext.Lists v3.
  Add(env, "slice", "list_slice", true, {LA, I, I}, LA, ListSlice, CostListOutput);
  Add(env, "flatten", "list_flatten", true, {T::List(LA)}, LA, Flatten, CostFlatten);
  Add(env, "flatten", "list_flatten_int", true, {T::List(Dy), I}, T::List(Dy), FlattenN,
      CostFlatten);
  Add(env, "distinct", "list_distinct", true, {LA}, LA, Distinct, CostSelfCompare);
  Add(env, "reverse", "list_reverse", true, {LA}, LA, Reverse, CostListOutput);
  for (const Named& n : comparable) {
    Add(env, "sort", std::string("list_") + n.name + "_sort", true, {T::List(n.type)},
        T::List(n.type), Sort, CostSelfCompare);
  }
  for (const Named& n : comparable) {
    Add(env, "@sortByAssociatedKeys", std::string("list_") + n.name + "_sortByAssociatedKeys", true,
        {LA, T::List(n.type)}, LA, SortByAssociatedKeys, CostSortBy);
  }
  Add(env, "lists.range", "lists_range", false, {I}, T::List(I), Range, CostListOutput);
  Add(env, "first", "list_first", true, {LA}, T::Optional(kA), First);
  Add(env, "last", "list_last", true, {LA}, T::Optional(kA), Last);

  // ext.Sets.
  Add(env, "sets.contains", "list_sets_contains_list", false, {LA, LA}, Bo, SetsContains,
      CostSets1);
  Add(env, "sets.equivalent", "list_sets_equivalent_list", false, {LA, LA}, Bo, SetsEquivalent,
      CostSets2);
  Add(env, "sets.intersects", "list_sets_intersects_list", false, {LA, LA}, Bo, SetsIntersects,
      CostSets1);
}

}  // namespace draco::cel::stdlib_internal
