// The declared CEL environment: types, variables, object types and function overloads.
//
// An Env is built once (thread-hostile while being built), then frozen and shared: every method
// of a frozen Env is const and thread-safe. Libraries (the standard library here, the DRA
// environment in controller/celenv) add declarations through AddVariable/AddObjectType/
// AddOverload. Each overload carries its static signature (for the checker), its implementation
// and its runtime cost function (cel-go cost units).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "controller/cel/value.h"

namespace draco::cel {

// A static (checker) type.
struct Type {
  enum class K : uint8_t {
    kDyn,
    kNull,
    kBool,
    kInt,
    kUint,
    kDouble,
    kString,
    kBytes,
    kList,      // params[0] = element
    kMap,       // params[0] = key, params[1] = value
    kType,      // params[0] = the type's type (may be absent)
    kOptional,  // params[0] = inner
    kOpaque,    // name = host type name, e.g. "kubernetes.Quantity"
    kObject,    // name = declared object type, e.g. "kubernetes.DRADevice"
    kParam,     // name = type parameter
    kError,
  };
  K k = K::kDyn;
  std::string name;
  std::vector<Type> params;

  static Type Dyn() { return {}; }
  static Type Of(K k) { return {k, "", {}}; }
  static Type Null() { return Of(K::kNull); }
  static Type Bool() { return Of(K::kBool); }
  static Type Int() { return Of(K::kInt); }
  static Type Uint() { return Of(K::kUint); }
  static Type Double() { return Of(K::kDouble); }
  static Type String() { return Of(K::kString); }
  static Type Bytes() { return Of(K::kBytes); }
  static Type Error() { return Of(K::kError); }
  static Type List(Type elem) { return {K::kList, "", {std::move(elem)}}; }
  static Type Map(Type key, Type value) {
    return {K::kMap, "", {std::move(key), std::move(value)}};
  }
  static Type TypeOf(Type t) { return {K::kType, "", {std::move(t)}}; }
  static Type Optional(Type t) { return {K::kOptional, "", {std::move(t)}}; }
  static Type Opaque(std::string name) { return {K::kOpaque, std::move(name), {}}; }
  static Type Object(std::string name) { return {K::kObject, std::move(name), {}}; }
  static Type Param(std::string name) { return {K::kParam, std::move(name), {}}; }

  // cel-go's rendering: "int", "list(string)", "map(string, dyn)", "kubernetes.Quantity".
  std::string ToString() const;
  friend bool operator==(const Type& a, const Type& b) {
    return a.k == b.k && a.name == b.name && a.params == b.params;
  }
};

class EvalContext;

// A function implementation: receives exactly the declared number of arguments (receiver first).
// Never called with error arguments. Must be thread-safe.
using FunctionImpl = Value (*)(const Value* args, EvalContext& ctx);
// Runtime cost of one call in cel-go units, given the arguments and the result.
using CostFunction = uint64_t (*)(const Value* args, size_t argc, const Value& result);

struct Overload {
  std::string id;          // e.g. "add_int64"
  bool member = false;     // called as receiver.name(args)
  std::vector<Type> args;  // receiver first for member overloads
  Type result;
  FunctionImpl impl = nullptr;
  CostFunction cost = nullptr;  // nullptr: cost 1
  // For optional host types: the runtime kind/type name each argument must have (derived from
  // `args`; empty string = any).
};

struct ObjectType {
  std::string name;
  std::map<std::string, Type> fields;
};

class Env {
 public:
  Env() = default;
  Env(const Env&) = delete;
  Env& operator=(const Env&) = delete;
  ~Env() = default;

  void AddVariable(const std::string& name, Type type) { variables_[name] = std::move(type); }
  void AddObjectType(ObjectType type) { objects_[type.name] = std::move(type); }
  void AddOverload(const std::string& function, Overload overload);

  const Type* FindVariable(const std::string& name) const;
  const ObjectType* FindObjectType(const std::string& name) const;
  // All overloads of `function`, or nullptr.
  const std::vector<Overload>* FindFunction(const std::string& function) const;

 private:
  std::unordered_map<std::string, Type> variables_;
  std::unordered_map<std::string, ObjectType> objects_;
  std::unordered_map<std::string, std::vector<Overload>> functions_;
};

// True if a runtime value may be passed for a parameter of declared type `t` (kind-level check,
// as cel-go's runtime type guards do).
bool RuntimeAssignable(const Type& t, const Value& v);

// Standard cost helpers (cel-go common/cost.go).
inline constexpr double kStringTraversalCostFactor = 0.1;
inline constexpr double kRegexStringLengthCostFactor = 0.25;
inline constexpr uint64_t kListCreateBaseCost = 10;
inline constexpr uint64_t kMapCreateBaseCost = 30;
// cel-go's actualSize(): size of strings (code points), bytes, lists, maps; 1 otherwise.
uint64_t ActualSize(const Value& v);

}  // namespace draco::cel
