// Kubernetes JSON <-> allocator model (model.h).
//
// Decoding follows encoding/json + k8s.io/api semantics where they matter to allocation: field
// names are case-sensitive, unknown fields are ignored, `null` equals absent, and presence of
// optional pointers is kept. Quantities are parsed with upstream's rules; an invalid quantity is an
// INVALID_ARGUMENT error naming the field.
//
// All functions are thread-safe (no shared state).
#pragma once

#include <string>

#include <rapidjson/document.h>

#include "base/status.h"
#include "controller/allocator/model.h"

namespace draco::alloc {

StatusOr<Node> DecodeNode(const rapidjson::Value& v);
StatusOr<ResourceSlice> DecodeResourceSlice(const rapidjson::Value& v);
StatusOr<DeviceClass> DecodeDeviceClass(const rapidjson::Value& v);
StatusOr<ResourceClaim> DecodeResourceClaim(const rapidjson::Value& v);
// Decodes a ResourceClaimTemplate's spec.spec into a claim named `name` (no status).
StatusOr<ResourceClaim> DecodeClaimTemplateSpec(const rapidjson::Value& template_obj);
// draco.dev/v1alpha1 AllocationPolicy; enforces the CRD's structural rules that matter here.
StatusOr<AllocationPolicy> DecodeAllocationPolicy(const rapidjson::Value& v);
StatusOr<DeviceTaintRule> DecodeDeviceTaintRule(const rapidjson::Value& v);
StatusOr<AllocationResult> DecodeAllocationResult(const rapidjson::Value& v);

}  // namespace draco::alloc
