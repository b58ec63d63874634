// The standard library's optional types, planner-handled operators and map-insert helpers.
#include <array>
#include <string>
#include <utility>
#include <vector>

#include "controller/cel/stdlib_internal.h"

namespace draco::cel {

bool ValidMapKey(const Value& k);

}  // namespace draco::cel

namespace draco::cel::stdlib_internal {
namespace {

// ---- optionals and maps -----------------------------------------------------------------------

Value OptOf(const Value* a, EvalContext&) { return Value::Optional(a[0]); }
bool IsZeroValue(const Value& v) {
  switch (v.kind()) {
    case Kind::kNull:
      return true;
    case Kind::kBool:
      return !v.bool_value();
    case Kind::kInt:
      return v.int_value() == 0;
    case Kind::kUint:
      return v.uint_value() == 0;
    case Kind::kDouble:
      return v.double_value() == 0;
    case Kind::kString:
    case Kind::kBytes:
      return v.str().empty();
    case Kind::kList:
      return v.list().size() == 0;
    case Kind::kMap:
      return v.map().size() == 0;
    default:
      return false;
  }
}
Value OptOfNonZero(const Value* a, EvalContext&) {
  if (IsZeroValue(a[0])) return Value::Optional(std::nullopt);
  return Value::Optional(a[0]);
}
Value OptNone(const Value*, EvalContext&) { return Value::Optional(std::nullopt); }
Value OptHasValue(const Value* a, EvalContext&) {
  return Value::Bool(a[0].optional_value() != nullptr);
}
Value OptValue(const Value* a, EvalContext&) {
  if (!a[0].optional_value()) return Value::Error("optional.none() dereference");
  return *a[0].optional_value();
}
Value OptOrValue(const Value* a, EvalContext&) {
  return a[0].optional_value() ? *a[0].optional_value() : a[1];
}
Value OptOr(const Value* a, EvalContext&) { return a[0].optional_value() ? a[0] : a[1]; }
Value MapInsert(const Value* a, EvalContext&) {
  if (a[0].map().Contains(a[1])) {
    return Value::Error("insert failed: key " + a[1].DebugString() + " already exists");
  }
  if (!ValidMapKey(a[1])) return Value::Error("unsupported key type");
  std::vector<std::pair<Value, Value>> entries;
  for (size_t i = 0; i < a[0].map().size(); ++i) {
    entries.emplace_back(a[0].map().KeyAt(i), a[0].map().ValueAt(i));
  }
  entries.emplace_back(a[1], a[2]);
  return Value::Map(std::make_shared<const MapValueImpl>(std::move(entries)));
}
Value MapInsertMap(const Value* a, EvalContext& ctx) {
  Value cur = a[0];
  for (size_t i = 0; i < a[1].map().size(); ++i) {
    std::array<Value, 3> args{cur, a[1].map().KeyAt(i), a[1].map().ValueAt(i)};
    cur = MapInsert(args.data(), ctx);
    if (cur.IsError()) return cur;
  }
  return cur;
}

}  // namespace

void AddOptionalFunctions(Env& env) {
  const T I = T::Int(), S = T::String(), Bo = T::Bool(), Dy = T::Dyn();
  const T LA = T::List(kA), MAB = T::Map(kA, kB);
  // Optional types.
  Add(env, "optional.of", "optional_of", false, {kA}, T::Optional(kA), OptOf);
  Add(env, "optional.ofNonZeroValue", "optional_ofNonZeroValue", false, {kA}, T::Optional(kA),
      OptOfNonZero);
  Add(env, "optional.none", "optional_none", false, {}, T::Optional(kA), OptNone);
  Add(env, "hasValue", "optional_hasValue", true, {T::Optional(kA)}, Bo, OptHasValue);
  Add(env, "value", "optional_value", true, {T::Optional(kA)}, kA, OptValue);
  Add(env, "orValue", "optional_orValue_value", true, {T::Optional(kA), kA}, kA, OptOrValue);
  Add(env, "or", "optional_or_optional", true, {T::Optional(kA), T::Optional(kA)}, T::Optional(kA),
      OptOr);
  Add(env, "_?._", "select_optional_field", false, {Dy, S}, T::Optional(Dy), nullptr);
  Add(env, "_[?_]", "list_optindex_optional_int", false, {LA, I}, T::Optional(kA), nullptr);
  Add(env, "_[?_]", "map_optindex_optional_value", false, {MAB, kA}, T::Optional(kB), nullptr);
  Add(env, "_[?_]", "optional_list_optindex_optional_int", false, {T::Optional(LA), I},
      T::Optional(kA), nullptr);
  Add(env, "_[?_]", "optional_map_optindex_optional_value", false, {T::Optional(MAB), kA},
      T::Optional(kB), nullptr);
  Add(env, "_[_]", "index_list", false, {LA, I}, kA, nullptr);
  Add(env, "_[_]", "index_map", false, {MAB, kA}, kB, nullptr);
  Add(env, "_[_]", "optional_list_index_int", false, {T::Optional(LA), I}, T::Optional(kA),
      nullptr);
  Add(env, "_[_]", "optional_map_index_value", false, {T::Optional(MAB), kA}, T::Optional(kB),
      nullptr);
  Add(env, "_&&_", "logical_and", false, {Bo, Bo}, Bo, nullptr);
  Add(env, "_||_", "logical_or", false, {Bo, Bo}, Bo, nullptr);
  Add(env, "_?_:_", "conditional", false, {Bo, kA, kA}, kA, nullptr);

  // Two-variable comprehension helpers.
  Add(env, "cel.@mapInsert", "@mapInsert_map_key_value", false, {MAB, kA, kB}, MAB, MapInsert);
  Add(env, "cel.@mapInsert", "@mapInsert_map_map", false, {MAB, MAB}, MAB, MapInsertMap);
}

}  // namespace draco::cel::stdlib_internal

namespace draco::cel {

bool ValidMapKey(const Value& k) {
  return k.kind() == Kind::kString || k.kind() == Kind::kInt || k.kind() == Kind::kUint ||
         k.kind() == Kind::kBool;
}

}  // namespace draco::cel
