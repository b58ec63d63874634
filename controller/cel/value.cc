#include "controller/cel/value.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

namespace draco::cel {

std::string_view KindName(Kind kind) {
  switch (kind) {
    case Kind::kNull:
      return "null_type";
    case Kind::kBool:
      return "bool";
    case Kind::kInt:
      return "int";
    case Kind::kUint:
      return "uint";
    case Kind::kDouble:
      return "double";
    case Kind::kString:
      return "string";
    case Kind::kBytes:
      return "bytes";
    case Kind::kList:
      return "list";
    case Kind::kMap:
      return "map";
    case Kind::kType:
      return "type";
    case Kind::kOptional:
      return "optional_type";
    case Kind::kOpaque:
      return "opaque";
    case Kind::kError:
      return "*types.Err";
  }
  return "unknown";
}

Value Value::String(std::string s) {
  Value v(Kind::kString);
  v.p_ = std::make_shared<const std::string>(std::move(s));
  return v;
}

Value Value::String(std::shared_ptr<const std::string> s) {
  Value v(Kind::kString);
  v.p_ = std::move(s);
  return v;
}

Value Value::Bytes(std::string s) {
  Value v(Kind::kBytes);
  v.p_ = std::make_shared<const std::string>(std::move(s));
  return v;
}

Value Value::List(std::vector<Value> elems) {
  return List(std::make_shared<const ListValue>(std::move(elems)));
}

Value Value::List(std::shared_ptr<const ListValue> list) {
  Value v(Kind::kList);
  v.p_ = std::move(list);
  return v;
}

Value Value::Map(std::shared_ptr<const MapValue> map) {
  Value v(Kind::kMap);
  v.p_ = std::move(map);
  return v;
}

Value Value::Type(std::string name) {
  Value v(Kind::kType);
  v.p_ = std::make_shared<const std::string>(std::move(name));
  return v;
}

Value Value::Optional(std::optional<Value> inner) {
  Value v(Kind::kOptional);
  if (inner.has_value()) v.p_ = std::make_shared<const Value>(std::move(*inner));
  return v;
}

Value Value::Opaque(std::shared_ptr<const OpaqueValue> o) {
  Value v(Kind::kOpaque);
  v.p_ = std::move(o);
  return v;
}

Value Value::Error(std::string message) {
  Value v(Kind::kError);
  v.p_ = std::make_shared<const ErrorInfo>(ErrorInfo{std::move(message)});
  return v;
}

std::string Value::TypeName() const {
  if (kind_ == Kind::kOpaque) return std::string(opaque().TypeName());
  return std::string(KindName(kind_));
}

namespace {

void AppendQuoted(std::string& out, const std::string& s) {
  out.push_back('"');
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  out.push_back('"');
}

}  // namespace

std::string Value::DebugString() const {
  switch (kind_) {
    case Kind::kNull:
      return "null";
    case Kind::kBool:
      return s_.b ? "true" : "false";
    case Kind::kInt:
      return std::to_string(s_.i);
    case Kind::kUint:
      return std::to_string(s_.u) + "u";
    case Kind::kDouble:
      return FormatDouble(s_.d);
    case Kind::kString: {
      std::string out;
      AppendQuoted(out, str());
      return out;
    }
    case Kind::kBytes: {
      std::string out = "b";
      AppendQuoted(out, str());
      return out;
    }
    case Kind::kList: {
      std::string out = "[";
      for (size_t i = 0; i < list().size(); ++i) {
        if (i) out += ", ";
        out += list().Get(i).DebugString();
      }
      return out + "]";
    }
    case Kind::kMap: {
      std::string out = "{";
      for (size_t i = 0; i < map().size(); ++i) {
        if (i) out += ", ";
        out += map().KeyAt(i).DebugString() + ": " + map().ValueAt(i).DebugString();
      }
      return out + "}";
    }
    case Kind::kType:
      return type_name();
    case Kind::kOptional:
      return optional_value() ? "optional(" + optional_value()->DebugString() + ")"
                              : "optional.none()";
    case Kind::kOpaque:
      return opaque().DebugString();
    case Kind::kError:
      return "error: " + error_message();
  }
  return "?";
}

namespace {

// Equality of a key against a map key; numeric keys compare across int/uint/double.
bool KeyEquals(const Value& a, const Value& b) { return ValueEquals(a, b); }

// Numeric comparison across kinds. Returns -1/0/1, or nullopt for NaN.
std::optional<int> CompareNumbers(const Value& a, const Value& b) {
  auto cmp = [](auto x, auto y) -> int { return x < y ? -1 : (x > y ? 1 : 0); };
  switch (a.kind()) {
    case Kind::kInt:
      switch (b.kind()) {
        case Kind::kInt:
          return cmp(a.int_value(), b.int_value());
        case Kind::kUint:
          if (a.int_value() < 0) return -1;
          return cmp(static_cast<uint64_t>(a.int_value()), b.uint_value());
        case Kind::kDouble: {
          double d = b.double_value();
          if (std::isnan(d)) return std::nullopt;
          if (d < -9223372036854775808.0) return 1;
          if (d >= 9223372036854775808.0) return -1;
          double t = std::trunc(d);
          int c = cmp(a.int_value(), static_cast<int64_t>(t));
          if (c != 0) return c;
          return cmp(0.0, d - t);
        }
        default:
          return std::nullopt;
      }
    case Kind::kUint:
      switch (b.kind()) {
        case Kind::kUint:
          return cmp(a.uint_value(), b.uint_value());
        case Kind::kInt: {
          auto r = CompareNumbers(b, a);
          if (!r) return r;
          return -*r;
        }
        case Kind::kDouble: {
          double d = b.double_value();
          if (std::isnan(d)) return std::nullopt;
          if (d < 0) return 1;
          if (d >= 18446744073709551616.0) return -1;
          double t = std::trunc(d);
          int c = cmp(a.uint_value(), static_cast<uint64_t>(t));
          if (c != 0) return c;
          return cmp(0.0, d - t);
        }
        default:
          return std::nullopt;
      }
    case Kind::kDouble:
      switch (b.kind()) {
        case Kind::kDouble: {
          double x = a.double_value(), y = b.double_value();
          if (std::isnan(x) || std::isnan(y)) return std::nullopt;
          return cmp(x, y);
        }
        case Kind::kInt:
        case Kind::kUint: {
          auto r = CompareNumbers(b, a);
          if (!r) return r;
          return -*r;
        }
        default:
          return std::nullopt;
      }
    default:
      return std::nullopt;
  }
}

}  // namespace

Equality ValueEquality(const Value& a, const Value& b) {
  auto of = [](bool v) { return v ? Equality::kTrue : Equality::kFalse; };
  if (a.kind() == Kind::kNull || b.kind() == Kind::kNull) return of(a.kind() == b.kind());
  if (a.kind() == Kind::kOpaque) {
    if (b.kind() != Kind::kOpaque) return Equality::kError;
    std::optional<bool> r = a.opaque().Equals(b.opaque());
    return r ? of(*r) : Equality::kError;
  }
  if (a.IsNumber() && b.IsNumber()) {
    auto c = CompareNumbers(a, b);
    return of(c.has_value() && *c == 0);
  }
  if (a.kind() != b.kind()) return Equality::kFalse;
  switch (a.kind()) {
    case Kind::kBool:
      return of(a.bool_value() == b.bool_value());
    case Kind::kString:
    case Kind::kBytes:
      return of(a.str() == b.str());
    case Kind::kType:
      return of(a.type_name() == b.type_name());
    case Kind::kList: {
      const ListValue& x = a.list();
      const ListValue& y = b.list();
      if (x.size() != y.size()) return Equality::kFalse;
      for (size_t i = 0; i < x.size(); ++i) {
        if (ValueEquality(x.Get(i), y.Get(i)) == Equality::kFalse) return Equality::kFalse;
      }
      return Equality::kTrue;
    }
    case Kind::kMap: {
      const MapValue& x = a.map();
      const MapValue& y = b.map();
      if (x.size() != y.size()) return Equality::kFalse;
      for (size_t i = 0; i < x.size(); ++i) {
        if (!y.Contains(x.KeyAt(i))) return Equality::kFalse;
        const Value* other = y.Find(x.KeyAt(i));
        if (other == nullptr || ValueEquality(x.ValueAt(i), *other) == Equality::kFalse) {
          return Equality::kFalse;
        }
      }
      return Equality::kTrue;
    }
    case Kind::kOptional: {
      const Value* x = a.optional_value();
      const Value* y = b.optional_value();
      if (!x || !y) return of(x == y);
      return ValueEquality(*x, *y);
    }
    default:
      return Equality::kFalse;
  }
}

std::optional<int> ValueCompare(const Value& a, const Value& b, bool* unordered) {
  if (unordered) *unordered = false;
  if (a.IsNumber() && b.IsNumber()) {
    auto c = CompareNumbers(a, b);
    if (!c && unordered) *unordered = true;
    return c;
  }
  if (a.kind() != b.kind()) return std::nullopt;
  switch (a.kind()) {
    case Kind::kOpaque:
      return a.opaque().Compare(b.opaque());
    case Kind::kBool:
      return static_cast<int>(a.bool_value()) - static_cast<int>(b.bool_value());
    case Kind::kString:
    case Kind::kBytes: {
      int c = a.str().compare(b.str());
      return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    default:
      return std::nullopt;
  }
}

const Value* MapValue::Find(const Value& key) const { return FindLinear(key); }

bool MapValue::Contains(const Value& key) const { return FindLinear(key) != nullptr; }

const Value* MapValue::FindLinear(const Value& key) const {
  for (size_t i = 0; i < size(); ++i) {
    if (KeyEquals(KeyAt(i), key)) return &ValueAt(i);
  }
  return nullptr;
}

MapValueImpl::MapValueImpl(std::vector<std::pair<Value, Value>> entries)
    : entries_(std::move(entries)) {}

const Value* MapValueImpl::Find(const Value& key) const {
  if (key.kind() == Kind::kString) {
    for (const auto& [k, v] : entries_) {
      if (k.kind() == Kind::kString && k.str() == key.str()) return &v;
    }
    return nullptr;
  }
  return FindLinear(key);
}

int64_t CodePointCount(std::string_view s) {
  int64_t n = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) != 0x80) ++n;
  }
  return n;
}

std::string FormatDouble(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "+Inf" : "-Inf";
  if (d == 0) return std::signbit(d) ? "-0" : "0";
  // Shortest round-trip digits in scientific form, then lay them out as Go's %g does with
  // shortest precision: exponent form when exp < -4 || exp >= 6.
  std::array<char, 64> buf{};
  auto res = std::to_chars(buf.data(), buf.data() + buf.size(), d, std::chars_format::scientific);
  std::string sci(buf.data(), res.ptr);
  bool neg = sci[0] == '-';
  if (neg) sci.erase(0, 1);
  size_t epos = sci.find('e');
  std::string mant = sci.substr(0, epos);
  int exp = std::stoi(sci.substr(epos + 1));
  std::string digits;
  for (char c : mant) {
    if (c != '.') digits.push_back(c);
  }
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  std::string out = neg ? "-" : "";
  if (exp < -4 || exp >= 6) {
    out += digits[0];
    if (digits.size() > 1) {
      out += '.';
      out += digits.substr(1);
    }
    out += 'e';
    out += exp < 0 ? '-' : '+';
    int ae = exp < 0 ? -exp : exp;
    if (ae < 10) out += '0';
    out += std::to_string(ae);
    return out;
  }
  if (exp < 0) {
    out += "0.";
    out += std::string(static_cast<size_t>(-exp - 1), '0');
    out += digits;
    return out;
  }
  size_t int_len = static_cast<size_t>(exp) + 1;
  if (digits.size() <= int_len) {
    out += digits;
    out += std::string(int_len - digits.size(), '0');
  } else {
    out += digits.substr(0, int_len);
    out += '.';
    out += digits.substr(int_len);
  }
  return out;
}

Value NoSuchOverload(std::string_view function) {
  return Value::Error("no such overload: " + std::string(function));
}

Value NoSuchKey(const Value& key) {
  if (key.kind() == Kind::kString) return Value::Error("no such key: " + key.str());
  return Value::Error("no such key: " + key.DebugString());
}

}  // namespace draco::cel
