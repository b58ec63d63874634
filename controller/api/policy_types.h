// Plain C++ model of draco's own draco.dev/v1alpha1 AllocationPolicy (the CRD in
// crds/draco.dev_allocationpolicies.yaml): which DeviceClasses a policy governs, its strategy and
// priority, and its per-namespace limits. Same conventions as types.h; the codec (codec.h)
// decodes and encodes it. The CRD's structural rules (exactly one selector form, known strategy
// and operators, namespaced limits) are checked where the allocator's form is built
// (alloc::ToAllocPolicy), not by the codec.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "controller/api/types.h"

namespace draco::api {

inline constexpr const char* kDracoGroup = "draco.dev";
inline constexpr const char* kAllocationPolicyVersion = "v1alpha1";

// spec.deviceClassSelector: exactly one of the two should be set.
struct DeviceClassSelector {
  std::optional<std::vector<std::string>> names;
  std::optional<LabelSelector> label_selector;
  UnknownFields unknown;
  friend bool operator==(const DeviceClassSelector&, const DeviceClassSelector&) = default;
};

// spec.namespaceLimits[]: `namespace` is a namespace or "*" (every namespace without its own).
struct NamespaceLimit {
  std::string namespace_;  // "namespace"
  std::optional<int64_t> max_devices;
  std::map<std::string, Quantity> max_capacity;
  UnknownFields unknown;
  friend bool operator==(const NamespaceLimit&, const NamespaceLimit&) = default;
};

struct AllocationPolicySpec {
  std::optional<DeviceClassSelector> device_class_selector;  // required
  std::string strategy;                                      // FirstFit (default) BinPack Spread
  int64_t priority = 0;
  std::vector<NamespaceLimit> namespace_limits;
  UnknownFields unknown;
  friend bool operator==(const AllocationPolicySpec&, const AllocationPolicySpec&) = default;
};

struct AllocationPolicy {
  std::string api_version = "draco.dev/v1alpha1";
  std::string kind = "AllocationPolicy";
  ObjectMeta metadata;
  std::optional<AllocationPolicySpec> spec;  // required
  UnknownFields unknown;
  friend bool operator==(const AllocationPolicy&, const AllocationPolicy&) = default;
};

}  // namespace draco::api
