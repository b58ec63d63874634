// The standard library's string functions: standard, ext.Strings v2 and Kubernetes regex.
#include <algorithm>
#include <string>
#include <vector>

#include "controller/cel/format.h"
#include "controller/cel/regex.h"
#include "controller/cel/stdlib_internal.h"
#include "controller/cel/unicode.h"

namespace draco::cel::stdlib_internal {
namespace {

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
  if (i < 0 || static_cast<size_t>(i) > cps.size()) {
    return Value::Error("index out of range: " + std::to_string(i));
  }
  if (static_cast<size_t>(i) == cps.size()) return Value::String("");
  return Value::String(Slice(cps, static_cast<size_t>(i), static_cast<size_t>(i) + 1));
}

int64_t IndexOfFrom(const std::vector<uint32_t>& s, const std::vector<uint32_t>& sub, size_t from) {
  if (sub.size() > s.size()) return -1;
  for (size_t i = from; i + sub.size() <= s.size(); ++i) {
    if (std::equal(sub.begin(), sub.end(), s.begin() + static_cast<std::ptrdiff_t>(i))) {
      return static_cast<int64_t>(i);
    }
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
  if (start < 0 || static_cast<size_t>(start) > cps.size()) {
    return Value::Error("index out of range: " + std::to_string(start));
  }
  return Value::String(Slice(cps, static_cast<size_t>(start), cps.size()));
}
Value Substring2(const Value* a, EvalContext&) {
  auto cps = DecodeUtf8(a[0].str());
  int64_t start = a[1].int_value(), end = a[2].int_value();
  if (start < 0 || static_cast<size_t>(start) > cps.size()) {
    return Value::Error("index out of range: " + std::to_string(start));
  }
  if (end < 0 || static_cast<size_t>(end) > cps.size()) {
    return Value::Error("index out of range: " + std::to_string(end));
  }
  if (start > end) {
    return Value::Error("invalid substring range. start: " + std::to_string(start) +
                        ", end: " + std::to_string(end));
  }
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

Value StringFormat(const Value* a, EvalContext&) { return FormatStringValue(a[0].str(), a[1]); }
}  // namespace

void AddStringFunctions(Env& env) {
  const T I = T::Int(), S = T::String(), Bo = T::Bool(), Dy = T::Dyn();
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
}

}  // namespace draco::cel::stdlib_internal
