#include "controller/celenv/net_lib.h"

#include <array>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <string>

#include "controller/celenv/net_lib_internal.h"

namespace draco::celenv {
namespace {

using cel::EvalContext;
using cel::Kind;
using cel::Type;
using cel::Value;
using net_internal::Add;
using net_internal::StrCost;
using net_internal::UnitCost;

constexpr const char* kIPType = "net.IP";
constexpr const char* kCIDRType = "net.CIDR";

// ---- addresses (Go net/netip) ---------------------------------------------------------------

struct Addr {
  bool v4 = true;
  std::array<uint8_t, 16> b{};  // v4 uses b[0..3]
  bool Is4In6() const {
    if (v4) return false;
    for (int i = 0; i < 10; ++i) {
      if (b[i] != 0) return false;
    }
    return b[10] == 0xff && b[11] == 0xff;
  }
  int Bits() const { return v4 ? 32 : 128; }
  bool operator==(const Addr& o) const { return v4 == o.v4 && b == o.b; }
};

std::optional<Addr> ParseV4(const std::string& s) {
  Addr a;
  int part = 0;
  size_t i = 0;
  while (true) {
    if (i >= s.size() || !std::isdigit(static_cast<unsigned char>(s[i]))) return std::nullopt;
    size_t start = i;
    int v = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      v = v * 10 + (s[i] - '0');
      if (v > 255) return std::nullopt;
      ++i;
    }
    if (i - start > 1 && s[start] == '0') return std::nullopt;  // leading zero
    a.b[static_cast<size_t>(part++)] = static_cast<uint8_t>(v);
    if (part == 4) break;
    if (i >= s.size() || s[i] != '.') return std::nullopt;
    ++i;
  }
  if (i != s.size()) return std::nullopt;
  return a;
}

std::optional<Addr> ParseV6(const std::string& s) {
  Addr a;
  a.v4 = false;
  int ellipsis = -1;
  size_t i = 0;
  int n = 0;  // bytes filled
  if (s.size() >= 2 && s[0] == ':' && s[1] == ':') {
    ellipsis = 0;
    i = 2;
    if (i == s.size()) return a;
  }
  while (i < s.size()) {
    size_t start = i;
    uint32_t v = 0;
    while (i < s.size() && std::isxdigit(static_cast<unsigned char>(s[i]))) {
      v = v * 16 + static_cast<uint32_t>(std::isdigit(static_cast<unsigned char>(s[i]))
                                             ? s[i] - '0'
                                             : std::tolower(s[i]) - 'a' + 10);
      ++i;
      if (i - start > 4) return std::nullopt;
    }
    if (i == start) return std::nullopt;
    if (i < s.size() && s[i] == '.') {
      // Embedded IPv4 at the end.
      if (n > 12) return std::nullopt;
      auto v4 = ParseV4(s.substr(start));
      if (!v4) return std::nullopt;
      for (int k = 0; k < 4; ++k) a.b[static_cast<size_t>(n++)] = v4->b[static_cast<size_t>(k)];
      break;  // the IPv4 part ends the address
    }
    if (n + 2 > 16) return std::nullopt;
    a.b[static_cast<size_t>(n++)] = static_cast<uint8_t>(v >> 8);
    a.b[static_cast<size_t>(n++)] = static_cast<uint8_t>(v);
    if (i == s.size()) break;
    if (s[i] != ':') return std::nullopt;
    ++i;
    if (i < s.size() && s[i] == ':') {
      if (ellipsis >= 0) return std::nullopt;
      ellipsis = n;
      ++i;
      if (i == s.size()) break;
    } else if (i == s.size()) {
      return std::nullopt;
    }
  }
  if (n < 16) {
    if (ellipsis < 0) return std::nullopt;
    int tail = n - ellipsis;
    for (int k = tail - 1; k >= 0; --k) {
      int dst = 16 - tail + k;
      int src = ellipsis + k;
      a.b[static_cast<size_t>(dst)] = a.b[static_cast<size_t>(src)];
    }
    for (int k = ellipsis; k < 16 - tail; ++k) a.b[static_cast<size_t>(k)] = 0;
  } else if (ellipsis >= 0) {
    return std::nullopt;
  }
  return a;
}

// netip.ParseAddr; `zone` receives a %zone suffix (IPv6 only).
std::optional<Addr> ParseAddr(const std::string& s, std::string* zone) {
  for (char c : s) {
    if (c == '.') return ParseV4(s);
    if (c == ':') {
      size_t pct = s.find('%');
      if (pct != std::string::npos) {
        if (pct + 1 == s.size()) return std::nullopt;
        if (zone) *zone = s.substr(pct + 1);
        return ParseV6(s.substr(0, pct));
      }
      return ParseV6(s);
    }
    if (c == '%') return std::nullopt;
  }
  return std::nullopt;
}

std::string AddrString(const Addr& a) {
  if (a.v4) {
    return std::to_string(a.b[0]) + "." + std::to_string(a.b[1]) + "." + std::to_string(a.b[2]) +
           "." + std::to_string(a.b[3]);
  }
  std::array<uint16_t, 8> w{};
  for (size_t i = 0; i < w.size(); ++i) {
    w[i] = static_cast<uint16_t>(a.b[2 * i] << 8 | a.b[2 * i + 1]);
  }
  if (a.Is4In6()) {
    return "::ffff:" + std::to_string(a.b[12]) + "." + std::to_string(a.b[13]) + "." +
           std::to_string(a.b[14]) + "." + std::to_string(a.b[15]);
  }
  int best = -1, best_len = 0;
  for (int i = 0; i < 8;) {
    if (w[i] != 0) {
      ++i;
      continue;
    }
    int j = i;
    while (j < 8 && w[j] == 0) ++j;
    if (j - i > best_len && j - i >= 2) {
      best = i;
      best_len = j - i;
    }
    i = j;
  }
  std::string out;
  std::array<char, 8> buf{};
  for (int i = 0; i < 8; ++i) {
    if (i == best) {
      out += "::";
      i += best_len - 1;
      continue;
    }
    if (!out.empty() && out.back() != ':') out += ":";
    std::snprintf(buf.data(), buf.size(), "%x", w[i]);
    out += buf.data();
  }
  return out;
}

class IPValue final : public cel::OpaqueValue {
 public:
  explicit IPValue(Addr a) : a_(a) {}
  std::string_view TypeName() const override { return kIPType; }
  std::optional<bool> Equals(const cel::OpaqueValue& o) const override {
    auto* other = dynamic_cast<const IPValue*>(&o);
    if (other == nullptr) return std::nullopt;
    return a_ == other->a_;
  }
  std::string DebugString() const override { return "ip(" + AddrString(a_) + ")"; }
  const Addr& addr() const { return a_; }

 private:
  Addr a_;
};

struct Prefix {
  Addr addr;
  int bits = 0;
  bool operator==(const Prefix& o) const { return addr == o.addr && bits == o.bits; }
};

Addr Mask(const Addr& a, int bits) {
  Addr m = a;
  int total = a.Bits() / 8;
  for (int i = 0; i < total; ++i) {
    int keep = std::max(0, std::min(8, bits - 8 * i));
    uint8_t mask = keep == 0 ? 0 : static_cast<uint8_t>(0xff << (8 - keep));
    m.b[static_cast<size_t>(i)] &= mask;
  }
  return m;
}

bool PrefixContains(const Prefix& p, const Addr& a) {
  if (p.addr.v4 != a.v4) return false;
  return Mask(a, p.bits) == Mask(p.addr, p.bits);
}

class CIDRValue final : public cel::OpaqueValue {
 public:
  explicit CIDRValue(Prefix p) : p_(p) {}
  std::string_view TypeName() const override { return kCIDRType; }
  std::optional<bool> Equals(const cel::OpaqueValue& o) const override {
    auto* other = dynamic_cast<const CIDRValue*>(&o);
    if (other == nullptr) return std::nullopt;
    return p_ == other->p_;
  }
  std::string DebugString() const override {
    return "cidr(" + AddrString(p_.addr) + "/" + std::to_string(p_.bits) + ")";
  }
  const Prefix& prefix() const { return p_; }

 private:
  Prefix p_;
};

const Addr& AsIP(const Value& v) { return static_cast<const IPValue&>(v.opaque()).addr(); }
const Prefix& AsCIDR(const Value& v) { return static_cast<const CIDRValue&>(v.opaque()).prefix(); }
Value IPVal(const Addr& a) { return Value::Opaque(std::make_shared<const IPValue>(a)); }
Value CIDRVal(const Prefix& p) { return Value::Opaque(std::make_shared<const CIDRValue>(p)); }

// k8s parseIPAddr: the error text, or the address.
std::optional<Addr> ParseIP(const std::string& s, std::string* err) {
  std::string zone;
  auto a = ParseAddr(s, &zone);
  if (!a) {
    *err = "IP Address \"" + s + "\" parse error during conversion from string: ParseAddr(\"" + s +
           "\"): unable to parse IP";
    return std::nullopt;
  }
  if (!zone.empty()) {
    *err = "IP address \"" + s + "\" with zone value is not allowed";
    return std::nullopt;
  }
  if (a->Is4In6()) {
    *err = "IPv4-mapped IPv6 address \"" + s + "\" is not allowed";
    return std::nullopt;
  }
  return a;
}

std::optional<Prefix> ParseCIDR(const std::string& s, std::string* err) {
  auto fail = [&](const std::string& why) -> std::optional<Prefix> {
    *err =
        "network address parse error during conversion from string: network address parse "
        "error during conversion from string: netip.ParsePrefix(\"" +
        s + "\"): " + why;
    return std::nullopt;
  };
  size_t slash = s.rfind('/');
  if (slash == std::string::npos) return fail("no '/'");
  std::string addr_s = s.substr(0, slash), bits_s = s.substr(slash + 1);
  std::string zone;
  auto a = ParseAddr(addr_s, &zone);
  if (!a) return fail("ParseAddr(\"" + addr_s + "\"): unable to parse IP");
  if (!zone.empty()) return fail("IPv6 zones cannot be present in a prefix");
  if (bits_s.empty() || bits_s.size() > 3) return fail("bad bits after slash: \"" + bits_s + "\"");
  for (char c : bits_s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) {
      return fail("bad bits after slash: \"" + bits_s + "\"");
    }
  }
  if (bits_s.size() > 1 && bits_s[0] == '0') {
    return fail("bad bits after slash: \"" + bits_s + "\"");
  }
  int bits = std::stoi(bits_s);
  if (bits > a->Bits()) return fail("prefix length out of range");
  if (a->Is4In6()) {
    *err =
        "network address parse error during conversion from string: IPv4-mapped IPv6 address "
        "\"" +
        s + "\" is not allowed";
    return std::nullopt;
  }
  return Prefix{*a, bits};
}

Value IPFn(const Value* a, EvalContext&) {
  std::string err;
  auto ip = ParseIP(a[0].str(), &err);
  if (!ip) return Value::Error(err);
  return IPVal(*ip);
}
Value IsIPFn(const Value* a, EvalContext&) {
  std::string err;
  return Value::Bool(ParseIP(a[0].str(), &err).has_value());
}
Value IPIsCanonical(const Value* a, EvalContext&) {
  std::string err;
  auto ip = ParseIP(a[0].str(), &err);
  if (!ip) return Value::Error(err);
  return Value::Bool(AddrString(*ip) == a[0].str());
}
Value IPToString(const Value* a, EvalContext&) { return Value::String(AddrString(AsIP(a[0]))); }
Value IPFamily(const Value* a, EvalContext&) { return Value::Int(AsIP(a[0]).v4 ? 4 : 6); }
bool IsUnspecified(const Addr& a) {
  for (int i = 0; i < (a.v4 ? 4 : 16); ++i) {
    if (a.b[static_cast<size_t>(i)] != 0) return false;
  }
  return true;
}
bool IsLoopback(const Addr& a) {
  if (a.v4) return a.b[0] == 127;
  for (int i = 0; i < 15; ++i) {
    if (a.b[static_cast<size_t>(i)] != 0) return false;
  }
  return a.b[15] == 1;
}
bool IsMulticast(const Addr& a) { return a.v4 ? (a.b[0] & 0xf0) == 0xe0 : a.b[0] == 0xff; }
bool IsLLMulticast(const Addr& a) {
  if (a.v4) return a.b[0] == 224 && a.b[1] == 0 && a.b[2] == 0;
  return a.b[0] == 0xff && (a.b[1] & 0x0f) == 0x02;
}
bool IsLLUnicast(const Addr& a) {
  if (a.v4) return a.b[0] == 169 && a.b[1] == 254;
  return a.b[0] == 0xfe && (a.b[1] & 0xc0) == 0x80;
}
bool IsGlobalUnicast(const Addr& a) {
  if (a.v4 && a.b[0] == 255 && a.b[1] == 255 && a.b[2] == 255 && a.b[3] == 255) return false;
  return !IsUnspecified(a) && !IsLoopback(a) && !IsMulticast(a) && !IsLLUnicast(a);
}
template <bool (*F)(const Addr&)>
Value IPPred(const Value* a, EvalContext&) {
  return Value::Bool(F(AsIP(a[0])));
}

Value CIDRFn(const Value* a, EvalContext&) {
  std::string err;
  auto p = ParseCIDR(a[0].str(), &err);
  if (!p) return Value::Error(err);
  return CIDRVal(*p);
}
Value IsCIDRFn(const Value* a, EvalContext&) {
  std::string err;
  return Value::Bool(ParseCIDR(a[0].str(), &err).has_value());
}
Value CIDRToString(const Value* a, EvalContext&) {
  const Prefix& p = AsCIDR(a[0]);
  return Value::String(AddrString(p.addr) + "/" + std::to_string(p.bits));
}
Value CIDRContainsIP(const Value* a, EvalContext&) {
  return Value::Bool(PrefixContains(AsCIDR(a[0]), AsIP(a[1])));
}
Value CIDRContainsIPString(const Value* a, EvalContext&) {
  std::string err;
  auto ip = ParseIP(a[1].str(), &err);
  if (!ip) return Value::Error("no such overload");
  return Value::Bool(PrefixContains(AsCIDR(a[0]), *ip));
}
bool ContainsPrefix(const Prefix& p, const Prefix& o) {
  if (p.addr.v4 != o.addr.v4) return false;
  int bits = std::min(p.bits, o.bits);
  bool overlaps = Mask(p.addr, bits) == Mask(o.addr, bits);
  return overlaps && p.bits <= o.bits;
}
Value CIDRContainsCIDR(const Value* a, EvalContext&) {
  return Value::Bool(ContainsPrefix(AsCIDR(a[0]), AsCIDR(a[1])));
}
Value CIDRContainsCIDRString(const Value* a, EvalContext&) {
  std::string err;
  auto p = ParseCIDR(a[1].str(), &err);
  if (!p) return Value::Error(err);
  return Value::Bool(ContainsPrefix(AsCIDR(a[0]), *p));
}
Value CIDRIP(const Value* a, EvalContext&) { return IPVal(AsCIDR(a[0]).addr); }
Value CIDRPrefixLength(const Value* a, EvalContext&) { return Value::Int(AsCIDR(a[0]).bits); }
Value CIDRMasked(const Value* a, EvalContext&) {
  const Prefix& p = AsCIDR(a[0]);
  return CIDRVal(Prefix{Mask(p.addr, p.bits), p.bits});
}

// ---- registration -------------------------------------------------------------------------

uint64_t StrCost2(const Value* a, size_t, const Value&) {
  return static_cast<uint64_t>(std::ceil(static_cast<double>(cel::ActualSize(a[0])) * 2 * 0.1));
}
uint64_t ContainsIPCost(const Value* a, size_t, const Value&) {
  // Kubernetes estimator: the CIDR is a unit-size value (actualSize 1).
  uint64_t cidr = cel::ActualSize(a[0]);
  auto c = static_cast<uint64_t>(std::ceil(static_cast<double>(cidr + cidr) * 0.1));
  if (a[1].kind() == Kind::kString) {
    c += static_cast<uint64_t>(std::ceil(static_cast<double>(cel::ActualSize(a[1])) * 0.1));
  }
  return c;
}
uint64_t ContainsCIDRCost(const Value* a, size_t n, const Value& r) {
  uint64_t cidr = cel::ActualSize(a[0]);
  uint64_t c =
      ContainsIPCost(a, n, r) -
      (a[1].kind() == Kind::kString
           ? static_cast<uint64_t>(std::ceil(static_cast<double>(cel::ActualSize(a[1])) * 0.1))
           : 0);
  c += static_cast<uint64_t>(std::ceil(static_cast<double>(cidr) * 0.1)) + 1;
  if (a[1].kind() == Kind::kString) {
    c += static_cast<uint64_t>(std::ceil(static_cast<double>(cel::ActualSize(a[1])) * 0.1));
  }
  return c;
}

}  // namespace

namespace net_internal {

uint64_t StrCost(const Value* a, size_t, const Value&) {
  return static_cast<uint64_t>(std::ceil(static_cast<double>(cel::ActualSize(a[0])) * 0.1));
}
uint64_t UnitCost(const Value*, size_t, const Value&) { return 1; }

void Add(cel::Env& env, const std::string& fn, const std::string& id, bool member,
         std::vector<Type> args, Type result, cel::FunctionImpl impl, cel::CostFunction cost) {
  cel::Overload o;
  o.id = id;
  o.member = member;
  o.args = std::move(args);
  o.result = std::move(result);
  o.impl = impl;
  o.cost = cost;
  env.AddOverload(fn, std::move(o));
}

}  // namespace net_internal

void AddNetLibraries(cel::Env& env) {
  const Type S = Type::String(), I = Type::Int(), B = Type::Bool();
  const Type IP = Type::Opaque(kIPType), CIDR = Type::Opaque(kCIDRType);
  Add(env, "ip", "string_to_ip", false, {S}, IP, IPFn, StrCost);
  Add(env, "family", "ip_family", true, {IP}, I, IPFamily, UnitCost);
  Add(env, "ip.isCanonical", "ip_is_canonical", false, {S}, B, IPIsCanonical, StrCost2);
  Add(env, "isUnspecified", "ip_is_unspecified", true, {IP}, B, IPPred<IsUnspecified>, UnitCost);
  Add(env, "isLoopback", "ip_is_loopback", true, {IP}, B, IPPred<IsLoopback>, UnitCost);
  Add(env, "isLinkLocalMulticast", "ip_is_link_local_multicast", true, {IP}, B,
      IPPred<IsLLMulticast>, UnitCost);
  Add(env, "isLinkLocalUnicast", "ip_is_link_local_unicast", true, {IP}, B, IPPred<IsLLUnicast>,
      UnitCost);
  Add(env, "isGlobalUnicast", "ip_is_global_unicast", true, {IP}, B, IPPred<IsGlobalUnicast>,
      UnitCost);
  Add(env, "isIP", "is_ip", false, {S}, B, IsIPFn, StrCost);
  Add(env, "string", "ip_to_string", false, {IP}, S, IPToString);

  Add(env, "cidr", "string_to_cidr", false, {S}, CIDR, CIDRFn, StrCost);
  Add(env, "containsIP", "cidr_contains_ip_string", true, {CIDR, S}, B, CIDRContainsIPString,
      ContainsIPCost);
  Add(env, "containsIP", "cidr_contains_ip_ip", true, {CIDR, IP}, B, CIDRContainsIP,
      ContainsIPCost);
  Add(env, "containsCIDR", "cidr_contains_cidr_string", true, {CIDR, S}, B, CIDRContainsCIDRString,
      ContainsCIDRCost);
  Add(env, "containsCIDR", "cidr_contains_cidr", true, {CIDR, CIDR}, B, CIDRContainsCIDR,
      ContainsCIDRCost);
  Add(env, "ip", "cidr_ip", true, {CIDR}, IP, CIDRIP, UnitCost);
  Add(env, "prefixLength", "cidr_prefix_length", true, {CIDR}, I, CIDRPrefixLength, UnitCost);
  Add(env, "masked", "cidr_masked", true, {CIDR}, CIDR, CIDRMasked, UnitCost);
  Add(env, "isCIDR", "is_cidr", false, {S}, B, IsCIDRFn, StrCost);
  Add(env, "string", "cidr_to_string", false, {CIDR}, S, CIDRToString);

  net_internal::AddUrlFunctions(env);
}

}  // namespace draco::celenv
