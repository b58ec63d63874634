// BigNat: a small arbitrary-precision natural number used by Quantity for values that do not fit
// an int64 (upstream uses math/big and inf.Dec for the same purpose).
//
// Value type, thread-compatible. Not a general bignum library: it offers only the operations the
// quantity arithmetic needs (decimal I/O, add/sub, small multiply/divide, powers of 10 and 2).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace draco::api::internal {

class BigNat {
 public:
  BigNat() = default;
  static BigNat FromUint64(uint64_t v);
  // Precondition: `digits` contains only '0'..'9' (may be empty, meaning zero).
  static BigNat FromDigits(std::string_view digits);

  bool IsZero() const { return limbs_.empty(); }
  // -1, 0 or 1.
  int Compare(const BigNat& o) const;

  void Add(const BigNat& o);
  // Precondition: *this >= o.
  void Sub(const BigNat& o);
  void AddSmall(uint32_t v);
  void MulSmall(uint32_t m);
  void MulPow10(uint64_t n);
  void MulPow2(uint64_t n);
  // Truncating division by d (> 0); returns the remainder.
  uint32_t DivSmall(uint32_t d);
  // Truncating division by 10^n; returns true when a non-zero remainder was dropped.
  bool DivPow10(uint64_t n);

  // Number of decimal digits; 0 for zero.
  uint64_t DecimalDigits() const;
  // Number of trailing decimal zeros; 0 for zero.
  uint64_t TrailingDecimalZeros() const;
  std::optional<uint64_t> ToUint64() const;
  std::string ToString() const;

 private:
  static constexpr uint32_t kBase = 1000000000;  // 9 decimal digits per limb
  void Trim();
  std::vector<uint32_t> limbs_;  // little-endian, no leading zero limbs
};

}  // namespace draco::api::internal
