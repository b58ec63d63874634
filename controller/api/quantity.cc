#include "controller/api/quantity.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace draco::api {
namespace {

using internal::BigNat;

constexpr int64_t kMostNegative = std::numeric_limits<int64_t>::min();
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
    uint64_t d = static_cast<uint64_t>(c - '0');
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
  static constexpr struct {
    std::string_view name;
    int base;
    int32_t exponent;
    Quantity::Format format;
  } kTable[] = {
      {"", 10, 0, Quantity::Format::kDecimalSI},   {"n", 10, -9, Quantity::Format::kDecimalSI},
      {"u", 10, -6, Quantity::Format::kDecimalSI}, {"m", 10, -3, Quantity::Format::kDecimalSI},
      {"k", 10, 3, Quantity::Format::kDecimalSI},  {"M", 10, 6, Quantity::Format::kDecimalSI},
      {"G", 10, 9, Quantity::Format::kDecimalSI},  {"T", 10, 12, Quantity::Format::kDecimalSI},
      {"P", 10, 15, Quantity::Format::kDecimalSI}, {"E", 10, 18, Quantity::Format::kDecimalSI},
      {"Ki", 2, 10, Quantity::Format::kBinarySI},  {"Mi", 2, 20, Quantity::Format::kBinarySI},
      {"Gi", 2, 30, Quantity::Format::kBinarySI},  {"Ti", 2, 40, Quantity::Format::kBinarySI},
      {"Pi", 2, 50, Quantity::Format::kBinarySI},  {"Ei", 2, 60, Quantity::Format::kBinarySI},
  };
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

std::optional<int64_t> CheckedMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}
std::optional<int64_t> CheckedAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// base * 10^scale when it fits an int64 (upstream positiveScaleInt64). scale >= 0.
std::optional<int64_t> PositiveScaleInt64(int64_t base, int64_t scale) {
  if (base == 0 || scale == 0) return base;
  if (scale >= 19) return std::nullopt;
  int64_t v = base;
  for (int64_t i = 0; i < scale; ++i) {
    std::optional<int64_t> n = CheckedMul(v, 10);
    if (!n) return std::nullopt;
    v = *n;
  }
  return v;
}

// upstream int64Amount.Add: on failure leaves (av, as) untouched.
bool Int64AmountAdd(int64_t& av, int32_t& as, int64_t bv, int32_t bs) {
  if (bv == 0) return true;
  if (av == 0) {
    av = bv;
    as = bs;
    return true;
  }
  if (as == bs) {
    std::optional<int64_t> c = CheckedAdd(av, bv);
    if (!c) return false;
    av = *c;
    return true;
  }
  if (as > bs) {
    std::optional<int64_t> c = PositiveScaleInt64(av, int64_t{as} - bs);
    if (!c) return false;
    c = CheckedAdd(*c, bv);
    if (!c) return false;
    as = bs;
    av = *c;
    return true;
  }
  std::optional<int64_t> c = PositiveScaleInt64(bv, int64_t{bs} - as);
  if (!c) return false;
  c = CheckedAdd(av, *c);
  if (!c) return false;
  av = *c;
  return true;
}

// Go math.Pow10, reproduced table for table so results match bit for bit.
double GoPow10(int64_t n) {
  static constexpr double kTab[] = {1e00, 1e01, 1e02, 1e03, 1e04, 1e05, 1e06, 1e07,
                                    1e08, 1e09, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                    1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22, 1e23,
                                    1e24, 1e25, 1e26, 1e27, 1e28, 1e29, 1e30, 1e31};
  static constexpr double kPos32[] = {1e00,  1e32,  1e64,  1e96,  1e128,
                                      1e160, 1e192, 1e224, 1e256, 1e288};
  static constexpr double kNeg32[] = {1e-00,  1e-32,  1e-64,  1e-96,  1e-128, 1e-160,
                                      1e-192, 1e-224, 1e-256, 1e-288, 1e-320};
  if (0 <= n && n <= 308) return kPos32[n / 32] * kTab[n % 32];
  if (-323 <= n && n <= 0) return kNeg32[-n / 32] / kTab[-n % 32];
  if (n > 0) return std::numeric_limits<double>::infinity();
  return 0;
}

int64_t FloorMod3(int64_t e) {
  int64_t r = e % 3;
  return r < 0 ? r + 3 : r;
}

}  // namespace

Quantity::Dec Quantity::AsDec() const {
  if (is_dec_) return dec_;
  Dec d;
  d.neg = value_ < 0;
  uint64_t mag = d.neg ? 0 - static_cast<uint64_t>(value_) : static_cast<uint64_t>(value_);
  d.mag = BigNat::FromUint64(mag);
  d.exp = scale_;
  return d;
}

void Quantity::ToDec() {
  if (is_dec_) return;
  dec_ = AsDec();
  is_dec_ = true;
  value_ = 0;
  scale_ = 0;
}

namespace {

int DecSign(bool neg, const BigNat& mag) { return mag.IsZero() ? 0 : (neg ? -1 : 1); }

// Compares |a|*10^ae with |b|*10^be.
int CompareMagnitudes(const BigNat& a, int64_t ae, const BigNat& b, int64_t be) {
  if (a.IsZero() || b.IsZero()) return a.IsZero() ? (b.IsZero() ? 0 : -1) : 1;
  int64_t oa = static_cast<int64_t>(a.DecimalDigits()) + ae;
  int64_t ob = static_cast<int64_t>(b.DecimalDigits()) + be;
  if (oa != ob) return oa < ob ? -1 : 1;
  if (ae == be) return a.Compare(b);
  // Same order of magnitude: the exponent gap is bounded by the digit counts.
  if (ae > be) {
    BigNat t = a;
    t.MulPow10(static_cast<uint64_t>(ae - be));
    return t.Compare(b);
  }
  BigNat t = b;
  t.MulPow10(static_cast<uint64_t>(be - ae));
  return a.Compare(t);
}

}  // namespace

int Quantity::Compare(const Quantity& o) const {
  if (!is_dec_ && !o.is_dec_) {
    if (scale_ == o.scale_) return value_ < o.value_ ? -1 : (value_ > o.value_ ? 1 : 0);
    int64_t lo = std::min<int64_t>(scale_, o.scale_);
    if (int64_t{scale_} - lo <= 18 && int64_t{o.scale_} - lo <= 18) {
      __extension__ using I128 = __int128;
      I128 a = value_, b = o.value_;
      for (int64_t i = lo; i < scale_; ++i) a *= 10;
      for (int64_t i = lo; i < o.scale_; ++i) b *= 10;
      return a < b ? -1 : (a > b ? 1 : 0);
    }
  }
  Dec a = AsDec(), b = o.AsDec();
  int sa = DecSign(a.neg, a.mag), sb = DecSign(b.neg, b.mag);
  if (sa != sb) return sa < sb ? -1 : 1;
  if (sa == 0) return 0;
  int m = CompareMagnitudes(a.mag, a.exp, b.mag, b.exp);
  return sa > 0 ? m : -m;
}

namespace {

// inf.Dec addition: the result has the finer of the two scales.
void DecAddInto(bool& neg, BigNat& mag, int64_t& exp, bool bneg, const BigNat& bmag, int64_t bexp) {
  const int64_t e = std::min(exp, bexp);
  const int64_t da = exp - e, db = bexp - e;
  if (std::max(da, db) > Quantity::kMaxAlignDigits) {
    // Absurd magnitude gap: keep the operand of larger order (documented deviation).
    if (bmag.IsZero()) return;
    if (mag.IsZero() || CompareMagnitudes(mag, exp, bmag, bexp) < 0) {
      neg = bneg;
      mag = bmag;
      exp = bexp;
    }
    return;
  }
  BigNat a = mag;
  a.MulPow10(static_cast<uint64_t>(da));
  BigNat b = bmag;
  b.MulPow10(static_cast<uint64_t>(db));
  exp = e;
  if (neg == bneg || a.IsZero() || b.IsZero()) {
    bool result_neg = a.IsZero() ? bneg : neg;
    a.Add(b);
    mag = std::move(a);
    neg = mag.IsZero() ? false : result_neg;
    return;
  }
  int c = a.Compare(b);
  if (c == 0) {
    mag = BigNat();
    neg = false;
  } else if (c > 0) {
    a.Sub(b);
    mag = std::move(a);
  } else {
    b.Sub(a);
    mag = std::move(b);
    neg = bneg;
  }
}

}  // namespace

Quantity Quantity::Add(const Quantity& y) const {
  Quantity q = *this;
  q.cached_.clear();
  if (!q.is_dec_ && !y.is_dec_) {
    if (q.value_ == 0) q.format_ = y.format_;
    if (Int64AmountAdd(q.value_, q.scale_, y.value_, y.scale_)) return q;
  } else if (q.IsZero()) {
    q.format_ = y.format_;
  }
  q.ToDec();
  Dec b = y.AsDec();
  DecAddInto(q.dec_.neg, q.dec_.mag, q.dec_.exp, b.neg, b.mag, b.exp);
  return q;
}

Quantity Quantity::Sub(const Quantity& y) const {
  Quantity q = *this;
  q.cached_.clear();
  if (q.IsZero()) q.format_ = y.format_;
  if (!q.is_dec_ && !y.is_dec_) {
    if (q.value_ == 0 && y.value_ == kMostNegative) {
      q.value_ = y.value_;
      q.scale_ = y.scale_;
      return q.Neg();
    }
    if (y.value_ != kMostNegative && Int64AmountAdd(q.value_, q.scale_, -y.value_, y.scale_)) {
      return q;
    }
  }
  q.ToDec();
  Dec b = y.AsDec();
  DecAddInto(q.dec_.neg, q.dec_.mag, q.dec_.exp, !b.neg, b.mag, b.exp);
  return q;
}

Quantity Quantity::Neg() const {
  Quantity q = *this;
  q.cached_.clear();
  if (!q.is_dec_) {
    if (q.value_ != kMostNegative) {
      q.value_ = -q.value_;
      return q;
    }
    q.ToDec();
  }
  if (!q.dec_.mag.IsZero()) q.dec_.neg = !q.dec_.neg;
  return q;
}

int Quantity::Sign() const {
  if (is_dec_) return DecSign(dec_.neg, dec_.mag);
  return value_ == 0 ? 0 : (value_ > 0 ? 1 : -1);
}

std::optional<int64_t> Quantity::AsInt64() const {
  if (is_dec_) return std::nullopt;
  if (scale_ == 0) return value_;
  if (scale_ < 0) return std::nullopt;
  return PositiveScaleInt64(value_, scale_);
}

int64_t Quantity::ScaledValue(int32_t scale) const {
  Dec d = AsDec();
  if (d.mag.IsZero()) return 0;
  int64_t shift = d.exp - scale;
  constexpr int64_t kMaxPositive = std::numeric_limits<int64_t>::max();
  if (shift > 19) return d.neg ? -kMaxPositive - 1 : kMaxPositive;
  if (shift >= 0) {
    d.mag.MulPow10(static_cast<uint64_t>(shift));
  } else if (d.mag.DivPow10(static_cast<uint64_t>(-shift))) {
    d.mag.AddSmall(1);  // rounded away from zero
  }
  std::optional<uint64_t> mag = d.mag.ToUint64();
  if (!mag || *mag > static_cast<uint64_t>(kMaxPositive)) {
    return d.neg ? -kMaxPositive - 1 : kMaxPositive;
  }
  return d.neg ? -static_cast<int64_t>(*mag) : static_cast<int64_t>(*mag);
}

double Quantity::AsApproximateFloat64() const {
  double base;
  int64_t exponent;
  if (is_dec_) {
    std::string digits = (dec_.neg && !dec_.mag.IsZero() ? "-" : "") + dec_.mag.ToString();
    base = std::strtod(digits.c_str(), nullptr);  // correctly rounded, like big.Float.Float64
    exponent = dec_.exp;
  } else {
    base = static_cast<double>(value_);
    exponent = scale_;
  }
  if (exponent == 0) return base;
  return base * GoPow10(exponent);
}

Quantity Quantity::FromInt64(int64_t v, Format format) {
  Quantity q;
  q.value_ = v;
  q.format_ = format;
  return q;
}

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
  const int64_t digits = static_cast<int64_t>(sc.num.size() + sc.denom.size());
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

std::string Quantity::ToString() const {
  if (!cached_.empty()) return cached_;
  return Canonicalize();
}

std::string Quantity::Canonicalize() const {
  if (IsZero()) return "0";
  Format format = format_;
  // For BinarySI: the exact integer value to print in base 1024.
  bool int64_path = false;
  int64_t int_value = 0;
  BigNat big_value;
  bool big_neg = false;
  if (format == Format::kBinarySI) {
    static const Quantity kMinus1024 = FromInt64(-1024);
    static const Quantity kPlus1024 = FromInt64(1024);
    if (Compare(kMinus1024) > 0 && Compare(kPlus1024) < 0) {
      format = Format::kDecimalSI;
    } else {
      Dec d = AsDec();
      bool exact = true;
      if (d.exp < 0) {
        exact = d.mag.TrailingDecimalZeros() >= static_cast<uint64_t>(-d.exp);
      } else if (d.exp + static_cast<int64_t>(d.mag.DecimalDigits()) > 10000) {
        exact = false;  // refuse to expand giant integers (documented deviation)
      }
      if (!exact) {
        format = Format::kDecimalSI;
      } else {
        if (d.exp < 0) {
          d.mag.DivPow10(static_cast<uint64_t>(-d.exp));
        } else {
          d.mag.MulPow10(static_cast<uint64_t>(d.exp));
        }
        std::optional<uint64_t> mag = d.mag.ToUint64();
        // Upstream prints from an int64 when the amount is an int64Amount whose integer value
        // fits; otherwise it uses math/big. Only INT64_MIN behaves differently (see below).
        if (!is_dec_ && mag && (*mag <= uint64_t{1} << 63) &&
            (d.neg || *mag < (uint64_t{1} << 63))) {
          int64_path = true;
          int_value = d.neg ? static_cast<int64_t>(0 - *mag) : static_cast<int64_t>(*mag);
        } else {
          big_value = std::move(d.mag);
          big_neg = d.neg;
        }
      }
    }
  }
  if (format != Format::kBinarySI) {
    Dec d = AsDec();
    uint64_t tz = d.mag.TrailingDecimalZeros();
    d.mag.DivPow10(tz);
    int64_t exponent = d.exp + static_cast<int64_t>(tz);
    int64_t r = FloorMod3(exponent);
    d.mag.MulPow10(static_cast<uint64_t>(r));
    exponent -= r;
    std::string out = (d.neg ? "-" : "") + d.mag.ToString();
    if (format == Format::kDecimalSI) {
      static constexpr std::string_view kSuffixes[] = {"n", "u", "m", "",  "k",
                                                       "M", "G", "T", "P", "E"};
      if (exponent >= -9 && exponent <= 18) {
        out += kSuffixes[(exponent + 9) / 3];
        return out;
      }
    }
    if (exponent != 0) out += "e" + std::to_string(static_cast<int32_t>(exponent));
    return out;
  }
  int times = 0;
  std::string number;
  if (int64_path) {
    // removeInt64Factors negates first; INT64_MIN stays negative and is never reduced.
    int64_t v = int_value;
    if (v != kMostNegative) {
      int64_t a = v < 0 ? -v : v;
      while (a >= 1024 && a % 1024 == 0) {
        a /= 1024;
        ++times;
      }
      v = v < 0 ? -a : a;
    }
    number = std::to_string(v);
  } else {
    while (!big_value.IsZero()) {
      BigNat t = big_value;
      if (t.DivSmall(1024) != 0) break;
      big_value = std::move(t);
      ++times;
    }
    number = (big_neg ? "-" : "") + big_value.ToString();
  }
  static constexpr std::string_view kBinSuffixes[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  if (times >= 1 && times <= 6) number += kBinSuffixes[times];
  return number;
}

}  // namespace draco::api
