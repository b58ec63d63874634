// Quantity arithmetic and formatting: the int64Amount / inf.Dec representations, Compare, Add,
// Sub, Neg, the accessors and ToString's canonical form. Parsing is in quantity_parse.cc.
#include "controller/api/quantity.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "controller/api/quantity_internal.h"

namespace draco::api {
namespace quantity_internal {

using internal::BigNat;

std::optional<int64_t> CheckedMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

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

}  // namespace quantity_internal

namespace {

using internal::BigNat;
using quantity_internal::CheckedMul;
using quantity_internal::CompareMagnitudes;

constexpr int64_t kMostNegative = std::numeric_limits<int64_t>::min();

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
  static constexpr auto kTab =
      std::to_array<double>({1e00, 1e01, 1e02, 1e03, 1e04, 1e05, 1e06, 1e07, 1e08, 1e09, 1e10,
                             1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21,
                             1e22, 1e23, 1e24, 1e25, 1e26, 1e27, 1e28, 1e29, 1e30, 1e31});
  static constexpr auto kPos32 =
      std::to_array<double>({1e00, 1e32, 1e64, 1e96, 1e128, 1e160, 1e192, 1e224, 1e256, 1e288});
  static constexpr auto kNeg32 = std::to_array<double>(
      {1e-00, 1e-32, 1e-64, 1e-96, 1e-128, 1e-160, 1e-192, 1e-224, 1e-256, 1e-288, 1e-320});
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
      static constexpr auto kSuffixes =
          std::to_array<std::string_view>({"n", "u", "m", "", "k", "M", "G", "T", "P", "E"});
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
  static constexpr auto kBinSuffixes =
      std::to_array<std::string_view>({"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"});
  if (times >= 1 && times <= 6) number += kBinSuffixes[times];
  return number;
}

}  // namespace draco::api
