// Validation of resource.k8s.io/v1 objects with upstream's limits (pkg/apis/resource/validation,
// k8s.io/api resource/v1 constants). Messages name the field path and follow upstream's
// field.Error wording ("Required value", "Invalid value", "Too many", "Duplicate value",
// "Unsupported value", "Forbidden").
//
// Implemented limits (constant names as upstream):
//   DeviceRequestsMaxSize 32, FirstAvailableDeviceRequestMaxSize 8, DeviceSelectorsMaxSize 32,
//   DeviceConstraintsMaxSize 32 (and 32 request refs per constraint), DeviceConfigMaxSize 32,
//   class config 32, DeviceTolerationsMaxLength 16, CELSelectorExpressionMaxLength 10240,
//   OpaqueParametersMaxLength 10240 (JSON object), AllocationResultsMaxSize 32,
//   allocation config 64, BindingConditionsMaxSize / BindingFailureConditionsMaxSize 4,
//   ResourceClaimReservedForMaxSize 256, AllocatedDeviceStatus conditions 8 / data 10240 /
//   networkData (interfaceName 256, ips 16, hardwareAddress 128), ResourceSliceMaxDevices 128,
//   ResourceSliceMaxDevicesWithAdvancedFeatures 64, ResourceSliceMaxCounterSets 8,
//   ResourceSliceMaxCountersPerCounterSet 32, ResourceSliceMaxDeviceCounterConsumptions 2,
//   ResourceSliceMaxAttributesAndCapacitiesPerDevice 32, ResourceSliceMaxAttributeValuesPerDevice
//   48, DeviceAttributeMaxValueLength 64, DeviceTaintsMaxLength 16, CapacityRequestPolicy
//   validValues 10, pool name 253, driver name 63, C identifier 32, DNS label 63, DNS subdomain
//   253, label name/value formats; allocationMode/count rules; exactly-one-of rules for
//   exactly/firstAvailable, matchAttribute/distinctAttribute, slice node selection and per-device
//   node selection; binding-condition pairing; requestPolicy consistency.
// Not implemented: CEL compilation and cost estimation (the CEL module owns those), ratcheting of
// unchanged stored fields, update/immutability rules, feature-gate switches.
//
// Thread-safe (pure functions).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "controller/api/types.h"

namespace draco::api {

struct FieldError {
  std::string path;     // e.g. "spec.devices.requests[0].name"
  std::string message;  // e.g. "Required value"
  std::string ToString() const { return path + ": " + message; }
};
using FieldErrors = std::vector<FieldError>;

FieldErrors ValidateDeviceClass(const DeviceClass& obj);
FieldErrors ValidateResourceClaim(const ResourceClaim& obj);  // spec and status
FieldErrors ValidateResourceClaimSpec(const ResourceClaimSpec& spec, const std::string& path);
FieldErrors ValidateResourceClaimTemplate(const ResourceClaimTemplate& obj);
FieldErrors ValidateResourceSlice(const ResourceSlice& obj);
FieldErrors ValidateDeviceTaintRule(const DeviceTaintRule& obj);

// OK when `errors` is empty, else INVALID_ARGUMENT listing all errors joined by "; ".
Status ToStatus(const FieldErrors& errors);

// Name formats (exposed for reuse and tests).
bool IsDnsLabel(std::string_view s);
bool IsDnsSubdomain(std::string_view s);
bool IsCIdentifier(std::string_view s);
bool IsLabelName(std::string_view s);           // a label key: [prefix/]name
bool IsLabelValue(std::string_view s);          // may be empty
bool IsQualifiedName(std::string_view s);       // [domain/]C identifier
bool IsFullyQualifiedName(std::string_view s);  // domain/C identifier
bool IsStrictSemver(std::string_view s);

}  // namespace draco::api
