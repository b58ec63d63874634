#include "controller/allocator/compute_model.h"

#include <algorithm>
#include <limits>

namespace draco::alloc {
namespace {

constexpr Amount kAmountMax = (static_cast<Amount>(1) << 126);

Amount SatMul(Amount a, Amount b) {
  if (a == 0 || b == 0) return 0;
  if (a > kAmountMax / b) return kAmountMax;
  return a * b;
}

Amount Pow10(int n) {
  Amount r = 1;
  for (int i = 0; i < n; ++i) r = SatMul(r, 10);
  return r;
}

// Divides rounding away from zero (magnitudes only).
Amount DivUp(Amount a, Amount b) { return (a + b - 1) / b; }

// Exact value of a syntactically valid quantity string in nano units (magnitude rounded up, as
// ParseQuantity does).
Amount ParseNanos(std::string_view s) {
  bool negative = false;
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    negative = s[i] == '-';
    ++i;
  }
  Amount digits = 0;
  int frac_digits = 0;
  bool in_frac = false;
  bool saturated = false;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (c == '.') {
      in_frac = true;
      continue;
    }
    if (c < '0' || c > '9') break;
    if (digits > kAmountMax / 10) {
      saturated = true;
      if (!in_frac) continue;
      continue;  // drop further fractional digits (rounding handled below as saturation)
    }
    digits = digits * 10 + (c - '0');
    if (in_frac) ++frac_digits;
  }
  std::string_view suffix = s.substr(i);
  int exp10 = 0;
  int exp2 = 0;
  bool binary_si = false;
  if (suffix.empty()) {
  } else if (suffix == "n") {
    exp10 = -9;
  } else if (suffix == "u") {
    exp10 = -6;
  } else if (suffix == "m") {
    exp10 = -3;
  } else if (suffix == "k") {
    exp10 = 3;
  } else if (suffix == "M") {
    exp10 = 6;
  } else if (suffix == "G") {
    exp10 = 9;
  } else if (suffix == "T") {
    exp10 = 12;
  } else if (suffix == "P") {
    exp10 = 15;
  } else if (suffix == "E") {
    exp10 = 18;
  } else if (suffix.size() == 2 && suffix[1] == 'i') {
    binary_si = true;
    switch (suffix[0]) {
      case 'K':
        exp2 = 10;
        break;
      case 'M':
        exp2 = 20;
        break;
      case 'G':
        exp2 = 30;
        break;
      case 'T':
        exp2 = 40;
        break;
      case 'P':
        exp2 = 50;
        break;
      case 'E':
        exp2 = 60;
        break;
      default:
        break;
    }
  } else if (suffix[0] == 'e' || suffix[0] == 'E') {
    exp10 = std::atoi(std::string(suffix.substr(1)).c_str());
  }
  Amount value;
  if (saturated) {
    value = kAmountMax;
  } else if (binary_si) {
    Amount scaled = SatMul(SatMul(digits, static_cast<Amount>(1) << exp2), Pow10(9));
    value = DivUp(scaled, Pow10(frac_digits));
    // BinarySI values are capped at 2^63-1 (in units, not nanos).
    Amount cap = SatMul(static_cast<Amount>(std::numeric_limits<int64_t>::max()), Pow10(9));
    value = std::min(value, cap);
  } else {
    int e = exp10 + 9 - frac_digits;
    if (e >= 0) {
      value = e > 40 ? (digits == 0 ? 0 : kAmountMax) : SatMul(digits, Pow10(e));
    } else {
      value = -e > 40 ? (digits == 0 ? 0 : 1) : DivUp(digits, Pow10(-e));
    }
  }
  return negative ? -value : value;
}

int64_t RoundedDiv(Amount nanos, Amount unit) {
  Amount mag = nanos < 0 ? -nanos : nanos;
  Amount q = DivUp(mag, unit);
  Amount lim = std::numeric_limits<int64_t>::max();
  if (q > lim) q = lim;
  return static_cast<int64_t>(nanos < 0 ? -q : q);
}

}  // namespace

StatusOr<Qty> Qty::Parse(std::string_view s) {
  auto parsed = api::Quantity::Parse(s);
  if (!parsed.ok()) return parsed.status();
  Qty out;
  out.q = std::move(parsed).value();
  // Leading/trailing blanks are not accepted by ParseQuantity, so `s` is the number itself.
  out.nanos = ParseNanos(s);
  return out;
}

Qty Qty::FromInt64(int64_t v, api::Quantity::Format format) {
  Qty out;
  out.q = api::Quantity::FromInt64(v, format);
  out.nanos = SatMul(static_cast<Amount>(v < 0 ? -static_cast<Amount>(v) : v), Pow10(9));
  if (v < 0) out.nanos = -out.nanos;
  return out;
}

Qty Qty::FromQuantity(api::Quantity q) {
  Qty out;
  out.nanos = ParseNanos(q.ToString());
  out.q = std::move(q);
  return out;
}

int64_t Qty::Value() const { return RoundedDiv(nanos, Pow10(9)); }
int64_t Qty::MilliValue() const { return RoundedDiv(nanos, Pow10(6)); }

const Attribute* Device::FindAttribute(std::string_view key) const {
  auto it = std::lower_bound(attributes.begin(), attributes.end(), key,
                             [](const auto& p, std::string_view n) { return p.first < n; });
  if (it != attributes.end() && it->first == key) return &it->second;
  return nullptr;
}

const DeviceCapacity* Device::FindCapacity(std::string_view key) const {
  auto it = std::lower_bound(capacity.begin(), capacity.end(), key,
                             [](const auto& p, std::string_view n) { return p.first < n; });
  if (it != capacity.end() && it->first == key) return &it->second;
  return nullptr;
}

std::string_view StrategyName(Strategy s) {
  switch (s) {
    case Strategy::kFirstFit:
      return "FirstFit";
    case Strategy::kBinPack:
      return "BinPack";
    case Strategy::kSpread:
      return "Spread";
  }
  return "?";
}

bool AllocationPolicy::Selects(const DeviceClass& cls) const {
  if (class_names) {
    return std::find(class_names->begin(), class_names->end(), cls.name) != class_names->end();
  }
  if (!has_label_selector) return false;
  for (const auto& [k, v] : match_labels) {
    auto it = cls.labels.find(k);
    if (it == cls.labels.end() || it->second != v) return false;
  }
  for (const auto& r : match_expressions) {
    auto it = cls.labels.find(r.key);
    bool has = it != cls.labels.end();
    bool in = has && std::find(r.values.begin(), r.values.end(), it->second) != r.values.end();
    if (r.op == "In" && !in) return false;
    if (r.op == "NotIn" && in) return false;
    if (r.op == "Exists" && !has) return false;
    if (r.op == "DoesNotExist" && has) return false;
  }
  return true;
}

const NamespaceLimit* AllocationPolicy::LimitFor(std::string_view ns) const {
  const NamespaceLimit* star = nullptr;
  for (const auto& l : namespace_limits) {
    if (l.namespace_name == ns) return &l;
    if (l.namespace_name == "*") star = &l;
  }
  return star;
}

}  // namespace draco::alloc
