// Consumable capacity arithmetic shared by the search and the explainer (internal to the
// allocator): what a request consumes of each capacity of a device (upstream's
// CmpRequestOverCapacity first pass, requestPolicy defaults and rounding), whether a consumed
// amount violates the device's requestPolicy, and formatting of exact amounts as Kubernetes
// quantities.
//
// Thread-safe (pure functions).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "controller/allocator/compute_model.h"

namespace draco::alloc {

// True when `consumed` is not an amount the capacity's requestPolicy accepts (outside the valid
// range, off its step, or not one of the valid values); never for the policy's default.
bool ViolatesPolicy(const Qty& consumed, const std::optional<CapacityRequestPolicy>& policy,
                    bool fractional);

// The amount `spec` asks for of capacity `name`, or null when it does not ask for that capacity.
// Points into `spec`.
const Qty* RequestedFor(const RequestSpec& spec, const std::string& name);

// Computes the consumed amount of every capacity of `d` for `spec`, aligned with d.capacity:
// the request rounded up as the requestPolicy says, else the policy default, else the whole
// capacity. Returns false with *err on a fatal problem (unrepresentable arithmetic, negative
// value); sets *missing (and leaves *consumed unset) when `spec` asks for a capacity `d` lacks.
bool ConsumedForDevice(const RequestSpec& spec, const Device& d, bool fractional,
                       std::vector<Qty>* consumed, bool* missing, std::string* err);

// An exact amount (units of 1e-9) as a canonical Kubernetes quantity in `format` ("48Gi", "60",
// "1500m"); fractional amounts are canonicalized through the quantity parser.
std::string FormatAmount(Amount nanos, api::Quantity::Format format);

}  // namespace draco::alloc
