// The Kubernetes URL library: Go net/url request-URI parsing and the url() functions.
#include <cctype>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "controller/celenv/net_lib_internal.h"

namespace draco::celenv {
namespace {

using cel::EvalContext;
using cel::Type;
using cel::Value;

constexpr const char* kURLType = "kubernetes.URL";

// ---- URLs (Go net/url) ------------------------------------------------------------------------

struct Url {
  std::string scheme, opaque, host, path, raw_path, raw_query;
  bool has_user = false;
};

bool IsHex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }
int HexVal(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : std::tolower(c) - 'a' + 10;
}

// url.unescape for paths (encodePath) and query components (plus -> space when `query`).
std::optional<std::string> Unescape(const std::string& s, bool query) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%') {
      if (i + 2 >= s.size() + 0 && i + 2 > s.size() - 1) {
        if (i + 2 >= s.size()) return std::nullopt;
      }
      if (!IsHex(s[i + 1]) || !IsHex(s[i + 2])) return std::nullopt;
      out.push_back(static_cast<char>(HexVal(s[i + 1]) * 16 + HexVal(s[i + 2])));
      i += 2;
    } else if (s[i] == '+' && query) {
      out.push_back(' ');
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

bool ValidOptionalPort(const std::string& port) {
  if (port.empty()) return true;
  if (port[0] != ':') return false;
  for (size_t i = 1; i < port.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(port[i]))) return false;
  }
  return true;
}

// url.ParseRequestURI followed by url.Parse (they agree on everything kept here).
std::optional<Url> ParseRequestURI(const std::string& raw, std::string* err) {
  for (unsigned char c : raw) {
    if (c < 0x20 || c == 0x7f) {
      *err = "parse \"" + raw + "\": net/url: invalid control character in URL";
      return std::nullopt;
    }
  }
  if (raw.empty()) {
    *err = "parse \"\": empty url";
    return std::nullopt;
  }
  Url u;
  if (raw == "*") {
    u.path = "*";
    return u;
  }
  std::string rest = raw;
  // Scheme.
  for (size_t i = 0; i < raw.size(); ++i) {
    char c = raw[i];
    if (std::isalpha(static_cast<unsigned char>(c))) continue;
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.') {
      if (i == 0) break;
      continue;
    }
    if (c == ':') {
      if (i == 0) {
        *err = "parse \"" + raw + "\": missing protocol scheme";
        return std::nullopt;
      }
      u.scheme = raw.substr(0, i);
      for (char& ch : u.scheme) {
        ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      }
      rest = raw.substr(i + 1);
    }
    break;
  }
  size_t q = rest.find('?');
  if (!rest.empty() && rest.back() == '?' && q == rest.size() - 1) {
    rest.pop_back();
  } else if (q != std::string::npos) {
    u.raw_query = rest.substr(q + 1);
    rest = rest.substr(0, q);
  }
  if (rest.empty() || rest[0] != '/') {
    if (!u.scheme.empty()) {
      u.opaque = rest;
      return u;
    }
    *err = "parse \"" + raw + "\": invalid URI for request";
    return std::nullopt;
  }
  if (!u.scheme.empty() && rest.rfind("//", 0) == 0) {
    std::string authority = rest.substr(2);
    size_t slash = authority.find('/');
    rest = slash == std::string::npos ? "" : authority.substr(slash);
    if (slash != std::string::npos) authority = authority.substr(0, slash);
    size_t at = authority.rfind('@');
    std::string host = authority;
    if (at != std::string::npos) {
      u.has_user = true;
      host = authority.substr(at + 1);
    }
    if (!host.empty() && host[0] == '[') {
      size_t close = host.find(']');
      if (close == std::string::npos) {
        *err = "parse \"" + raw + "\": missing ']' in host";
        return std::nullopt;
      }
      if (!ValidOptionalPort(host.substr(close + 1))) {
        *err = "parse \"" + raw + "\": invalid port \"" + host.substr(close + 1) + "\" after host";
        return std::nullopt;
      }
    } else {
      size_t colon = host.rfind(':');
      if (colon != std::string::npos && !ValidOptionalPort(host.substr(colon))) {
        *err = "parse \"" + raw + "\": invalid port \"" + host.substr(colon) + "\" after host";
        return std::nullopt;
      }
    }
    auto h = Unescape(host, false);
    if (!h) {
      *err = "parse \"" + raw + "\": invalid URL escape";
      return std::nullopt;
    }
    u.host = *h;
  }
  auto p = Unescape(rest, false);
  if (!p) {
    *err = "parse \"" + raw + "\": invalid URL escape";
    return std::nullopt;
  }
  u.path = *p;
  u.raw_path = rest;
  return u;
}

class URLValue final : public cel::OpaqueValue {
 public:
  explicit URLValue(Url u, std::string raw) : u_(std::move(u)), raw_(std::move(raw)) {}
  std::string_view TypeName() const override { return kURLType; }
  std::optional<bool> Equals(const cel::OpaqueValue& o) const override {
    auto* other = dynamic_cast<const URLValue*>(&o);
    if (other == nullptr) return std::nullopt;
    return raw_ == other->raw_;
  }
  std::string DebugString() const override { return "url(" + raw_ + ")"; }
  const Url& url() const { return u_; }

 private:
  Url u_;
  std::string raw_;
};

const Url& AsURL(const Value& v) { return static_cast<const URLValue&>(v.opaque()).url(); }

Value URLFn(const Value* a, EvalContext&) {
  std::string err;
  auto u = ParseRequestURI(a[0].str(), &err);
  if (!u) return Value::Error("URL parse error during conversion from string: " + err);
  return Value::Opaque(std::make_shared<const URLValue>(*u, a[0].str()));
}
Value IsURLFn(const Value* a, EvalContext&) {
  std::string err;
  return Value::Bool(ParseRequestURI(a[0].str(), &err).has_value());
}
Value URLScheme(const Value* a, EvalContext&) { return Value::String(AsURL(a[0]).scheme); }
Value URLHost(const Value* a, EvalContext&) { return Value::String(AsURL(a[0]).host); }
std::pair<std::string, std::string> SplitHostPort(const std::string& host) {
  std::string h = host, port;
  size_t colon = host.rfind(':');
  size_t close = host.rfind(']');
  if (colon != std::string::npos && (close == std::string::npos || colon > close)) {
    h = host.substr(0, colon);
    port = host.substr(colon + 1);
  }
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  return {h, port};
}
Value URLHostname(const Value* a, EvalContext&) {
  return Value::String(SplitHostPort(AsURL(a[0]).host).first);
}
Value URLPort(const Value* a, EvalContext&) {
  return Value::String(SplitHostPort(AsURL(a[0]).host).second);
}
Value URLEscapedPath(const Value* a, EvalContext&) {
  const Url& u = AsURL(a[0]);
  return Value::String(u.opaque.empty() ? u.raw_path : "");
}
Value URLQuery(const Value* a, EvalContext&) {
  std::map<std::string, std::vector<Value>> q;
  std::string rest = AsURL(a[0]).raw_query;
  std::vector<std::string> keys;
  while (!rest.empty()) {
    size_t amp = rest.find('&');
    std::string part = rest.substr(0, amp);
    rest = amp == std::string::npos ? "" : rest.substr(amp + 1);
    if (part.find(';') != std::string::npos || part.empty()) continue;
    size_t eq = part.find('=');
    auto k = Unescape(part.substr(0, eq), true);
    auto v = Unescape(eq == std::string::npos ? "" : part.substr(eq + 1), true);
    if (!k || !v) continue;
    if (!q.count(*k)) keys.push_back(*k);
    q[*k].push_back(Value::String(*v));
  }
  std::vector<std::pair<Value, Value>> entries;
  entries.reserve(keys.size());
  for (const auto& k : keys) entries.emplace_back(Value::String(k), Value::List(q[k]));
  return Value::Map(std::make_shared<const cel::MapValueImpl>(std::move(entries)));
}

}  // namespace

namespace net_internal {

void AddUrlFunctions(cel::Env& env) {
  const Type S = Type::String(), B = Type::Bool(), URL = Type::Opaque(kURLType);
  Add(env, "url", "string_to_url", false, {S}, URL, URLFn, StrCost);
  Add(env, "getScheme", "url_get_scheme", true, {URL}, S, URLScheme, UnitCost);
  Add(env, "getHost", "url_get_host", true, {URL}, S, URLHost, UnitCost);
  Add(env, "getHostname", "url_get_hostname", true, {URL}, S, URLHostname, UnitCost);
  Add(env, "getPort", "url_get_port", true, {URL}, S, URLPort, UnitCost);
  Add(env, "getEscapedPath", "url_get_escaped_path", true, {URL}, S, URLEscapedPath, UnitCost);
  Add(env, "getQuery", "url_get_query", true, {URL}, Type::Map(S, Type::List(S)), URLQuery,
      UnitCost);
  Add(env, "isURL", "is_url_string", false, {S}, B, IsURLFn);
}

}  // namespace net_internal
}  // namespace draco::celenv
