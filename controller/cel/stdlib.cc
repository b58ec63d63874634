#include "controller/cel/stdlib.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "controller/cel/format.h"
#include "controller/cel/regex.h"
#include "controller/cel/time_lib.h"
#include "controller/cel/unicode.h"

namespace draco::cel {

bool ValidMapKey(const Value& k);

namespace {

using T = Type;
const Type kA = Type::Param("A");
const Type kB = Type::Param("B");

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
      for (size_t i = 0; i < v.map().size(); ++i)
        c += Traversal(v.map().KeyAt(i)) + Traversal(v.map().ValueAt(i));
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

// ---- arithmetic -------------------------------------------------------------------------------

Value IntOverflow() { return Value::Error("integer overflow"); }
Value UintOverflow() { return Value::Error("unsigned integer overflow"); }

Value AddInt(const Value* a, EvalContext&) {
  int64_t r;
  if (__builtin_add_overflow(a[0].int_value(), a[1].int_value(), &r)) return IntOverflow();
  return Value::Int(r);
}
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
Value AddUint(const Value* a, EvalContext&) {
  uint64_t r;
  if (__builtin_add_overflow(a[0].uint_value(), a[1].uint_value(), &r)) return UintOverflow();
  return Value::Uint(r);
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
Value AddDouble(const Value* a, EvalContext&) {
  return Value::Double(a[0].double_value() + a[1].double_value());
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
  long long v = std::strtoll(s.c_str(), nullptr, 10);
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
  if (!(d >= 0 && d < 18446744073709551615.0) || std::isnan(d))
    return Value::Error("unsigned integer overflow");
  return Value::Uint(static_cast<uint64_t>(d));
}
Value UintFromString(const Value* a, EvalContext&) {
  const std::string& s = a[0].str();
  if (s.empty() || s[0] == '-' || s[0] == '+') return Value::Error("cannot convert string to uint");
  for (char c : s) {
    if (c < '0' || c > '9') return Value::Error("cannot convert string to uint");
  }
  errno = 0;
  unsigned long long v = std::strtoull(s.c_str(), nullptr, 10);
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
  if (!IsValidUtf8(a[0].str()))
    return Value::Error("invalid UTF-8 in bytes, cannot convert to string");
  return Value::String(a[0].str());
}
Value BytesFromString(const Value* a, EvalContext&) { return Value::Bytes(a[0].str()); }
Value BoolFromString(const Value* a, EvalContext&) {
  const std::string& s = a[0].str();
  if (s == "1" || s == "t" || s == "T" || s == "TRUE" || s == "true" || s == "True")
    return Value::Bool(true);
  if (s == "0" || s == "f" || s == "F" || s == "FALSE" || s == "false" || s == "False")
    return Value::Bool(false);
  return Value::Error("type conversion error from 'string' to 'bool'");
}
Value TypeOfValue(const Value* a, EvalContext&) { return Value::Type(a[0].TypeName()); }

// ---- strings ----------------------------------------------------------------------------------

Value Contains(const Value* a, EvalContext&) {
  return Value::Bool(a[0].str().find(a[1].str()) != std::string::npos);
}
Value StartsWith(const Value* a, EvalContext&) {
  return Value::Bool(a[0].str().rfind(a[1].str(), 0) == 0);
}
Value EndsWith(const Value* a, EvalContext&) {
  const std::string &s = a[0].str(), &x = a[1].str();
  return Value::Bool(s.size() >= x.size() && s.compare(s.size() - x.size(), x.size(), x) == 0);
}
Value Matches(const Value* a, EvalContext&) {
  auto re = CompileRegex(a[1].str());
  if (!re) return Value::Error("invalid regular expression: " + a[1].str());
  return Value::Bool(RE2::PartialMatch(a[0].str(), *re));
}
Value Find(const Value* a, EvalContext&) {
  auto re = CompileRegex(a[1].str());
  if (!re) return Value::Error("invalid regular expression: " + a[1].str());
  return RegexFind(*re, a[0].str());
}
Value FindAll(const Value* a, EvalContext&) {
  auto re = CompileRegex(a[1].str());
  if (!re) return Value::Error("invalid regular expression: " + a[1].str());
  return RegexFindAll(*re, a[0].str(), -1);
}
Value FindAllN(const Value* a, EvalContext&) {
  auto re = CompileRegex(a[1].str());
  if (!re) return Value::Error("invalid regular expression: " + a[1].str());
  return RegexFindAll(*re, a[0].str(), a[2].int_value());
}

std::string Slice(const std::vector<uint32_t>& cps, size_t from, size_t to) {
  std::string out;
  for (size_t i = from; i < to; ++i) AppendUtf8(out, cps[i]);
  return out;
}

Value CharAt(const Value* a, EvalContext&) {
  auto cps = DecodeUtf8(a[0].str());
  int64_t i = a[1].int_value();
  if (i < 0 || static_cast<size_t>(i) > cps.size())
    return Value::Error("index out of range: " + std::to_string(i));
  if (static_cast<size_t>(i) == cps.size()) return Value::String("");
  return Value::String(Slice(cps, static_cast<size_t>(i), static_cast<size_t>(i) + 1));
}

int64_t IndexOfFrom(const std::vector<uint32_t>& s, const std::vector<uint32_t>& sub, size_t from) {
  if (sub.size() > s.size()) return -1;
  for (size_t i = from; i + sub.size() <= s.size(); ++i) {
    if (std::equal(sub.begin(), sub.end(), s.begin() + static_cast<std::ptrdiff_t>(i)))
      return static_cast<int64_t>(i);
  }
  return -1;
}
Value IndexOf(const Value* a, EvalContext&) {
  if (a[1].str().empty()) return Value::Int(0);
  return Value::Int(IndexOfFrom(DecodeUtf8(a[0].str()), DecodeUtf8(a[1].str()), 0));
}
Value IndexOfOffset(const Value* a, EvalContext&) {
  auto s = DecodeUtf8(a[0].str());
  int64_t off = a[2].int_value();
  if (off < 0) return Value::Error("index out of range: " + std::to_string(off));
  if (a[1].str().empty()) return Value::Int(std::min<int64_t>(off, static_cast<int64_t>(s.size())));
  if (static_cast<size_t>(off) >= s.size()) return Value::Int(-1);
  return Value::Int(IndexOfFrom(s, DecodeUtf8(a[1].str()), static_cast<size_t>(off)));
}
int64_t LastIndexUpTo(const std::vector<uint32_t>& s, const std::vector<uint32_t>& sub,
                      int64_t from) {
  if (sub.size() > s.size()) return -1;
  int64_t start = std::min<int64_t>(from, static_cast<int64_t>(s.size() - sub.size()));
  for (int64_t i = start; i >= 0; --i) {
    if (std::equal(sub.begin(), sub.end(), s.begin() + i)) return i;
  }
  return -1;
}
Value LastIndexOf(const Value* a, EvalContext&) {
  auto s = DecodeUtf8(a[0].str());
  if (a[1].str().empty()) return Value::Int(static_cast<int64_t>(s.size()));
  return Value::Int(LastIndexUpTo(s, DecodeUtf8(a[1].str()), static_cast<int64_t>(s.size())));
}
Value LastIndexOfOffset(const Value* a, EvalContext&) {
  auto s = DecodeUtf8(a[0].str());
  int64_t off = a[2].int_value();
  if (off < 0) return Value::Error("index out of range: " + std::to_string(off));
  if (a[1].str().empty()) return Value::Int(std::min<int64_t>(off, static_cast<int64_t>(s.size())));
  if (static_cast<size_t>(off) >= s.size()) return Value::Int(-1);
  return Value::Int(LastIndexUpTo(s, DecodeUtf8(a[1].str()), off));
}
Value LowerAscii(const Value* a, EvalContext&) {
  std::string s = a[0].str();
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return Value::String(std::move(s));
}
Value UpperAscii(const Value* a, EvalContext&) {
  std::string s = a[0].str();
  for (char& c : s) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return Value::String(std::move(s));
}
std::string ReplaceN(const std::string& s, const std::string& from, const std::string& to,
                     int64_t n) {
  if (n == 0 || from == to) return s;
  std::string out;
  if (from.empty()) {
    // Go: inserts `to` before each code point and at the end, up to n times.
    auto offs = CodePointOffsets(s);
    int64_t done = 0;
    for (size_t i = 0; i + 1 < offs.size(); ++i) {
      if (n < 0 || done < n) {
        out += to;
        ++done;
      }
      out += s.substr(offs[i], offs[i + 1] - offs[i]);
    }
    if (n < 0 || done < n) out += to;
    return out;
  }
  size_t pos = 0;
  int64_t done = 0;
  while (n < 0 || done < n) {
    size_t f = s.find(from, pos);
    if (f == std::string::npos) break;
    out += s.substr(pos, f - pos) + to;
    pos = f + from.size();
    ++done;
  }
  out += s.substr(pos);
  return out;
}
Value Replace(const Value* a, EvalContext&) {
  return Value::String(ReplaceN(a[0].str(), a[1].str(), a[2].str(), -1));
}
Value ReplaceNFn(const Value* a, EvalContext&) {
  return Value::String(ReplaceN(a[0].str(), a[1].str(), a[2].str(), a[3].int_value()));
}
Value SplitN(const std::string& s, const std::string& sep, int64_t n) {
  std::vector<Value> out;
  if (n == 0) return Value::List(std::move(out));
  if (sep.empty()) {
    auto offs = CodePointOffsets(s);
    size_t count = offs.size() - 1;
    for (size_t i = 0; i < count; ++i) {
      if (n > 0 && static_cast<int64_t>(out.size()) == n - 1) {
        out.push_back(Value::String(s.substr(offs[i])));
        return Value::List(std::move(out));
      }
      out.push_back(Value::String(s.substr(offs[i], offs[i + 1] - offs[i])));
    }
    return Value::List(std::move(out));
  }
  size_t pos = 0;
  while (n < 0 || static_cast<int64_t>(out.size()) < n - 1) {
    size_t f = s.find(sep, pos);
    if (f == std::string::npos) break;
    out.push_back(Value::String(s.substr(pos, f - pos)));
    pos = f + sep.size();
  }
  out.push_back(Value::String(s.substr(pos)));
  return Value::List(std::move(out));
}
Value Split(const Value* a, EvalContext&) { return SplitN(a[0].str(), a[1].str(), -1); }
Value SplitNFn(const Value* a, EvalContext&) {
  return SplitN(a[0].str(), a[1].str(), a[2].int_value());
}
Value Substring(const Value* a, EvalContext&) {
  auto cps = DecodeUtf8(a[0].str());
  int64_t start = a[1].int_value();
  if (start < 0 || static_cast<size_t>(start) > cps.size())
    return Value::Error("index out of range: " + std::to_string(start));
  return Value::String(Slice(cps, static_cast<size_t>(start), cps.size()));
}
Value Substring2(const Value* a, EvalContext&) {
  auto cps = DecodeUtf8(a[0].str());
  int64_t start = a[1].int_value(), end = a[2].int_value();
  if (start < 0 || static_cast<size_t>(start) > cps.size())
    return Value::Error("index out of range: " + std::to_string(start));
  if (end < 0 || static_cast<size_t>(end) > cps.size())
    return Value::Error("index out of range: " + std::to_string(end));
  if (start > end)
    return Value::Error("invalid substring range. start: " + std::to_string(start) +
                        ", end: " + std::to_string(end));
  return Value::String(Slice(cps, static_cast<size_t>(start), static_cast<size_t>(end)));
}
bool IsUnicodeSpace(uint32_t c) {
  return c == ' ' || (c >= 0x09 && c <= 0x0D) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
         c == 0x3000;
}
Value Trim(const Value* a, EvalContext&) {
  auto cps = DecodeUtf8(a[0].str());
  size_t b = 0, e = cps.size();
  while (b < e && IsUnicodeSpace(cps[b])) ++b;
  while (e > b && IsUnicodeSpace(cps[e - 1])) --e;
  return Value::String(Slice(cps, b, e));
}
Value JoinWith(const Value& list, const std::string& sep) {
  std::string out;
  const auto& elems = list.list().elems();
  for (size_t i = 0; i < elems.size(); ++i) {
    if (elems[i].kind() != Kind::kString) return NoSuchOverload("join");
    if (i) out += sep;
    out += elems[i].str();
  }
  return Value::String(std::move(out));
}
Value Join(const Value* a, EvalContext&) { return JoinWith(a[0], ""); }
Value JoinSep(const Value* a, EvalContext&) { return JoinWith(a[0], a[1].str()); }
Value Quote(const Value* a, EvalContext&) {
  std::string out = "\"";
  for (uint32_t c : DecodeUtf8(a[0].str())) {
    switch (c) {
      case '\a':
        out += "\\a";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\v':
        out += "\\v";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      default:
        AppendUtf8(out, c);
    }
  }
  return Value::String(out + "\"");
}

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
    Value args[2] = {acc, v};
    if (acc.kind() != v.kind()) return NoSuchOverload("sum");
    switch (v.kind()) {
      case Kind::kInt:
        acc = AddInt(args, ctx);
        break;
      case Kind::kUint:
        acc = AddUint(args, ctx);
        break;
      case Kind::kDouble:
        acc = AddDouble(args, ctx);
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
  if (e.empty())
    return Value::Error(std::string(kMax ? "max" : "min") + "(list) argument must not be empty");
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
  int64_t n = static_cast<int64_t>(a[0].list().size());
  if (s < 0 || e < 0)
    return Value::Error("cannot slice(" + std::to_string(s) + ", " + std::to_string(e) +
                        "), negative indexes not supported");
  if (s > e)
    return Value::Error("cannot slice(" + std::to_string(s) + ", " + std::to_string(e) +
                        "), start index must be less than or equal to end index");
  if (e > n)
    return Value::Error("cannot slice(" + std::to_string(s) + ", " + std::to_string(e) +
                        "), list is length " + std::to_string(n));
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
Value StringFormat(const Value* a, EvalContext&) { return FormatStringValue(a[0].str(), a[1]); }
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
  Value rev[2] = {a[1], a[0]};
  return SetsContains(rev, ctx);
}
Value SetsIntersects(const Value* a, EvalContext&) {
  for (const Value& v : a[1].list().elems()) {
    if (ListHas(a[0], v)) return Value::Bool(true);
  }
  return Value::Bool(false);
}

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
  if (a[0].map().Contains(a[1]))
    return Value::Error("insert failed: key " + a[1].DebugString() + " already exists");
  if (!ValidMapKey(a[1])) return Value::Error("unsupported key type");
  std::vector<std::pair<Value, Value>> entries;
  for (size_t i = 0; i < a[0].map().size(); ++i)
    entries.emplace_back(a[0].map().KeyAt(i), a[0].map().ValueAt(i));
  entries.emplace_back(a[1], a[2]);
  return Value::Map(std::make_shared<const MapValueImpl>(std::move(entries)));
}
Value MapInsertMap(const Value* a, EvalContext& ctx) {
  Value cur = a[0];
  for (size_t i = 0; i < a[1].map().size(); ++i) {
    Value args[3] = {cur, a[1].map().KeyAt(i), a[1].map().ValueAt(i)};
    cur = MapInsert(args, ctx);
    if (cur.IsError()) return cur;
  }
  return cur;
}

// ---- registration -----------------------------------------------------------------------------

void Add(Env& env, const std::string& fn, const std::string& id, bool member,
         std::vector<Type> args, Type result, FunctionImpl impl, CostFunction cost = nullptr) {
  Overload o;
  o.id = id;
  o.member = member;
  o.args = std::move(args);
  o.result = std::move(result);
  o.impl = impl;
  o.cost = cost;
  env.AddOverload(fn, std::move(o));
}

}  // namespace

void AddStandardLibrary(Env& env) {
  AddTimeLibrary(env);
  const T I = T::Int(), U = T::Uint(), D = T::Double(), S = T::String(), By = T::Bytes(),
          Bo = T::Bool(), Dy = T::Dyn();
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

  // Strings (standard).
  Add(env, "contains", "contains_string", true, {S, S}, Bo, Contains, CostContains);
  Add(env, "startsWith", "starts_with_string", true, {S, S}, Bo, StartsWith, CostArg1Traversal);
  Add(env, "endsWith", "ends_with_string", true, {S, S}, Bo, EndsWith, CostArg1Traversal);
  Add(env, "matches", "matches_string", true, {S, S}, Bo, Matches, CostMatches);
  Add(env, "matches", "matches", false, {S, S}, Bo, Matches, CostMatches);

  // ext.Strings v2 (costs from the Kubernetes estimator where it names the function).
  Add(env, "charAt", "string_char_at_int", true, {S, I}, S, CharAt);
  Add(env, "indexOf", "string_index_of_string", true, {S, S}, I, IndexOf, CostTraversal0);
  Add(env, "indexOf", "string_index_of_string_int", true, {S, S, I}, I, IndexOfOffset,
      CostTraversal0);
  Add(env, "lastIndexOf", "string_last_index_of_string", true, {S, S}, I, LastIndexOf,
      CostTraversal0);
  Add(env, "lastIndexOf", "string_last_index_of_string_int", true, {S, S, I}, I, LastIndexOfOffset,
      CostTraversal0);
  Add(env, "lowerAscii", "string_lower_ascii", true, {S}, S, LowerAscii, CostArg0Traversal);
  Add(env, "upperAscii", "string_upper_ascii", true, {S}, S, UpperAscii, CostArg0Traversal);
  Add(env, "replace", "string_replace_string_string", true, {S, S, S}, S, Replace,
      CostArg0Traversal2);
  Add(env, "replace", "string_replace_string_string_int", true, {S, S, S, I}, S, ReplaceNFn,
      CostArg0Traversal2);
  Add(env, "split", "string_split_string", true, {S, S}, T::List(S), Split, CostArg0Traversal2);
  Add(env, "split", "string_split_string_int", true, {S, S, I}, T::List(S), SplitNFn,
      CostArg0Traversal2);
  Add(env, "substring", "string_substring_int", true, {S, I}, S, Substring, CostArg0Traversal);
  Add(env, "substring", "string_substring_int_int", true, {S, I, I}, S, Substring2,
      CostArg0Traversal);
  Add(env, "trim", "string_trim", true, {S}, S, Trim, CostArg0Traversal);
  Add(env, "join", "list_join", true, {T::List(S)}, S, Join, CostJoin);
  Add(env, "join", "list_join_string", true, {T::List(S), S}, S, JoinSep, CostJoin);
  Add(env, "strings.quote", "strings_quote", false, {S}, S, Quote, CostArg0Traversal);
  Add(env, "format", "string_format", true, {S, T::List(Dy)}, S, StringFormat, CostArg0Traversal);

  // Kubernetes regex library.
  Add(env, "find", "string_find_string", true, {S, S}, S, Find, CostMatches);
  Add(env, "findAll", "string_find_all_string", true, {S, S}, T::List(S), FindAll, CostMatches);
  Add(env, "findAll", "string_find_all_string_int", true, {S, S, I}, T::List(S), FindAllN,
      CostMatches);

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

bool ValidMapKey(const Value& k) {
  return k.kind() == Kind::kString || k.kind() == Kind::kInt || k.kind() == Kind::kUint ||
         k.kind() == Kind::kBool;
}

}  // namespace draco::cel
