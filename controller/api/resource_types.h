// resource.k8s.io/v1 types (see types.h for the conventions): DeviceClass, ResourceClaim (spec
// and status), ResourceClaimTemplate, ResourceSlice and DeviceTaintRule, with the shared device
// selector / toleration / taint pieces and their matching rules. Part of the umbrella header
// controller/api/types.h; includers normally include that.
//
// All types are value types: thread-compatible, no hidden sharing. The free functions are pure.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "controller/api/core_types.h"
#include "controller/api/meta_types.h"
#include "controller/api/quantity.h"

namespace draco::api {

// ---------------------------------------------------------------------------------------------
// resource.k8s.io/v1: shared pieces

struct CELDeviceSelector {
  std::string expression;
  UnknownFields unknown;
  friend bool operator==(const CELDeviceSelector&, const CELDeviceSelector&) = default;
};

struct DeviceSelector {
  std::optional<CELDeviceSelector> cel;
  UnknownFields unknown;
  friend bool operator==(const DeviceSelector&, const DeviceSelector&) = default;
};

struct OpaqueDeviceConfiguration {
  std::string driver;
  RawJson parameters;  // must be a JSON object
  UnknownFields unknown;
  friend bool operator==(const OpaqueDeviceConfiguration&,
                         const OpaqueDeviceConfiguration&) = default;
};

struct DeviceToleration {
  std::string key;
  std::string operator_;  // "operator": Equal (default) | Exists
  std::string value;
  std::string effect;  // "" (all) | None | NoSchedule | NoExecute
  std::optional<int64_t> toleration_seconds;
  UnknownFields unknown;
  friend bool operator==(const DeviceToleration&, const DeviceToleration&) = default;
};

struct DeviceTaint {
  std::string key;
  std::string value;
  std::string effect;  // None | NoSchedule | NoExecute
  std::optional<std::string> time_added;
  UnknownFields unknown;
  friend bool operator==(const DeviceTaint&, const DeviceTaint&) = default;
};

// Upstream resourceclaim.ToleratesTaint semantics.
bool DeviceTolerationToleratesTaint(const DeviceToleration& t, const DeviceTaint& taint);

// ---------------------------------------------------------------------------------------------
// DeviceClass

struct DeviceClassConfiguration {
  std::optional<OpaqueDeviceConfiguration> opaque;
  UnknownFields unknown;
  friend bool operator==(const DeviceClassConfiguration&,
                         const DeviceClassConfiguration&) = default;
};

struct DeviceClassSpec {
  std::vector<DeviceSelector> selectors;
  std::vector<DeviceClassConfiguration> config;
  std::optional<std::string> extended_resource_name;
  UnknownFields unknown;
  friend bool operator==(const DeviceClassSpec&, const DeviceClassSpec&) = default;
};

struct DeviceClass {
  std::string api_version = "resource.k8s.io/v1";
  std::string kind = "DeviceClass";
  ObjectMeta metadata;
  DeviceClassSpec spec;
  UnknownFields unknown;
  friend bool operator==(const DeviceClass&, const DeviceClass&) = default;
};

// ---------------------------------------------------------------------------------------------
// ResourceClaim spec

inline constexpr std::string_view kAllocationModeExactCount = "ExactCount";
inline constexpr std::string_view kAllocationModeAll = "All";

struct CapacityRequirements {
  std::map<std::string, Quantity> requests;
  UnknownFields unknown;
  friend bool operator==(const CapacityRequirements&, const CapacityRequirements&) = default;
};

// DRADerivedAttributes: an attribute computed for the request's devices by a CEL expression.
struct DerivedAttribute {
  std::string name;  // fully qualified attribute name
  std::string expression;
  UnknownFields unknown;
  friend bool operator==(const DerivedAttribute&, const DerivedAttribute&) = default;
};

struct ExactDeviceRequest {
  std::string device_class_name;
  std::vector<DeviceSelector> selectors;
  std::string allocation_mode;   // "" means ExactCount (defaulting)
  std::optional<int64_t> count;  // defaults to 1 for ExactCount
  std::optional<bool> admin_access;
  std::vector<DeviceToleration> tolerations;
  std::optional<CapacityRequirements> capacity;
  std::vector<DerivedAttribute> derived_attributes;
  UnknownFields unknown;
  friend bool operator==(const ExactDeviceRequest&, const ExactDeviceRequest&) = default;
};

struct DeviceSubRequest {
  std::string name;
  std::string device_class_name;
  std::vector<DeviceSelector> selectors;
  std::string allocation_mode;
  std::optional<int64_t> count;
  std::vector<DeviceToleration> tolerations;
  std::optional<CapacityRequirements> capacity;
  std::vector<DerivedAttribute> derived_attributes;
  UnknownFields unknown;
  friend bool operator==(const DeviceSubRequest&, const DeviceSubRequest&) = default;
};

struct DeviceRequest {
  std::string name;
  std::optional<ExactDeviceRequest> exactly;
  std::vector<DeviceSubRequest> first_available;
  UnknownFields unknown;
  friend bool operator==(const DeviceRequest&, const DeviceRequest&) = default;
};

struct DeviceConstraint {
  std::vector<std::string> requests;
  std::optional<std::string> match_attribute;
  std::optional<std::string> distinct_attribute;
  UnknownFields unknown;
  friend bool operator==(const DeviceConstraint&, const DeviceConstraint&) = default;
};

struct DeviceClaimConfiguration {
  std::vector<std::string> requests;
  std::optional<OpaqueDeviceConfiguration> opaque;
  UnknownFields unknown;
  friend bool operator==(const DeviceClaimConfiguration&,
                         const DeviceClaimConfiguration&) = default;
};

struct DeviceClaim {
  std::vector<DeviceRequest> requests;
  std::vector<DeviceConstraint> constraints;
  std::vector<DeviceClaimConfiguration> config;
  UnknownFields unknown;
  friend bool operator==(const DeviceClaim&, const DeviceClaim&) = default;
};

struct ResourceClaimSpec {
  DeviceClaim devices;
  UnknownFields unknown;
  friend bool operator==(const ResourceClaimSpec&, const ResourceClaimSpec&) = default;
};

// ---------------------------------------------------------------------------------------------
// ResourceClaim status

struct DeviceRequestAllocationResult {
  std::string request;  // "<req>" or "<req>/<sub>"
  std::string driver;
  std::string pool;
  std::string device;
  std::optional<bool> admin_access;
  std::vector<DeviceToleration> tolerations;
  std::vector<std::string> binding_conditions;
  std::vector<std::string> binding_failure_conditions;
  std::optional<std::string> share_id;  // "shareID"
  std::map<std::string, Quantity> consumed_capacity;
  std::vector<std::string> skip_node_operations;
  UnknownFields unknown;
  friend bool operator==(const DeviceRequestAllocationResult&,
                         const DeviceRequestAllocationResult&) = default;
};

inline constexpr std::string_view kAllocationConfigSourceClass = "FromClass";
inline constexpr std::string_view kAllocationConfigSourceClaim = "FromClaim";

struct DeviceAllocationConfiguration {
  std::string source;  // FromClass | FromClaim
  std::vector<std::string> requests;
  std::optional<OpaqueDeviceConfiguration> opaque;
  UnknownFields unknown;
  friend bool operator==(const DeviceAllocationConfiguration&,
                         const DeviceAllocationConfiguration&) = default;
};

struct DeviceAllocationResult {
  std::vector<DeviceRequestAllocationResult> results;
  std::vector<DeviceAllocationConfiguration> config;
  UnknownFields unknown;
  friend bool operator==(const DeviceAllocationResult&, const DeviceAllocationResult&) = default;
};

struct AllocationResult {
  DeviceAllocationResult devices;
  std::optional<NodeSelector> node_selector;  // absent = available on all nodes
  std::optional<std::string> allocation_timestamp;
  UnknownFields unknown;
  friend bool operator==(const AllocationResult&, const AllocationResult&) = default;
};

struct ResourceClaimConsumerReference {
  std::string api_group;
  std::string resource;
  std::string name;
  std::string uid;
  UnknownFields unknown;
  friend bool operator==(const ResourceClaimConsumerReference&,
                         const ResourceClaimConsumerReference&) = default;
};

struct NetworkDeviceData {
  std::string interface_name;
  std::vector<std::string> ips;
  std::string hardware_address;
  UnknownFields unknown;
  friend bool operator==(const NetworkDeviceData&, const NetworkDeviceData&) = default;
};

struct AllocatedDeviceStatus {
  std::string driver;
  std::string pool;
  std::string device;
  std::optional<std::string> share_id;  // "shareID"
  std::vector<Condition> conditions;
  RawJson data;
  std::optional<NetworkDeviceData> network_data;
  UnknownFields unknown;
  friend bool operator==(const AllocatedDeviceStatus&, const AllocatedDeviceStatus&) = default;
};

struct ResourceClaimStatus {
  std::optional<AllocationResult> allocation;
  std::vector<ResourceClaimConsumerReference> reserved_for;
  std::vector<AllocatedDeviceStatus> devices;
  UnknownFields unknown;
  friend bool operator==(const ResourceClaimStatus&, const ResourceClaimStatus&) = default;
};

struct ResourceClaim {
  std::string api_version = "resource.k8s.io/v1";
  std::string kind = "ResourceClaim";
  ObjectMeta metadata;
  ResourceClaimSpec spec;
  ResourceClaimStatus status;
  UnknownFields unknown;
  friend bool operator==(const ResourceClaim&, const ResourceClaim&) = default;
};

struct ResourceClaimTemplateSpec {
  ObjectMeta metadata;  // only labels and annotations are copied into claims
  ResourceClaimSpec spec;
  UnknownFields unknown;
  friend bool operator==(const ResourceClaimTemplateSpec&,
                         const ResourceClaimTemplateSpec&) = default;
};

struct ResourceClaimTemplate {
  std::string api_version = "resource.k8s.io/v1";
  std::string kind = "ResourceClaimTemplate";
  ObjectMeta metadata;
  ResourceClaimTemplateSpec spec;
  UnknownFields unknown;
  friend bool operator==(const ResourceClaimTemplate&, const ResourceClaimTemplate&) = default;
};

// ---------------------------------------------------------------------------------------------
// ResourceSlice

struct ResourcePool {
  std::string name;
  int64_t generation = 0;
  int64_t resource_slice_count = 0;
  UnknownFields unknown;
  friend bool operator==(const ResourcePool&, const ResourcePool&) = default;
};

// Exactly one member should be set (validation enforces it). The list forms are the 1.36 alpha
// list attributes (DRAListTypeAttributes).
struct DeviceAttribute {
  std::optional<int64_t> int_value;          // "int"
  std::optional<bool> bool_value;            // "bool"
  std::optional<std::string> string_value;   // "string"
  std::optional<std::string> version_value;  // "version"
  std::optional<std::vector<int64_t>> ints;
  std::optional<std::vector<bool>> bools;
  std::optional<std::vector<std::string>> strings;
  std::optional<std::vector<std::string>> versions;
  UnknownFields unknown;
  friend bool operator==(const DeviceAttribute&, const DeviceAttribute&) = default;
};

struct CapacityRequestPolicyRange {
  std::optional<Quantity> min;  // required by validation; absent is kept apart from zero
  std::optional<Quantity> max;
  std::optional<Quantity> step;
  UnknownFields unknown;
  friend bool operator==(const CapacityRequestPolicyRange&,
                         const CapacityRequestPolicyRange&) = default;
};

struct CapacityRequestPolicy {
  std::optional<Quantity> default_;                   // "default"
  std::optional<std::vector<Quantity>> valid_values;  // nil and [] differ for the allocator
  std::optional<CapacityRequestPolicyRange> valid_range;
  UnknownFields unknown;
  friend bool operator==(const CapacityRequestPolicy&, const CapacityRequestPolicy&) = default;
};

struct DeviceCapacity {
  Quantity value;
  std::optional<CapacityRequestPolicy> request_policy;
  UnknownFields unknown;
  friend bool operator==(const DeviceCapacity&, const DeviceCapacity&) = default;
};

struct Counter {
  Quantity value;
  UnknownFields unknown;
  friend bool operator==(const Counter&, const Counter&) = default;
};

struct CounterSet {
  std::string name;
  std::map<std::string, Counter> counters;
  UnknownFields unknown;
  friend bool operator==(const CounterSet&, const CounterSet&) = default;
};

struct DeviceCounterConsumption {
  std::string counter_set;
  std::map<std::string, Counter> counters;
  std::vector<std::string> compatibility_groups;  // DRACompatibilityGroups (alpha)
  UnknownFields unknown;
  friend bool operator==(const DeviceCounterConsumption&,
                         const DeviceCounterConsumption&) = default;
};

struct Device {
  std::string name;
  std::map<std::string, DeviceAttribute> attributes;  // QualifiedName -> value
  std::map<std::string, DeviceCapacity> capacity;     // QualifiedName -> capacity
  std::vector<DeviceCounterConsumption> consumes_counters;
  std::optional<std::string> node_name;
  std::optional<NodeSelector> node_selector;
  std::optional<bool> all_nodes;
  std::vector<DeviceTaint> taints;
  std::optional<bool> binds_to_node;
  // nil and [] differ for the allocator (a pool with any non-nil list is tried last).
  std::optional<std::vector<std::string>> binding_conditions;
  std::optional<std::vector<std::string>> binding_failure_conditions;
  std::optional<bool> allow_multiple_allocations;
  UnknownFields unknown;  // nodeAllocatableResources, ...
  friend bool operator==(const Device&, const Device&) = default;
};

struct ResourceSliceSpec {
  std::string driver;
  ResourcePool pool;
  std::optional<std::string> node_name;
  std::optional<NodeSelector> node_selector;
  std::optional<bool> all_nodes;
  std::vector<Device> devices;
  std::optional<bool> per_device_node_selection;
  std::vector<CounterSet> shared_counters;
  std::vector<std::string> skip_node_operations;  // DRAOptionalNodeOperations (alpha)
  UnknownFields unknown;                          // partitionTypeAttribute, ...
  friend bool operator==(const ResourceSliceSpec&, const ResourceSliceSpec&) = default;
};

struct ResourceSlice {
  std::string api_version = "resource.k8s.io/v1";
  std::string kind = "ResourceSlice";
  ObjectMeta metadata;
  ResourceSliceSpec spec;
  UnknownFields unknown;
  friend bool operator==(const ResourceSlice&, const ResourceSlice&) = default;
};

// ---------------------------------------------------------------------------------------------
// DeviceTaintRule

struct DeviceTaintSelector {
  std::optional<std::string> driver;
  std::optional<std::string> pool;
  std::optional<std::string> device;
  UnknownFields unknown;
  friend bool operator==(const DeviceTaintSelector&, const DeviceTaintSelector&) = default;
};

struct DeviceTaintRuleSpec {
  std::optional<DeviceTaintSelector> device_selector;  // absent matches no device
  DeviceTaint taint;
  UnknownFields unknown;
  friend bool operator==(const DeviceTaintRuleSpec&, const DeviceTaintRuleSpec&) = default;
};

struct DeviceTaintRuleStatus {
  std::vector<Condition> conditions;
  UnknownFields unknown;
  friend bool operator==(const DeviceTaintRuleStatus&, const DeviceTaintRuleStatus&) = default;
};

struct DeviceTaintRule {
  std::string api_version = "resource.k8s.io/v1";
  std::string kind = "DeviceTaintRule";
  ObjectMeta metadata;
  DeviceTaintRuleSpec spec;
  DeviceTaintRuleStatus status;
  UnknownFields unknown;
  friend bool operator==(const DeviceTaintRule&, const DeviceTaintRule&) = default;
};

// True when `selector` (which must be present) selects the device; empty fields match anything.
bool DeviceTaintSelectorMatches(const DeviceTaintSelector& selector, std::string_view driver,
                                std::string_view pool, std::string_view device);

}  // namespace draco::api
