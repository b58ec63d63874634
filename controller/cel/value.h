// CEL runtime values.
//
// A Value is a small, copyable handle: scalars are stored inline, everything else (strings, bytes,
// lists, maps, optionals, errors, type values and opaque host values) is held through a
// reference-counted pointer to immutable data. Values are therefore cheap to copy and safe to share
// between threads once built (the referenced data is never mutated after construction).
//
// Errors are values (tier 3 of draco's CEL error model): an expression that fails at runtime
// produces an error Value that flows through evaluation, so `&&`/`||` can absorb it as cel-go does.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace draco::cel {

enum class Kind : uint8_t {
  kNull,
  kBool,
  kInt,
  kUint,
  kDouble,
  kString,
  kBytes,
  kList,
  kMap,
  kType,
  kOptional,
  kOpaque,
  kError,
};

// Returns the CEL type name of a kind ("int", "list", ...). kOpaque returns "opaque".
std::string_view KindName(Kind kind);

class Value;
class ListValue;
class MapValue;
class OpaqueValue;

// The payload of an error value.
struct ErrorInfo {
  std::string message;
};

class Value {
 public:
  // A null value.
  Value() : kind_(Kind::kNull) {}

  static Value Null() { return {}; }
  static Value Bool(bool b) {
    Value v(Kind::kBool);
    v.s_.b = b;
    return v;
  }
  static Value Int(int64_t i) {
    Value v(Kind::kInt);
    v.s_.i = i;
    return v;
  }
  static Value Uint(uint64_t u) {
    Value v(Kind::kUint);
    v.s_.u = u;
    return v;
  }
  static Value Double(double d) {
    Value v(Kind::kDouble);
    v.s_.d = d;
    return v;
  }
  static Value String(std::string s);
  static Value String(std::shared_ptr<const std::string> s);
  static Value Bytes(std::string s);
  static Value List(std::vector<Value> elems);
  static Value List(std::shared_ptr<const ListValue> list);
  static Value Map(std::shared_ptr<const MapValue> map);
  // A type value, e.g. the value of the expression `int`. `name` is the CEL type name.
  static Value Type(std::string name);
  static Value Optional(std::optional<Value> v);
  static Value Opaque(std::shared_ptr<const OpaqueValue> v);
  static Value Error(std::string message);

  Kind kind() const { return kind_; }
  bool IsError() const { return kind_ == Kind::kError; }
  bool IsBool() const { return kind_ == Kind::kBool; }
  bool IsNumber() const {
    return kind_ == Kind::kInt || kind_ == Kind::kUint || kind_ == Kind::kDouble;
  }

  // Accessors; each has the precondition that kind() matches.
  bool bool_value() const { return s_.b; }
  int64_t int_value() const { return s_.i; }
  uint64_t uint_value() const { return s_.u; }
  double double_value() const { return s_.d; }
  // String and bytes payload.
  const std::string& str() const { return *static_cast<const std::string*>(p_.get()); }
  const ListValue& list() const { return *static_cast<const ListValue*>(p_.get()); }
  const MapValue& map() const { return *static_cast<const MapValue*>(p_.get()); }
  const OpaqueValue& opaque() const { return *static_cast<const OpaqueValue*>(p_.get()); }
  const std::string& error_message() const {
    return static_cast<const ErrorInfo*>(p_.get())->message;
  }
  const std::string& type_name() const { return *static_cast<const std::string*>(p_.get()); }
  // Optional payload: nullptr for optional.none().
  const Value* optional_value() const { return static_cast<const Value*>(p_.get()); }

  // Shared handles, for storing payloads elsewhere without copying.
  std::shared_ptr<const ListValue> list_ptr() const {
    return std::static_pointer_cast<const ListValue>(p_);
  }
  std::shared_ptr<const MapValue> map_ptr() const {
    return std::static_pointer_cast<const MapValue>(p_);
  }
  std::shared_ptr<const OpaqueValue> opaque_ptr() const {
    return std::static_pointer_cast<const OpaqueValue>(p_);
  }

  // The CEL type name of this value, e.g. "int", "list", "kubernetes.Quantity".
  std::string TypeName() const;

  // A debug rendering ("1", "\"a\"", "[1, 2]", "error: ...").
  std::string DebugString() const;

 private:
  explicit Value(Kind k) : kind_(k) {}

  Kind kind_;
  union Scalar {
    bool b;
    int64_t i;
    uint64_t u;
    double d;
  } s_{.i = 0};
  std::shared_ptr<const void> p_;
};

// An immutable list.
class ListValue {
 public:
  explicit ListValue(std::vector<Value> elems) : elems_(std::move(elems)) {}
  size_t size() const { return elems_.size(); }
  const Value& Get(size_t i) const { return elems_[i]; }
  const std::vector<Value>& elems() const { return elems_; }

 private:
  std::vector<Value> elems_;
};

// An immutable map. Hosts may subclass it to expose their own data without copying (celenv does,
// to give unknown attribute domains an empty-map default). Implementations must be thread-safe for
// concurrent reads.
class MapValue {
 public:
  virtual ~MapValue() = default;
  // Number of entries visible to iteration and size().
  virtual size_t size() const = 0;
  // Entry i in iteration order, 0 <= i < size().
  virtual const Value& KeyAt(size_t i) const = 0;
  virtual const Value& ValueAt(size_t i) const = 0;
  // Looks a key up for indexing/selection/has(). Returns nullptr when absent. May return a
  // default for absent keys (celenv's attribute domains do).
  virtual const Value* Find(const Value& key) const;
  // Membership for the `in` operator; defaults to an exact key search (ignoring defaults).
  virtual bool Contains(const Value& key) const;

 protected:
  // Linear key search with CEL's heterogeneous numeric key equality.
  const Value* FindLinear(const Value& key) const;
};

// The default map: insertion-ordered entries with a hash index for string keys.
class MapValueImpl final : public MapValue {
 public:
  // Precondition: keys are unique (under CEL key equality).
  explicit MapValueImpl(std::vector<std::pair<Value, Value>> entries);
  size_t size() const override { return entries_.size(); }
  const Value& KeyAt(size_t i) const override { return entries_[i].first; }
  const Value& ValueAt(size_t i) const override { return entries_[i].second; }
  const Value* Find(const Value& key) const override;

 private:
  std::vector<std::pair<Value, Value>> entries_;
};

// Extension point for host types (celenv's quantity and semver). Thread-safe for reads.
class OpaqueValue {
 public:
  virtual ~OpaqueValue() = default;
  // The CEL type name, e.g. "kubernetes.Quantity".
  virtual std::string_view TypeName() const = 0;
  // Equality with another opaque value: true/false, or nullopt when the pair has no equality
  // overload (cel-go's "no such overload" from the host type's Equal).
  virtual std::optional<bool> Equals(const OpaqueValue& other) const = 0;
  // A rendering for debugging and string() conversions where the host supports them.
  virtual std::string DebugString() const = 0;
  // Ordering with another opaque value (-1/0/1), or nullopt when not ordered (the default).
  virtual std::optional<int> Compare(const OpaqueValue& other) const {
    (void)other;
    return std::nullopt;
  }
};

// Outcome of cel-go's Equal: an opaque host value on the left compared with a value it has no
// equality for is an error (no such overload).
enum class Equality : uint8_t { kFalse, kTrue, kError };
// CEL equality as cel-go's types.Equal (heterogeneous numeric equality, deep list/map equality
// where an element error counts as "not unequal", NaN != NaN).
Equality ValueEquality(const Value& a, const Value& b);
// ValueEquality(a, b) == Equality::kTrue.
inline bool ValueEquals(const Value& a, const Value& b);

// Three-way comparison for ordered kinds (numbers across int/uint/double, string, bytes, bool).
// Returns nullopt if the pair is not comparable. NaN compares as unordered (nullopt with
// `*unordered` set if provided).
std::optional<int> ValueCompare(const Value& a, const Value& b, bool* unordered = nullptr);

// Returns the number of code points in a UTF-8 string (invalid bytes count as one each).
int64_t CodePointCount(std::string_view s);

// Formats a double the way Go's strconv.FormatFloat(d, 'g', -1, 64) does (cel-go string(double)).
std::string FormatDouble(double d);

// Common error constructors matching cel-go's messages.
Value NoSuchOverload(std::string_view function);
Value NoSuchKey(const Value& key);

inline bool ValueEquals(const Value& a, const Value& b) {
  return ValueEquality(a, b) == Equality::kTrue;
}

}  // namespace draco::cel
