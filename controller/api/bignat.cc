#include "controller/api/bignat.h"

#include <algorithm>
#include <array>

namespace draco::api::internal {
namespace {

constexpr std::array<uint32_t, 10> kPow10 = {1,      10,      100,      1000,      10000,
                                             100000, 1000000, 10000000, 100000000, 1000000000};

int DigitsOf(uint32_t v) {
  int n = 0;
  while (v != 0) {
    ++n;
    v /= 10;
  }
  return n;
}

}  // namespace

BigNat BigNat::FromUint64(uint64_t v) {
  BigNat r;
  while (v != 0) {
    r.limbs_.push_back(static_cast<uint32_t>(v % kBase));
    v /= kBase;
  }
  return r;
}

BigNat BigNat::FromDigits(std::string_view digits) {
  BigNat r;
  size_t end = digits.size();
  while (end > 0) {
    size_t begin = end >= 9 ? end - 9 : 0;
    uint32_t limb = 0;
    for (size_t i = begin; i < end; ++i) limb = limb * 10 + static_cast<uint32_t>(digits[i] - '0');
    r.limbs_.push_back(limb);
    end = begin;
  }
  r.Trim();
  return r;
}

void BigNat::Trim() {
  while (!limbs_.empty() && limbs_.back() == 0) limbs_.pop_back();
}

int BigNat::Compare(const BigNat& o) const {
  if (limbs_.size() != o.limbs_.size()) return limbs_.size() < o.limbs_.size() ? -1 : 1;
  for (size_t i = limbs_.size(); i-- > 0;) {
    if (limbs_[i] != o.limbs_[i]) return limbs_[i] < o.limbs_[i] ? -1 : 1;
  }
  return 0;
}

void BigNat::Add(const BigNat& o) {
  if (limbs_.size() < o.limbs_.size()) limbs_.resize(o.limbs_.size(), 0);
  uint32_t carry = 0;
  for (size_t i = 0; i < limbs_.size(); ++i) {
    uint64_t s = uint64_t{limbs_[i]} + carry + (i < o.limbs_.size() ? o.limbs_[i] : 0);
    limbs_[i] = static_cast<uint32_t>(s % kBase);
    carry = static_cast<uint32_t>(s / kBase);
    if (carry == 0 && i >= o.limbs_.size()) break;
  }
  if (carry != 0) limbs_.push_back(carry);
}

void BigNat::Sub(const BigNat& o) {
  int64_t borrow = 0;
  for (size_t i = 0; i < limbs_.size(); ++i) {
    int64_t d = int64_t{limbs_[i]} - borrow - (i < o.limbs_.size() ? o.limbs_[i] : 0);
    borrow = 0;
    if (d < 0) {
      d += kBase;
      borrow = 1;
    }
    limbs_[i] = static_cast<uint32_t>(d);
    if (borrow == 0 && i >= o.limbs_.size()) break;
  }
  Trim();
}

void BigNat::AddSmall(uint32_t v) { Add(FromUint64(v)); }

void BigNat::MulSmall(uint32_t m) {
  if (m == 0) {
    limbs_.clear();
    return;
  }
  uint64_t carry = 0;
  for (uint32_t& limb : limbs_) {
    uint64_t p = uint64_t{limb} * m + carry;
    limb = static_cast<uint32_t>(p % kBase);
    carry = p / kBase;
  }
  while (carry != 0) {
    limbs_.push_back(static_cast<uint32_t>(carry % kBase));
    carry /= kBase;
  }
}

void BigNat::MulPow10(uint64_t n) {
  if (IsZero() || n == 0) return;
  MulSmall(kPow10[n % 9]);
  limbs_.insert(limbs_.begin(), static_cast<size_t>(n / 9), 0u);
}

void BigNat::MulPow2(uint64_t n) {
  while (n > 0) {
    uint64_t step = std::min<uint64_t>(n, 29);
    MulSmall(uint32_t{1} << step);
    n -= step;
  }
}

uint32_t BigNat::DivSmall(uint32_t d) {
  uint64_t rem = 0;
  for (size_t i = limbs_.size(); i-- > 0;) {
    uint64_t cur = rem * kBase + limbs_[i];
    limbs_[i] = static_cast<uint32_t>(cur / d);
    rem = cur % d;
  }
  Trim();
  return static_cast<uint32_t>(rem);
}

bool BigNat::DivPow10(uint64_t n) {
  if (IsZero() || n == 0) return false;
  uint64_t whole = n / 9;
  bool dropped = false;
  if (whole >= limbs_.size()) {
    limbs_.clear();
    return true;
  }
  for (uint64_t i = 0; i < whole; ++i) dropped |= limbs_[i] != 0;
  limbs_.erase(limbs_.begin(), limbs_.begin() + static_cast<ptrdiff_t>(whole));
  if (n % 9 != 0) dropped |= DivSmall(kPow10[n % 9]) != 0;
  Trim();
  return dropped;
}

uint64_t BigNat::DecimalDigits() const {
  if (IsZero()) return 0;
  return (limbs_.size() - 1) * 9 + static_cast<uint64_t>(DigitsOf(limbs_.back()));
}

uint64_t BigNat::TrailingDecimalZeros() const {
  uint64_t n = 0;
  for (uint32_t limb : limbs_) {
    if (limb == 0) {
      n += 9;
      continue;
    }
    while (limb % 10 == 0) {
      ++n;
      limb /= 10;
    }
    return n;
  }
  return 0;
}

std::optional<uint64_t> BigNat::ToUint64() const {
  if (limbs_.size() > 3) return std::nullopt;
  uint64_t v = 0;
  for (size_t i = limbs_.size(); i-- > 0;) {
    if (v > (UINT64_MAX - limbs_[i]) / kBase) return std::nullopt;
    v = v * kBase + limbs_[i];
  }
  return v;
}

std::string BigNat::ToString() const {
  if (IsZero()) return "0";
  std::string out = std::to_string(limbs_.back());
  for (size_t i = limbs_.size() - 1; i-- > 0;) {
    std::string part = std::to_string(limbs_[i]);
    out.append(9 - part.size(), '0');
    out += part;
  }
  return out;
}

}  // namespace draco::api::internal
