// Internal to Quantity (quantity.h); include only from quantity.cc and quantity_parse.cc. The
// int64 and BigNat helpers both files use; defined in quantity.cc.
#pragma once

#include <cstdint>
#include <optional>

#include "controller/api/bignat.h"

namespace draco::api::quantity_internal {

// a * b, or nullopt on int64 overflow.
std::optional<int64_t> CheckedMul(int64_t a, int64_t b);
// Compares |a|*10^ae with |b|*10^be.
int CompareMagnitudes(const internal::BigNat& a, int64_t ae, const internal::BigNat& b, int64_t be);

}  // namespace draco::api::quantity_internal
