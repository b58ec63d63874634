// Quantity::Parse: upstream's hand-written quantity scanner, suffix table and the int64 /
// arbitrary-precision decimal parsing paths (k8s.io/apimachinery/pkg/api/resource/quantity.go).
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "controller/api/quantity.h"
#include "controller/api/quantity_internal.h"

namespace draco::api {
namespace {

using internal::BigNat;
using quantity_internal::CheckedMul;
using quantity_internal::CompareMagnitudes;

constexpr int32_t kNano = -9;
constexpr int64_t kMaxInt64Factors = 18;  // decimal digits that always fit an int64

// Upstream's error values (k8s.io/apimachinery/pkg/api/resource/quantity.go).
Status ErrFormatWrong() {
  return InvalidArgumentError(
      "quantities must match the regular expression "
      "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
}
Status ErrNumeric() { return InvalidArgumentError("unable to parse numeric part of quantity"); }
Status ErrSuffix() { return InvalidArgumentError("unable to parse quantity's suffix"); }

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Go int32 arithmetic wraps; upstream's scale bookkeeping is int32, so mirror the wrap.
int32_t Wrap32(int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(v)); }

struct Scanned {
  bool positive = true;
  std::string_view value, num, denom, suffix;
};

// Mirrors upstream parseQuantityString, a hand-written scanner (not a regexp).
bool ScanQuantity(std::string_view str, Scanned* out) {
  size_t pos = 0;
  const size_t end = str.size();
  if (pos < end) {
    if (str[0] == '-') {
      out->positive = false;
      ++pos;
    } else if (str[0] == '+') {
      ++pos;
    }
  }
  for (size_t i = pos;; ++i) {  // strip leading zeros
    if (i >= end) {
      out->num = "0";
      out->value = out->num;
      return true;
    }
    if (str[i] != '0') break;
    ++pos;
  }
  for (size_t i = pos;; ++i) {  // numerator
    if (i >= end) {
      out->num = str.substr(pos, end - pos);
      out->value = str.substr(0, end);
      return true;
    }
    if (!IsDigit(str[i])) {
      out->num = str.substr(pos, i - pos);
      pos = i;
      break;
    }
  }
  if (out->num.empty()) out->num = "0";
  if (pos < end && str[pos] == '.') {  // denominator; "1." is accepted as upstream does
    ++pos;
    for (size_t i = pos;; ++i) {
      if (i >= end) {
        out->denom = str.substr(pos, end - pos);
        out->value = str.substr(0, end);
        return true;
      }
      if (!IsDigit(str[i])) {
        out->denom = str.substr(pos, i - pos);
        pos = i;
        break;
      }
    }
  }
  out->value = str.substr(0, pos);
  const size_t suffix_start = pos;
  for (size_t i = pos;; ++i) {
    if (i >= end) {
      out->suffix = str.substr(suffix_start);
      return true;
    }
    if (std::string_view("eEinumkKMGTP").find(str[i]) == std::string_view::npos) {
      pos = i;
      break;
    }
  }
  if (pos < end && (str[pos] == '-' || str[pos] == '+')) ++pos;
  for (size_t i = pos;; ++i) {
    if (i >= end) {
      out->suffix = str.substr(suffix_start);
      return true;
    }
    if (!IsDigit(str[i])) break;
  }
  return false;
}

// Go strconv.ParseInt(s, 10, 64).
std::optional<int64_t> GoParseInt(std::string_view s) {
  bool neg = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return std::nullopt;
  uint64_t v = 0;
  const uint64_t limit = neg ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
  for (char c : s) {
    if (!IsDigit(c)) return std::nullopt;
    auto d = static_cast<uint64_t>(c - '0');
    if (v > (limit - d) / 10) return std::nullopt;
    v = v * 10 + d;
  }
  return neg ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
}

struct SuffixInfo {
  int base = 10;
  int32_t exponent = 0;
  Quantity::Format format = Quantity::Format::kDecimalSI;
};

bool InterpretSuffix(std::string_view s, SuffixInfo* out) {
  struct Entry {
    std::string_view name;
    int base;
    int32_t exponent;
    Quantity::Format format;
  };
  static constexpr auto kTable = std::to_array<Entry>({
      {"", 10, 0, Quantity::Format::kDecimalSI},
      {"n", 10, -9, Quantity::Format::kDecimalSI},
      {"u", 10, -6, Quantity::Format::kDecimalSI},
      {"m", 10, -3, Quantity::Format::kDecimalSI},
      {"k", 10, 3, Quantity::Format::kDecimalSI},
      {"M", 10, 6, Quantity::Format::kDecimalSI},
      {"G", 10, 9, Quantity::Format::kDecimalSI},
      {"T", 10, 12, Quantity::Format::kDecimalSI},
      {"P", 10, 15, Quantity::Format::kDecimalSI},
      {"E", 10, 18, Quantity::Format::kDecimalSI},
      {"Ki", 2, 10, Quantity::Format::kBinarySI},
      {"Mi", 2, 20, Quantity::Format::kBinarySI},
      {"Gi", 2, 30, Quantity::Format::kBinarySI},
      {"Ti", 2, 40, Quantity::Format::kBinarySI},
      {"Pi", 2, 50, Quantity::Format::kBinarySI},
      {"Ei", 2, 60, Quantity::Format::kBinarySI},
  });
  for (const auto& e : kTable) {
    if (e.name == s) {
      *out = {e.base, e.exponent, e.format};
      return true;
    }
  }
  if (s.size() > 1 && (s[0] == 'e' || s[0] == 'E')) {
    std::optional<int64_t> parsed = GoParseInt(s.substr(1));
    if (!parsed) return false;
    *out = {10, Wrap32(*parsed), Quantity::Format::kDecimalExponent};
    return true;
  }
  return false;
}

}  // namespace

StatusOr<Quantity> Quantity::Parse(std::string_view str) {
  if (str.empty()) return ErrFormatWrong();
  if (str == "0") {
    Quantity q;
    q.cached_ = "0";
    return q;
  }
  Scanned sc;
  if (!ScanQuantity(str, &sc)) return ErrFormatWrong();
  SuffixInfo suf;
  if (!InterpretSuffix(sc.suffix, &suf)) return ErrSuffix();

  int64_t precision = 0;
  int32_t scale = 0;
  int64_t mantissa = 1;
  const auto digits = static_cast<int64_t>(sc.num.size() + sc.denom.size());
  if (suf.format == Format::kBinarySI) {
    if (suf.exponent >= 0 && sc.denom.empty()) {
      mantissa = int64_t{1} << suf.exponent;
      // ~3 decimal digits per 10 bits of the suffix, as upstream estimates it.
      precision = 15 - static_cast<int64_t>(sc.num.size()) - suf.exponent * 3 / 10 - 1;
    } else {
      precision = -1;
    }
  } else {
    scale = suf.exponent;
    precision = kMaxInt64Factors - digits;
  }

  if (precision >= 0) {
    scale = Wrap32(int64_t{scale} - static_cast<int64_t>(sc.denom.size()));
    if (scale >= kNano) {
      std::string shifted = std::string(sc.num) + std::string(sc.denom);
      std::optional<int64_t> value = GoParseInt(shifted);
      if (!value) return ErrNumeric();
      if (std::optional<int64_t> result = CheckedMul(*value, mantissa)) {
        Quantity q;
        q.value_ = sc.positive ? *result : -*result;
        q.scale_ = scale;
        q.format_ = suf.format;
        // Upstream keeps the input text when it is already in canonical form.
        bool canonical;
        if (suf.format == Format::kBinarySI) {
          canonical = suf.exponent % 10 == 0 && (*value & 0x07) != 0;
        } else {
          canonical = scale % 3 == 0 && !shifted.ends_with("000") && shifted[0] != '0';
        }
        if (canonical) q.cached_ = std::string(str);
        return q;
      }
    }
  }

  // Slow path: arbitrary precision (upstream inf.Dec).
  std::string unscaled;
  int64_t frac_digits = 0;
  bool seen_dot = false;
  bool neg = false;
  for (size_t i = 0; i < sc.value.size(); ++i) {
    char c = sc.value[i];
    if (i == 0 && (c == '+' || c == '-')) {
      neg = c == '-';
    } else if (c == '.') {
      seen_dot = true;
    } else {
      unscaled.push_back(c);
      if (seen_dot) ++frac_digits;
    }
  }
  if (unscaled.empty()) return ErrNumeric();
  Quantity q;
  q.is_dec_ = true;
  q.format_ = suf.format;
  Dec& d = q.dec_;
  d.mag = BigNat::FromDigits(unscaled);
  int32_t inf_scale = Wrap32(frac_digits);
  if (suf.base == 10) {
    inf_scale = Wrap32(int64_t{inf_scale} + Wrap32(-int64_t{suf.exponent}));
  } else {
    d.mag.MulPow2(static_cast<uint64_t>(suf.exponent));
  }
  d.exp = -int64_t{inf_scale};
  if (!d.mag.IsZero()) {
    // Round away from zero to nano precision; the result always has scale nano.
    if (d.exp < kNano) {
      if (d.mag.DivPow10(static_cast<uint64_t>(kNano - d.exp))) d.mag.AddSmall(1);
      d.exp = kNano;
    } else if (d.exp > kNano && d.exp - kNano <= kMaxAlignDigits) {
      d.mag.MulPow10(static_cast<uint64_t>(d.exp - kNano));
      d.exp = kNano;
    }
  }
  static const BigNat kMaxInt64 = BigNat::FromUint64(std::numeric_limits<int64_t>::max());
  if (suf.format == Format::kBinarySI && CompareMagnitudes(d.mag, d.exp, kMaxInt64, 0) > 0) {
    d.mag = kMaxInt64;
    d.exp = 0;
  }
  static const BigNat kOne = BigNat::FromUint64(1);
  if (suf.format == Format::kBinarySI && !d.mag.IsZero() &&
      CompareMagnitudes(d.mag, d.exp, kOne, 0) < 0) {
    q.format_ = Format::kDecimalSI;
  }
  d.neg = neg && !d.mag.IsZero();
  return q;
}

}  // namespace draco::api
