// Small builders shared by the allocator's unit tests (header-only, tests only): the "gpu" class
// of driver gpu.example.com and an ExactCount claim for it.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "controller/allocator/compute_api.h"

namespace draco::alloc::testing {

// DeviceClass "gpu" selecting every device of driver gpu.example.com.
inline DeviceClass GpuClass() {
  DeviceClass c;
  c.name = "gpu";
  c.selectors.push_back("device.driver == \"gpu.example.com\"");
  return c;
}

// Claim `name` in namespace "default" with one request "gpus" for `count` devices of "gpu",
// defaulted as the API server would.
inline ResourceClaim Claim(const std::string& name, int64_t count) {
  ResourceClaim c;
  c.name = name;
  c.namespace_name = "default";
  DeviceRequest r;
  r.name = "gpus";
  r.exactly = RequestSpec{};
  r.exactly->name = "gpus";
  r.exactly->device_class_name = "gpu";
  r.exactly->count = count;
  c.requests.push_back(std::move(r));
  DefaultClaim(c);
  return c;
}

}  // namespace draco::alloc::testing
