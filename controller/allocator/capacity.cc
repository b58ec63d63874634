#include "controller/allocator/capacity.h"

#include <limits>

namespace draco::alloc {
namespace {

constexpr int64_t kMaxInt64 = std::numeric_limits<int64_t>::max();
const Amount kNanosPerUnit = 1000000000;

bool SafeMilli(const Qty& q, int64_t* out) {
  Amount m = q.nanos / 1000000;
  if (m * 1000000 != q.nanos) return false;
  if (m > kMaxInt64 || m < std::numeric_limits<int64_t>::min()) return false;
  *out = static_cast<int64_t>(m);
  return true;
}

bool UseMilli(const CapacityRange& r, bool fractional) {
  if (!fractional) return false;
  int64_t v;
  for (const auto* q : {&r.min, &r.max, &r.step}) {
    if (!q->has_value()) continue;
    if (!SafeMilli(**q, &v)) return false;
  }
  if (r.step && SafeMilli(*r.step, &v) && v < 1) return false;
  // Upstream: "any of min/max/step is fractional" is implied by the caller's context only via
  // MilliValue arithmetic giving the same result for whole numbers.
  return true;
}

bool RoundUpRange(const Qty& req, const CapacityRange& r, bool fractional, Qty* out,
                  std::string* err) {
  if (req.nanos < r.min->nanos) {
    *out = *r.min;
    return true;
  }
  if (!r.step) {
    *out = req;
    return true;
  }
  if (UseMilli(r, fractional)) {
    int64_t rm;
    if (!SafeMilli(req, &rm)) {
      *err = "capacity request cannot be represented in the device's range arithmetic: request " +
             req.ToString() + " is not a representable milli value";
      return false;
    }
    int64_t step = r.step->MilliValue(), min = r.min->MilliValue();
    int64_t added = rm - min;
    int64_t n = added / step + (added % step != 0 ? 1 : 0);
    if (n > (kMaxInt64 - min) / step) {
      *err = "capacity request cannot be represented in the device's range arithmetic";
      return false;
    }
    int64_t val = min + step * n;
    if (val % 1000 == 0) {
      *out = Qty::FromInt64(val / 1000, r.step->q.format());
    } else {
      auto q = Qty::Parse(std::to_string(val) + "m");
      *out = q.ok() ? *q : req;
    }
    return true;
  }
  if (req.nanos > static_cast<Amount>(kMaxInt64) * kNanosPerUnit) {
    *err = "capacity request cannot be represented in the device's range arithmetic: request " +
           req.ToString() + " exceeds MaxInt64";
    return false;
  }
  int64_t ri = req.Value(), step = r.step->Value(), min = r.min->Value();
  if (step == 0) {
    *err = "runtime error: integer divide by zero";
    return false;
  }
  int64_t added = ri - min;
  int64_t n = added / step;
  if (added % step != 0) ++n;
  if (min >= 0 && n > (kMaxInt64 - min) / step) {
    *err =
        "capacity request cannot be represented in the device's range arithmetic: rounding "
        "request " +
        req.ToString() + " up to the next step passes MaxInt64";
    return false;
  }
  *out = Qty::FromInt64(min + step * n, r.step->q.format());
  return true;
}

bool CalcConsumed(const Qty* req, const DeviceCapacity& cap, bool fractional, Qty* out,
                  std::string* err) {
  if (req == nullptr) {
    if (cap.request_policy && cap.request_policy->default_value) {
      *out = *cap.request_policy->default_value;
    } else {
      *out = cap.value;
    }
    return true;
  }
  if (!cap.request_policy) {
    *out = *req;
    return true;
  }
  const CapacityRequestPolicy& p = *cap.request_policy;
  if (p.valid_range && p.valid_range->min) {
    return RoundUpRange(*req, *p.valid_range, fractional, out, err);
  }
  if (p.has_valid_values) {
    for (const auto& v : p.valid_values) {
      if (req->nanos <= v.nanos) {
        *out = v;
        return true;
      }
    }
  }
  *out = *req;
  return true;
}

}  // namespace

bool ViolatesPolicy(const Qty& consumed, const std::optional<CapacityRequestPolicy>& policy,
                    bool fractional) {
  if (!policy) return false;
  if (policy->default_value && consumed.nanos == policy->default_value->nanos) return false;
  if (policy->valid_range) {
    const CapacityRange& r = *policy->valid_range;
    if (r.max && consumed.nanos > r.max->nanos) return true;
    if (r.step) {
      int64_t req, step, min;
      if (UseMilli(r, fractional)) {
        if (!SafeMilli(consumed, &req)) return true;
        step = r.step->MilliValue();
        min = r.min ? r.min->MilliValue() : 0;
      } else {
        req = consumed.Value();
        step = r.step->Value();
        min = r.min ? r.min->Value() : 0;
      }
      if (step == 0) return true;
      if ((req - min) % step != 0) return true;
    }
    return false;
  }
  if (!policy->valid_values.empty()) {
    for (const auto& v : policy->valid_values) {
      if (consumed.nanos == v.nanos) return false;
    }
    return true;
  }
  return false;
}

const Qty* RequestedFor(const RequestSpec& spec, const std::string& name) {
  for (const auto& [k, q] : spec.capacity_requests) {
    if (k == name) return &q;
  }
  return nullptr;
}

// Computes the consumed amount of every device capacity for `spec` (upstream's first pass of
// CmpRequestOverCapacity / GetConsumedCapacityFromRequest). Returns false with *err on a fatal
// problem; *missing is set when a requested capacity does not exist on the device.
bool ConsumedForDevice(const RequestSpec& spec, const Device& d, bool fractional,
                       std::vector<Qty>* consumed, bool* missing, std::string* err) {
  *missing = false;
  for (const auto& [k, q] : spec.capacity_requests) {
    if (d.FindCapacity(k) == nullptr) {
      *missing = true;
      return true;
    }
  }
  consumed->resize(d.capacity.size());
  for (size_t i = 0; i < d.capacity.size(); ++i) {
    const auto& [name, cap] = d.capacity[i];
    std::string e;
    if (!CalcConsumed(RequestedFor(spec, name), cap, fractional, &(*consumed)[i], &e)) {
      *err = "capacity \"" + name + "\": ";
      *err += e;
      return false;
    }
    if ((*consumed)[i].nanos < 0) {
      *err = "capacity \"" + name + "\": capacity value is negative";
      return false;
    }
  }
  return true;
}

std::string FormatAmount(Amount nanos, api::Quantity::Format format) {
  const Amount unit = kNanosPerUnit;
  if (nanos % unit == 0 && nanos / unit <= kMaxInt64 && nanos / unit >= -kMaxInt64) {
    return Qty::FromInt64(static_cast<int64_t>(nanos / unit), format).ToString();
  }
  // Fractional: let the quantity parser canonicalize "<n>n" ("1500000000n" -> "1500m").
  bool neg = nanos < 0;
  Amount mag = neg ? -nanos : nanos;
  std::string digits;
  while (mag > 0) {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(mag % 10)));
    mag /= 10;
  }
  auto q = api::Quantity::Parse((neg ? "-" : "") + digits + "n");
  return q.ok() ? q->ToString() : digits + "n";
}

}  // namespace draco::alloc
