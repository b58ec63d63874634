#include "controller/cel/stdlib.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "controller/cel/format.h"
#include "controller/cel/stdlib_internal.h"
#include "controller/cel/time_lib.h"
#include "controller/cel/unicode.h"

namespace draco::cel::stdlib_internal {
namespace {

// ---- arithmetic -------------------------------------------------------------------------------

Value IntOverflow() { return Value::Error("integer overflow"); }
Value UintOverflow() { return Value::Error("unsigned integer overflow"); }

}  // namespace

Value AddInt(const Value* a, EvalContext&) {
  int64_t r;
  if (__builtin_add_overflow(a[0].int_value(), a[1].int_value(), &r)) return IntOverflow();
  return Value::Int(r);
}
Value AddUint(const Value* a, EvalContext&) {
  uint64_t r;
  if (__builtin_add_overflow(a[0].uint_value(), a[1].uint_value(), &r)) return UintOverflow();
  return Value::Uint(r);
}
Value AddDouble(const Value* a, EvalContext&) {
  return Value::Double(a[0].double_value() + a[1].double_value());
}

namespace {

Value SubInt(const Value* a, EvalContext&) {
  int64_t r;
  if (__builtin_sub_overflow(a[0].int_value(), a[1].int_value(), &r)) return IntOverflow();
  return Value::Int(r);
}
Value MulInt(const Value* a, EvalContext&) {
  int64_t r;
  if (__builtin_mul_overflow(a[0].int_value(), a[1].int_value(), &r)) return IntOverflow();
  return Value::Int(r);
}
Value DivInt(const Value* a, EvalContext&) {
  if (a[1].int_value() == 0) return Value::Error("division by zero");
  if (a[0].int_value() == INT64_MIN && a[1].int_value() == -1) return IntOverflow();
  return Value::Int(a[0].int_value() / a[1].int_value());
}
Value ModInt(const Value* a, EvalContext&) {
  if (a[1].int_value() == 0) return Value::Error("modulus by zero");
  if (a[0].int_value() == INT64_MIN && a[1].int_value() == -1) return IntOverflow();
  return Value::Int(a[0].int_value() % a[1].int_value());
}
Value NegInt(const Value* a, EvalContext&) {
  if (a[0].int_value() == INT64_MIN) return IntOverflow();
  return Value::Int(-a[0].int_value());
}
Value SubUint(const Value* a, EvalContext&) {
  uint64_t r;
  if (__builtin_sub_overflow(a[0].uint_value(), a[1].uint_value(), &r)) return UintOverflow();
  return Value::Uint(r);
}
Value MulUint(const Value* a, EvalContext&) {
  uint64_t r;
  if (__builtin_mul_overflow(a[0].uint_value(), a[1].uint_value(), &r)) return UintOverflow();
  return Value::Uint(r);
}
Value DivUint(const Value* a, EvalContext&) {
  if (a[1].uint_value() == 0) return Value::Error("division by zero");
  return Value::Uint(a[0].uint_value() / a[1].uint_value());
}
Value ModUint(const Value* a, EvalContext&) {
  if (a[1].uint_value() == 0) return Value::Error("modulus by zero");
  return Value::Uint(a[0].uint_value() % a[1].uint_value());
}
Value SubDouble(const Value* a, EvalContext&) {
  return Value::Double(a[0].double_value() - a[1].double_value());
}
Value MulDouble(const Value* a, EvalContext&) {
  return Value::Double(a[0].double_value() * a[1].double_value());
}
Value DivDouble(const Value* a, EvalContext&) {
  return Value::Double(a[0].double_value() / a[1].double_value());
}
Value NegDouble(const Value* a, EvalContext&) { return Value::Double(-a[0].double_value()); }
Value AddString(const Value* a, EvalContext&) { return Value::String(a[0].str() + a[1].str()); }
Value AddBytes(const Value* a, EvalContext&) { return Value::Bytes(a[0].str() + a[1].str()); }
Value AddList(const Value* a, EvalContext&) {
  if (a[1].list().size() == 0) return a[0];
  if (a[0].list().size() == 0) return a[1];
  std::vector<Value> out = a[0].list().elems();
  out.insert(out.end(), a[1].list().elems().begin(), a[1].list().elems().end());
  return Value::List(std::move(out));
}
Value Not(const Value* a, EvalContext&) { return Value::Bool(!a[0].bool_value()); }
Value NotStrictlyFalse(const Value* a, EvalContext&) {
  return Value::Bool(!(a[0].IsBool() && !a[0].bool_value()));
}

Value Eq(const Value* a, EvalContext&) {
  Equality e = ValueEquality(a[0], a[1]);
  if (e == Equality::kError) return NoSuchOverload("_==_");
  return Value::Bool(e == Equality::kTrue);
}
Value Ne(const Value* a, EvalContext&) {
  return Value::Bool(ValueEquality(a[0], a[1]) != Equality::kTrue);
}

template <int kOp>
Value Cmp(const Value* a, EvalContext&) {
  bool unordered = false;
  auto c = ValueCompare(a[0], a[1], &unordered);
  if (!c) {
    if (unordered) return Value::Error("NaN values cannot be ordered");
    return NoSuchOverload("comparison");
  }
  switch (kOp) {
    case 0:
      return Value::Bool(*c < 0);
    case 1:
      return Value::Bool(*c <= 0);
    case 2:
      return Value::Bool(*c > 0);
    default:
      return Value::Bool(*c >= 0);
  }
}

Value InList(const Value* a, EvalContext&) {
  for (const Value& e : a[1].list().elems()) {
    if (ValueEquals(e, a[0])) return Value::Bool(true);
  }
  return Value::Bool(false);
}
Value InMap(const Value* a, EvalContext&) { return Value::Bool(a[1].map().Contains(a[0])); }

Value Size(const Value* a, EvalContext&) {
  return Value::Int(static_cast<int64_t>(ActualSize(a[0])));
}

// ---- conversions ------------------------------------------------------------------------------

Value Identity(const Value* a, EvalContext&) { return a[0]; }
Value IntFromUint(const Value* a, EvalContext&) {
  if (a[0].uint_value() > static_cast<uint64_t>(INT64_MAX)) return Value::Error("integer overflow");
  return Value::Int(static_cast<int64_t>(a[0].uint_value()));
}
Value IntFromDouble(const Value* a, EvalContext&) {
  double d = a[0].double_value();
  if (!(d > -9223372036854775808.0 && d < 9223372036854775807.0) || std::isnan(d)) {
    return Value::Error("integer overflow");
  }
  return Value::Int(static_cast<int64_t>(d));
}
bool ParseGoInt(const std::string& s, int64_t& out) {
  if (s.empty()) return false;
  size_t i = 0;
  if (s[0] == '+' || s[0] == '-') i = 1;
  if (i >= s.size()) return false;
  for (size_t k = i; k < s.size(); ++k) {
    if (s[k] < '0' || s[k] > '9') return false;
  }
  errno = 0;
  int64_t v = std::strtoll(s.c_str(), nullptr, 10);
  if (errno == ERANGE) return false;
  out = v;
  return true;
}
Value IntFromString(const Value* a, EvalContext&) {
  int64_t v;
  if (!ParseGoInt(a[0].str(), v)) return Value::Error("cannot convert string to int");
  return Value::Int(v);
}
Value UintFromInt(const Value* a, EvalContext&) {
  if (a[0].int_value() < 0) return Value::Error("unsigned integer overflow");
  return Value::Uint(static_cast<uint64_t>(a[0].int_value()));
}
Value UintFromDouble(const Value* a, EvalContext&) {
  double d = a[0].double_value();
  if (!(d >= 0 && d < 18446744073709551615.0) || std::isnan(d)) {
    return Value::Error("unsigned integer overflow");
  }
  return Value::Uint(static_cast<uint64_t>(d));
}
Value UintFromString(const Value* a, EvalContext&) {
  const std::string& s = a[0].str();
  if (s.empty() || s[0] == '-' || s[0] == '+') return Value::Error("cannot convert string to uint");
  for (char c : s) {
    if (c < '0' || c > '9') return Value::Error("cannot convert string to uint");
  }
  errno = 0;
  uint64_t v = std::strtoull(s.c_str(), nullptr, 10);
  if (errno == ERANGE) return Value::Error("cannot convert string to uint");
  return Value::Uint(v);
}
Value DoubleFromInt(const Value* a, EvalContext&) {
  return Value::Double(static_cast<double>(a[0].int_value()));
}
Value DoubleFromUint(const Value* a, EvalContext&) {
  return Value::Double(static_cast<double>(a[0].uint_value()));
}
Value DoubleFromString(const Value* a, EvalContext&) {
  // Go strconv.ParseFloat: decimal/hex floats, inf/infinity/nan (case-insensitive), underscores
  // only with a base prefix (not supported here).
  std::string s = a[0].str();
  std::string lower;
  for (char c : s) lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  std::string body = lower;
  bool neg = false;
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
    neg = body[0] == '-';
    body = body.substr(1);
  }
  if (body == "inf" || body == "infinity") {
    return Value::Double(neg ? -std::numeric_limits<double>::infinity()
                             : std::numeric_limits<double>::infinity());
  }
  if (body == "nan" && s.size() == 3) return Value::Double(std::nan(""));
  bool ok = !body.empty();
  bool hex = body.rfind("0x", 0) == 0;
  for (char c : body) {
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == '+' ||
          c == '-' ||
          (hex && (std::isxdigit(static_cast<unsigned char>(c)) || c == 'x' || c == 'p')))) {
      ok = false;
    }
  }
  if (!ok) return Value::Error("cannot convert string to double");
  errno = 0;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || (errno == ERANGE && std::isinf(v))) {
    return Value::Error("cannot convert string to double");
  }
  return Value::Double(v);
}
Value StringFromInt(const Value* a, EvalContext&) {
  return Value::String(std::to_string(a[0].int_value()));
}
Value StringFromUint(const Value* a, EvalContext&) {
  return Value::String(std::to_string(a[0].uint_value()));
}
Value StringFromDouble(const Value* a, EvalContext&) {
  return Value::String(FormatDouble(a[0].double_value()));
}
Value StringFromBool(const Value* a, EvalContext&) {
  return Value::String(a[0].bool_value() ? "true" : "false");
}
Value StringFromBytes(const Value* a, EvalContext&) {
  if (!IsValidUtf8(a[0].str())) {
    return Value::Error("invalid UTF-8 in bytes, cannot convert to string");
  }
  return Value::String(a[0].str());
}
Value BytesFromString(const Value* a, EvalContext&) { return Value::Bytes(a[0].str()); }
Value BoolFromString(const Value* a, EvalContext&) {
  const std::string& s = a[0].str();
  if (s == "1" || s == "t" || s == "T" || s == "TRUE" || s == "true" || s == "True") {
    return Value::Bool(true);
  }
  if (s == "0" || s == "f" || s == "F" || s == "FALSE" || s == "false" || s == "False") {
    return Value::Bool(false);
  }
  return Value::Error("type conversion error from 'string' to 'bool'");
}
Value TypeOfValue(const Value* a, EvalContext&) { return Value::Type(a[0].TypeName()); }

}  // namespace

void AddOperatorFunctions(Env& env) {
  const T I = T::Int(), U = T::Uint(), D = T::Double(), S = T::String(), By = T::Bytes(),
          Bo = T::Bool();
  const T LA = T::List(kA), MAB = T::Map(kA, kB);
  // Equality and ordering.
  Add(env, "_==_", "equals", false, {kA, kA}, Bo, Eq, CostMinSize);
  Add(env, "_!=_", "not_equals", false, {kA, kA}, Bo, Ne, CostMinSize);
  struct Ord {
    const char* fn;
    FunctionImpl impl;
  };
  for (const Ord& o :
       {Ord{"_<_", Cmp<0>}, Ord{"_<=_", Cmp<1>}, Ord{"_>_", Cmp<2>}, Ord{"_>=_", Cmp<3>}}) {
    Add(env, o.fn, "bool", false, {Bo, Bo}, Bo, o.impl);
    Add(env, o.fn, "int64", false, {I, I}, Bo, o.impl);
    Add(env, o.fn, "uint64", false, {U, U}, Bo, o.impl);
    Add(env, o.fn, "double", false, {D, D}, Bo, o.impl);
    Add(env, o.fn, "string", false, {S, S}, Bo, o.impl, CostMinSize);
    Add(env, o.fn, "bytes", false, {By, By}, Bo, o.impl, CostMinSize);
    Add(env, o.fn, "int64_uint64", false, {I, U}, Bo, o.impl);
    Add(env, o.fn, "int64_double", false, {I, D}, Bo, o.impl);
    Add(env, o.fn, "uint64_int64", false, {U, I}, Bo, o.impl);
    Add(env, o.fn, "uint64_double", false, {U, D}, Bo, o.impl);
    Add(env, o.fn, "double_int64", false, {D, I}, Bo, o.impl);
    Add(env, o.fn, "double_uint64", false, {D, U}, Bo, o.impl);
  }

  // Arithmetic.
  Add(env, "_+_", "add_int64", false, {I, I}, I, AddInt);
  Add(env, "_+_", "add_uint64", false, {U, U}, U, AddUint);
  Add(env, "_+_", "add_double", false, {D, D}, D, AddDouble);
  Add(env, "_+_", "add_string", false, {S, S}, S, AddString, CostConcat);
  Add(env, "_+_", "add_bytes", false, {By, By}, By, AddBytes, CostConcat);
  Add(env, "_+_", "add_list", false, {LA, LA}, LA, AddList);
  Add(env, "_-_", "subtract_int64", false, {I, I}, I, SubInt);
  Add(env, "_-_", "subtract_uint64", false, {U, U}, U, SubUint);
  Add(env, "_-_", "subtract_double", false, {D, D}, D, SubDouble);
  Add(env, "_*_", "multiply_int64", false, {I, I}, I, MulInt);
  Add(env, "_*_", "multiply_uint64", false, {U, U}, U, MulUint);
  Add(env, "_*_", "multiply_double", false, {D, D}, D, MulDouble);
  Add(env, "_/_", "divide_int64", false, {I, I}, I, DivInt);
  Add(env, "_/_", "divide_uint64", false, {U, U}, U, DivUint);
  Add(env, "_/_", "divide_double", false, {D, D}, D, DivDouble);
  Add(env, "_%_", "modulo_int64", false, {I, I}, I, ModInt);
  Add(env, "_%_", "modulo_uint64", false, {U, U}, U, ModUint);
  Add(env, "-_", "negate_int64", false, {I}, I, NegInt);
  Add(env, "-_", "negate_double", false, {D}, D, NegDouble);
  Add(env, "!_", "logical_not", false, {Bo}, Bo, Not);
  Add(env, "@not_strictly_false", "not_strictly_false", false, {Bo}, Bo, NotStrictlyFalse);

  Add(env, "@in", "in_list", false, {kA, LA}, Bo, InList, CostInList);
  Add(env, "@in", "in_map", false, {kA, MAB}, Bo, InMap);

  for (bool member : {false, true}) {
    std::string p = member ? "_" : "";
    Add(env, "size", "size_string" + p, member, {S}, I, Size);
    Add(env, "size", "size_bytes" + p, member, {By}, I, Size);
    Add(env, "size", "size_list" + p, member, {LA}, I, Size);
    Add(env, "size", "size_map" + p, member, {MAB}, I, Size);
  }
}

void AddConversionFunctions(Env& env) {
  const T I = T::Int(), U = T::Uint(), D = T::Double(), S = T::String(), By = T::Bytes(),
          Bo = T::Bool(), Dy = T::Dyn();
  // Conversions.
  Add(env, "int", "int64_to_int64", false, {I}, I, Identity);
  Add(env, "int", "uint64_to_int64", false, {U}, I, IntFromUint);
  Add(env, "int", "double_to_int64", false, {D}, I, IntFromDouble);
  Add(env, "int", "string_to_int64", false, {S}, I, IntFromString);
  Add(env, "uint", "uint64_to_uint64", false, {U}, U, Identity);
  Add(env, "uint", "int64_to_uint64", false, {I}, U, UintFromInt);
  Add(env, "uint", "double_to_uint64", false, {D}, U, UintFromDouble);
  Add(env, "uint", "string_to_uint64", false, {S}, U, UintFromString);
  Add(env, "double", "double_to_double", false, {D}, D, Identity);
  Add(env, "double", "int64_to_double", false, {I}, D, DoubleFromInt);
  Add(env, "double", "uint64_to_double", false, {U}, D, DoubleFromUint);
  Add(env, "double", "string_to_double", false, {S}, D, DoubleFromString);
  Add(env, "string", "string_to_string", false, {S}, S, Identity);
  Add(env, "string", "int64_to_string", false, {I}, S, StringFromInt);
  Add(env, "string", "uint64_to_string", false, {U}, S, StringFromUint);
  Add(env, "string", "double_to_string", false, {D}, S, StringFromDouble);
  Add(env, "string", "bool_to_string", false, {Bo}, S, StringFromBool);
  Add(env, "string", "bytes_to_string", false, {By}, S, StringFromBytes, CostArg0Traversal);
  Add(env, "bytes", "bytes_to_bytes", false, {By}, By, Identity);
  Add(env, "bytes", "string_to_bytes", false, {S}, By, BytesFromString, CostArg0Traversal);
  Add(env, "bool", "bool_to_bool", false, {Bo}, Bo, Identity);
  Add(env, "bool", "string_to_bool", false, {S}, Bo, BoolFromString);
  Add(env, "dyn", "to_dyn", false, {kA}, Dy, Identity);
  Add(env, "type", "type", false, {kA}, T::TypeOf(kA), TypeOfValue);
}

}  // namespace draco::cel::stdlib_internal

namespace draco::cel {

void AddStandardLibrary(Env& env) {
  AddTimeLibrary(env);
  stdlib_internal::AddOperatorFunctions(env);
  stdlib_internal::AddConversionFunctions(env);
  stdlib_internal::AddStringFunctions(env);
  stdlib_internal::AddListFunctions(env);
  stdlib_internal::AddOptionalFunctions(env);
}

}  // namespace draco::cel
