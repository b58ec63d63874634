#include "controller/cel/format.h"

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <variant>

namespace draco::cel {
namespace {

constexpr int kDefaultPrecision = 6;

std::string GoQuote(const std::string& s) {
  // Go's %q for valid UTF-8 text: escapes quotes, backslashes and control characters.
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
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
      default:
        if (c < 0x20 || c == 0x7f) {
          std::array<char, 8> buf{};
          std::snprintf(buf.data(), buf.size(), "\\x%02x", c);
          out += buf.data();
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  return out + "\"";
}

struct Err {
  std::string msg;
};

using Result = std::variant<std::string, Err>;

bool IsErr(const Result& r) { return std::holds_alternative<Err>(r); }

std::string KindTypeName(const Value& v) { return v.TypeName(); }

Result FormatAsString(const Value& v);

Result FormatDecimal(const Value& v) {
  if (v.kind() == Kind::kInt) return std::to_string(v.int_value());
  if (v.kind() == Kind::kUint) return std::to_string(v.uint_value());
  return Err{"decimal clause can only be used on integers, was given " + KindTypeName(v)};
}

std::string QuoteForCel(const Value& v, const std::string& s) {
  switch (v.kind()) {
    case Kind::kString:
      return GoQuote(s);
    case Kind::kBytes:
      return "b" + GoQuote(s);
    case Kind::kDouble: {
      double d = v.double_value();
      if (std::isinf(d) || std::isnan(d)) return GoQuote(s);
      return s;
    }
    default:
      return s;
  }
}

// clauseForType() of formatting.go, used for list and map members.
Result FormatMember(const Value& v) {
  switch (v.kind()) {
    case Kind::kInt:
    case Kind::kUint:
      return FormatDecimal(v);
    case Kind::kString:
    case Kind::kBytes:
    case Kind::kBool:
    case Kind::kNull:
    case Kind::kType:
    case Kind::kList:
    case Kind::kMap:
      return FormatAsString(v);
    case Kind::kDouble: {
      std::array<char, 512> buf{};
      std::snprintf(buf.data(), buf.size(), "%.*f", kDefaultPrecision, v.double_value());
      std::string s = buf.data();
      if (std::isnan(v.double_value())) s = "NaN";
      if (std::isinf(v.double_value())) s = v.double_value() > 0 ? "+Inf" : "-Inf";
      return s;
    }
    default:
      return Err{"no formatting function for " + KindTypeName(v)};
  }
}

Result FormatAsString(const Value& v) {
  switch (v.kind()) {
    case Kind::kList: {
      std::string out = "[";
      const auto& el = v.list().elems();
      for (size_t i = 0; i < el.size(); ++i) {
        Result r = FormatMember(el[i]);
        if (IsErr(r)) return r;
        out += QuoteForCel(el[i], std::get<std::string>(r));
        if (i + 1 < el.size()) out += ", ";
      }
      return out + "]";
    }
    case Kind::kMap: {
      std::vector<std::pair<std::string, std::string>> pairs;
      const MapValue& m = v.map();
      for (size_t i = 0; i < m.size(); ++i) {
        const Value& k = m.KeyAt(i);
        Result ks;
        if (k.kind() == Kind::kString || k.kind() == Kind::kBool) {
          ks = FormatAsString(k);
        } else if (k.kind() == Kind::kInt || k.kind() == Kind::kUint) {
          ks = FormatDecimal(k);
        } else {
          return Err{"no formatting function for map key of type " + KindTypeName(k)};
        }
        if (IsErr(ks)) return ks;
        Result vs = FormatMember(m.ValueAt(i));
        if (IsErr(vs)) return vs;
        pairs.emplace_back(QuoteForCel(k, std::get<std::string>(ks)),
                           QuoteForCel(m.ValueAt(i), std::get<std::string>(vs)));
      }
      std::stable_sort(pairs.begin(), pairs.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      std::string out = "{";
      for (size_t i = 0; i < pairs.size(); ++i) {
        out += pairs[i].first + ":" + pairs[i].second;
        if (i + 1 < pairs.size()) out += ", ";
      }
      return out + "}";
    }
    case Kind::kInt:
      return std::to_string(v.int_value());
    case Kind::kUint:
      return std::to_string(v.uint_value());
    case Kind::kDouble:
      return FormatDouble(v.double_value());
    case Kind::kBool:
      return std::string(v.bool_value() ? "true" : "false");
    case Kind::kString:
    case Kind::kBytes:
      return v.str();
    case Kind::kType:
      return v.type_name();
    case Kind::kNull:
      return std::string("null");
    default:
      return Err{
          "string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, "
          "types, durations, and timestamps, was given " +
          KindTypeName(v)};
  }
}

std::string FloatText(double d, int precision, char verb) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "+Inf" : "-Inf";
  std::string fmt = std::string("%.") + std::to_string(precision) + verb;
  int n = std::snprintf(nullptr, 0, fmt.c_str(), d);
  std::string out(static_cast<size_t>(n) + 1, '\0');
  std::snprintf(out.data(), out.size(), fmt.c_str(), d);
  out.resize(static_cast<size_t>(n));
  return out;
}

// Go's message printer for en: thousands separators in the integer part of %f.
std::string GroupThousands(const std::string& s) {
  size_t start = (s[0] == '-' || s[0] == '+') ? 1 : 0;
  size_t dot = s.find('.');
  size_t end = dot == std::string::npos ? s.size() : dot;
  if (end - start <= 3 || !std::isdigit(static_cast<unsigned char>(s[start]))) return s;
  std::string out = s.substr(0, start);
  for (size_t i = start; i < end; ++i) {
    out.push_back(s[i]);
    size_t left = end - i - 1;
    if (left > 0 && left % 3 == 0) out.push_back(',');
  }
  return out + s.substr(end);
}

std::optional<double> FloatArg(const Value& v) {
  if (v.kind() == Kind::kDouble) return v.double_value();
  if (v.kind() == Kind::kString) {
    if (v.str() == "NaN") return std::nan("");
    if (v.str() == "Infinity") return HUGE_VAL;
    if (v.str() == "-Infinity") return -HUGE_VAL;
  }
  return std::nullopt;
}

template <typename T>
std::string Radix(T v, int base, bool upper) {
  bool neg = false;
  uint64_t u;
  if constexpr (std::is_signed_v<T>) {
    neg = v < 0;
    u = neg ? static_cast<uint64_t>(0) - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  } else {
    u = v;
  }
  const char* digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  std::string out;
  do {
    out.push_back(digits[u % static_cast<uint64_t>(base)]);
    u /= static_cast<uint64_t>(base);
  } while (u != 0);
  if (neg) out.push_back('-');
  std::reverse(out.begin(), out.end());
  return out;
}

Result FormatClause(char verb, const std::optional<int>& precision, const Value& v) {
  switch (verb) {
    case 's':
      return FormatAsString(v);
    case 'd':
      return FormatDecimal(v);
    case 'f':
    case 'e': {
      auto d = FloatArg(v);
      if (!d) {
        return Err{std::string(verb == 'f' ? "fixed-point" : "scientific") +
                   " clause can only be used on doubles, was given " + KindTypeName(v)};
      }
      std::string s = FloatText(*d, precision.value_or(kDefaultPrecision), verb);
      return verb == 'f' ? GroupThousands(s) : s;
    }
    case 'b':
      if (v.kind() == Kind::kInt) return Radix(v.int_value(), 2, false);
      if (v.kind() == Kind::kUint) return Radix(v.uint_value(), 2, false);
      if (v.kind() == Kind::kBool) return std::string(v.bool_value() ? "1" : "0");
      return Err{"only integers and bools can be formatted as binary, was given " +
                 KindTypeName(v)};
    case 'o':
      if (v.kind() == Kind::kInt) return Radix(v.int_value(), 8, false);
      if (v.kind() == Kind::kUint) return Radix(v.uint_value(), 8, false);
      return Err{"octal clause can only be used on integers, was given " + KindTypeName(v)};
    case 'x':
    case 'X': {
      bool upper = verb == 'X';
      if (v.kind() == Kind::kInt) return Radix(v.int_value(), 16, upper);
      if (v.kind() == Kind::kUint) return Radix(v.uint_value(), 16, upper);
      if (v.kind() == Kind::kString || v.kind() == Kind::kBytes) {
        std::string out;
        const char* digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
        for (unsigned char c : v.str()) {
          out.push_back(digits[c >> 4]);
          out.push_back(digits[c & 15]);
        }
        return out;
      }
      return Err{"only integers, byte buffers, and strings can be formatted as hex, was given " +
                 KindTypeName(v)};
    }
  }
  return Err{"?"};
}

// Parses the clause at format[i] (just after '%'). Returns the verb and precision, and advances
// i past the clause, or an error.
std::optional<std::string> ParseClause(const std::string& f, size_t& i, char& verb,
                                       std::optional<int>& precision) {
  precision.reset();
  if (i < f.size() && f[i] == '.') {
    ++i;
    std::string digits;
    while (true) {
      if (i >= f.size()) {
        return "error while parsing precision: could not find end of precision specifier";
      }
      if (!std::isdigit(static_cast<unsigned char>(f[i]))) break;
      digits.push_back(f[i++]);
    }
    if (digits.empty()) {
      // strconv.Atoi("") fails.
      return "error while parsing precision: error while converting precision to integer: "
             "strconv.Atoi: parsing \"\": invalid syntax";
    }
    if (digits.size() > 9) return "error while parsing precision: precision too large";
    precision = std::stoi(digits);
  }
  if (i >= f.size()) return "unexpected end of string";
  char r = f[i++];
  if (std::string("sdfebxXo").find(r) == std::string::npos) {
    return std::string("unrecognized formatting clause \"") + r + "\"";
  }
  verb = r;
  return std::nullopt;
}

}  // namespace

Value FormatStringValue(const std::string& f, const Value& args) {
  const auto& el = args.list().elems();
  std::string out;
  size_t arg = 0;
  size_t i = 0;
  while (i < f.size()) {
    if (f[i] != '%') {
      out.push_back(f[i++]);
      continue;
    }
    if (i + 1 < f.size() && f[i + 1] == '%') {
      out.push_back('%');
      i += 2;
      continue;
    }
    if (arg >= el.size()) return Value::Error("index " + std::to_string(arg) + " out of range");
    if (i + 1 >= f.size()) return Value::Error("unexpected end of string");
    ++i;
    char verb = 0;
    std::optional<int> precision;
    if (auto e = ParseClause(f, i, verb, precision)) {
      return Value::Error("could not parse formatting clause: " + *e);
    }
    Result r = FormatClause(verb, precision, el[arg]);
    if (IsErr(r)) return Value::Error("error during formatting: " + std::get<Err>(r).msg);
    out += std::get<std::string>(r);
    ++arg;
  }
  return Value::String(std::move(out));
}

namespace {

bool KindOneOf(const Type& t, std::initializer_list<Type::K> ks) {
  if (t.k == Type::K::kDyn || t.k == Type::K::kParam || t.k == Type::K::kError) return true;
  return std::find(ks.begin(), ks.end(), t.k) != ks.end();
}

// verifyString: returns the offending (nested) type, or nullopt.
std::optional<Type> VerifyString(const FormatArgType& a) {
  using K = Type::K;
  if (!KindOneOf(a.type, {K::kList, K::kMap, K::kInt, K::kUint, K::kDouble, K::kBool, K::kString,
                          K::kBytes, K::kType, K::kNull})) {
    return a.type;
  }
  for (const auto& e : a.elems) {
    if (auto bad = VerifyString(e)) return bad;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::pair<std::string, int>> ValidateFormat(const std::string& f,
                                                          const std::vector<FormatArgType>& args) {
  using K = Type::K;
  size_t arg = 0, requested = 0;
  size_t i = 0;
  while (i < f.size()) {
    if (f[i] != '%') {
      ++i;
      continue;
    }
    if (i + 1 < f.size() && f[i + 1] == '%') {
      i += 2;
      continue;
    }
    ++requested;
    if (arg >= args.size()) {
      return std::make_pair("index " + std::to_string(arg) + " out of range", -1);
    }
    if (i + 1 >= f.size()) return std::make_pair(std::string("unexpected end of string"), -1);
    ++i;
    char verb = 0;
    std::optional<int> precision;
    if (auto e = ParseClause(f, i, verb, precision)) {
      return std::make_pair("could not parse formatting clause: " + *e, -1);
    }
    const Type& t = args[arg].type;
    std::string bad;
    switch (verb) {
      case 's':
        if (auto b = VerifyString(args[arg])) {
          bad =
              "string clause can only be used on strings, bools, bytes, ints, doubles, maps, "
              "lists, types, durations, and timestamps, was given " +
              b->ToString();
        }
        break;
      case 'd':
        if (!KindOneOf(t, {K::kInt, K::kUint})) {
          bad = "decimal clause can only be used on integers, was given " + t.ToString();
        }
        break;
      case 'f':
        if (!KindOneOf(t, {K::kDouble, K::kString})) {
          bad = "fixed-point clause can only be used on doubles, was given " + t.ToString();
        }
        break;
      case 'e':
        if (!KindOneOf(t, {K::kDouble, K::kString})) {
          bad = "scientific clause can only be used on doubles, was given " + t.ToString();
        }
        break;
      case 'b':
        if (!KindOneOf(t, {K::kInt, K::kUint, K::kBool})) {
          bad = "only integers and bools can be formatted as binary, was given " + t.ToString();
        }
        break;
      case 'x':
      case 'X':
        if (!KindOneOf(t, {K::kInt, K::kUint, K::kString, K::kBytes})) {
          bad = "only integers, byte buffers, and strings can be formatted as hex, was given " +
                t.ToString();
        }
        break;
      case 'o':
        if (!KindOneOf(t, {K::kInt, K::kUint})) {
          bad = "octal clause can only be used on integers, was given " + t.ToString();
        }
        break;
    }
    if (!bad.empty()) {
      return std::make_pair("error during formatting: " + bad, static_cast<int>(arg));
    }
    ++arg;
  }
  if (args.size() > requested) {
    return std::make_pair("too many arguments supplied to string.format (expected " +
                              std::to_string(requested) + ", got " + std::to_string(args.size()) +
                              ")",
                          -1);
  }
  return std::nullopt;
}

}  // namespace draco::cel
