// Quantity: Kubernetes resource.Quantity (k8s.io/apimachinery/pkg/api/resource) with exact
// semantics. No floating point is used for the value; AsApproximateFloat64 is the only lossy
// accessor.
//
// The representation mirrors upstream on purpose: a quantity is either a scaled int64
// ("int64Amount": value * 10^scale) or an arbitrary-precision decimal ("inf.Dec"), and which one a
// value uses decides observable behaviour exactly as in Go (for example AsInt64 / CEL isInteger()
// is false for "1.5Gi" because upstream parses it into the decimal form, and for "1000m" because
// upstream keeps scale -3). String() also reuses the parsed text when upstream does ("+1", "1e3"
// and "1Ki" print as written).
//
// Known deviations (all on absurd inputs where upstream would allocate gigabytes): additions whose
// operands differ by more than kMaxAlignDigits decimal orders of magnitude keep only the larger
// operand, and parsed decimals are not expanded to nano scale beyond that many digits.
//
// Value type; thread-compatible (const methods may be called concurrently).
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "base/status.h"
#include "controller/api/bignat.h"

namespace draco::api {

class Quantity {
 public:
  enum class Format { kDecimalSI, kBinarySI, kDecimalExponent };

  // Zero, DecimalSI.
  Quantity() = default;

  // Parses every upstream form: optional sign, digits with optional '.', and a suffix
  // (n u m "" k M G T P E | Ki Mi Gi Ti Pi Ei | e<int> E<int>). Errors (INVALID_ARGUMENT) carry
  // upstream's messages (ErrFormatWrong / ErrNumeric / ErrSuffix). Values finer than 1n are rounded
  // away from zero to 1n; BinarySI values are capped at 2^63-1, as upstream does.
  static StatusOr<Quantity> Parse(std::string_view s);
  // resource.NewQuantity(v, format).
  static Quantity FromInt64(int64_t v, Format format = Format::kDecimalSI);

  // Canonical form exactly as upstream's Quantity.String() (including its reuse of the parsed
  // text for already-canonical inputs).
  std::string ToString() const;

  // -1, 0 or 1; exact.
  int Compare(const Quantity& o) const;
  // Exact. As upstream, the result takes `o`'s format when *this is zero.
  Quantity Add(const Quantity& o) const;
  Quantity Sub(const Quantity& o) const;
  Quantity Neg() const;

  int Sign() const;
  bool IsZero() const { return Sign() == 0; }
  // Upstream CEL isInteger(): true iff upstream's AsInt64() succeeds.
  bool IsInteger() const { return AsInt64().has_value(); }
  // Upstream Quantity.AsInt64(): the value when it is held as a scaled int64 with scale >= 0 and
  // fits; nullopt otherwise (also for values held in decimal form).
  std::optional<int64_t> AsInt64() const;
  // Upstream ScaledValue(scale): the value in units of 10^scale, rounded away from zero, exact;
  // saturated at the int64 range. MilliValue() is ScaledValue(-3), Value() is ScaledValue(0).
  int64_t ScaledValue(int32_t scale) const;
  int64_t MilliValue() const { return ScaledValue(-3); }
  int64_t Value() const { return ScaledValue(0); }
  // Upstream AsApproximateFloat64(), bit-for-bit (mantissa as float64 times Go's math.Pow10).
  double AsApproximateFloat64() const;

  Format format() const { return format_; }

  friend bool operator==(const Quantity& a, const Quantity& b) { return a.Compare(b) == 0; }
  friend std::ostream& operator<<(std::ostream& os, const Quantity& q) {
    return os << q.ToString();
  }

  // Largest decimal alignment/expansion performed exactly (see the header comment).
  static constexpr int64_t kMaxAlignDigits = 1 << 20;

 private:
  // The inf.Dec form: (-1)^neg * mag * 10^exp.
  struct Dec {
    bool neg = false;
    internal::BigNat mag;
    int64_t exp = 0;
  };

  Dec AsDec() const;
  void ToDec();
  std::string Canonicalize() const;

  bool is_dec_ = false;
  int64_t value_ = 0;  // int64Amount form: value_ * 10^scale_
  int32_t scale_ = 0;
  Dec dec_;  // valid iff is_dec_
  Format format_ = Format::kDecimalSI;
  std::string cached_;  // upstream's `s`: text reused by String() when non-empty
};

}  // namespace draco::api
