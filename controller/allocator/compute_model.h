// Input and output model of the allocator: the subset of resource.k8s.io/v1 and core/v1 that
// structured-parameters allocation reads, with presence (pointer vs. unset) preserved wherever
// upstream's Go code distinguishes nil from empty.
//
// These are plain value types (thread-compatible). They are the allocator's own compute format;
// `from_api.h` builds them from the api model (the controller, simulate and the oracle scenario
// protocol).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "controller/allocator/features.h"
#include "controller/api/quantity.h"

namespace draco::alloc {

// Exact quantity arithmetic in units of 1e-9 (every parsed Quantity is a whole number of nano
// units because parsing rounds finer values up). Values beyond about 1.7e29 saturate.
__extension__ using Amount = __int128;

// A Quantity as it appeared in the input: `q` keeps upstream's textual form (for output), `nanos`
// is its exact value for arithmetic.
struct Qty {
  api::Quantity q;
  Amount nanos = 0;

  // Parses like resource.ParseQuantity.
  static StatusOr<Qty> Parse(std::string_view s);
  // resource.NewQuantity(v, format).
  static Qty FromInt64(int64_t v, api::Quantity::Format format);
  // An already parsed quantity: its value is that of its canonical text (equal to parsing the
  // text it was parsed from).
  static Qty FromQuantity(api::Quantity q);
  // Go's Quantity.Value(): rounded away from zero to an integer, saturated to int64.
  int64_t Value() const;
  // Go's Quantity.MilliValue(), same rounding.
  int64_t MilliValue() const;
  std::string ToString() const { return q.ToString(); }
};

inline bool operator==(const Qty& a, const Qty& b) { return a.nanos == b.nanos; }
inline bool operator<(const Qty& a, const Qty& b) { return a.nanos < b.nanos; }

// core/v1 NodeSelectorRequirement / Term / Selector.
struct NodeSelectorRequirement {
  std::string key;
  std::string op;  // In, NotIn, Exists, DoesNotExist, Gt, Lt (anything else is a parse error)
  std::vector<std::string> values;
  friend bool operator==(const NodeSelectorRequirement&, const NodeSelectorRequirement&) = default;
};
struct NodeSelectorTerm {
  std::vector<NodeSelectorRequirement> match_expressions;
  std::vector<NodeSelectorRequirement> match_fields;
  friend bool operator==(const NodeSelectorTerm&, const NodeSelectorTerm&) = default;
};
struct NodeSelector {
  std::vector<NodeSelectorTerm> terms;
  friend bool operator==(const NodeSelector&, const NodeSelector&) = default;
};

// The parts of a core/v1 Node that allocation looks at.
struct Node {
  std::string name;
  std::map<std::string, std::string> labels;
  std::vector<std::string> declared_features;  // status.declaredFeatures
  friend bool operator==(const Node&, const Node&) = default;
};

// resource.k8s.io/v1 DeviceAttribute: exactly one member is meaningful (kind).
struct Attribute {
  enum class Kind : uint8_t {
    kNone,
    kInt,
    kBool,
    kString,
    kVersion,
    kInts,
    kBools,
    kStrings,
    kVersions
  };
  Kind kind = Kind::kNone;
  int64_t i = 0;
  bool b = false;
  std::string s;  // string or version
  std::vector<int64_t> ints;
  std::vector<bool> bools;
  std::vector<std::string> strs;  // strings or versions
  bool IsList() const { return kind >= Kind::kInts; }
  friend bool operator==(const Attribute&, const Attribute&) = default;
};

struct CapacityRange {
  std::optional<Qty> min, max, step;
  friend bool operator==(const CapacityRange&, const CapacityRange&) = default;
};
struct CapacityRequestPolicy {
  std::optional<Qty> default_value;
  std::vector<Qty> valid_values;  // nil and empty are equivalent for every upstream check
  bool has_valid_values = false;  // non-nil (upstream's calculateConsumedCapacity checks nil)
  std::optional<CapacityRange> valid_range;
  friend bool operator==(const CapacityRequestPolicy&, const CapacityRequestPolicy&) = default;
};
struct DeviceCapacity {
  Qty value;
  std::optional<CapacityRequestPolicy> request_policy;
  friend bool operator==(const DeviceCapacity&, const DeviceCapacity&) = default;
};

struct DeviceTaint {
  std::string key, value, effect;
  friend bool operator==(const DeviceTaint&, const DeviceTaint&) = default;
};
struct DeviceToleration {
  std::string key, op, value, effect;
  std::optional<int64_t> toleration_seconds;
  friend bool operator==(const DeviceToleration&, const DeviceToleration&) = default;
};

struct CounterConsumption {
  std::string counter_set;
  std::vector<std::pair<std::string, Qty>> counters;
  std::vector<std::string> compatibility_groups;
  friend bool operator==(const CounterConsumption&, const CounterConsumption&) = default;
};

struct Device {
  std::string name;
  std::vector<std::pair<std::string, Attribute>> attributes;     // sorted by name
  std::vector<std::pair<std::string, DeviceCapacity>> capacity;  // sorted by name
  std::vector<CounterConsumption> consumes_counters;
  std::optional<std::string> node_name;
  std::optional<NodeSelector> node_selector;
  std::optional<bool> all_nodes;
  std::vector<DeviceTaint> taints;
  std::optional<bool> binds_to_node;
  std::optional<std::vector<std::string>> binding_conditions;
  std::optional<std::vector<std::string>> binding_failure_conditions;
  std::optional<bool> allow_multiple_allocations;

  const Attribute* FindAttribute(std::string_view name) const;
  const DeviceCapacity* FindCapacity(std::string_view name) const;
  friend bool operator==(const Device&, const Device&) = default;
};

struct CounterSet {
  std::string name;
  std::vector<std::pair<std::string, Qty>> counters;  // sorted by name
  friend bool operator==(const CounterSet&, const CounterSet&) = default;
};

struct ResourceSlice {
  // The fields Snapshot::Build reads for every slice come first (fewer cache lines per slice).
  std::string driver;
  std::string pool;
  std::optional<std::string> node_name;
  std::vector<Device> devices;
  std::string name;
  int64_t generation = 0;
  int64_t resource_slice_count = 0;
  std::optional<NodeSelector> node_selector;
  std::optional<bool> all_nodes;
  std::optional<bool> per_device_node_selection;
  std::vector<CounterSet> shared_counters;
  std::vector<std::string> skip_node_operations;
  friend bool operator==(const ResourceSlice&, const ResourceSlice&) = default;
};

// Opaque configuration, kept as raw JSON text of `parameters`.
struct OpaqueConfig {
  std::string driver;
  std::string parameters_json;  // canonical compact JSON, "" when absent
  friend bool operator==(const OpaqueConfig&, const OpaqueConfig&) = default;
};

struct DeviceClass {
  std::string name;
  std::map<std::string, std::string> labels;  // metadata.labels (AllocationPolicy selection)
  std::vector<std::string> selectors;         // CEL expressions; "" marks a selector without `cel`
  std::vector<OpaqueConfig> config;           // entries without `opaque` keep an empty driver
  std::vector<bool> config_has_opaque;
  // spec.extendedResourceName and metadata.creationTimestamp (KEP-5004 name mapping).
  std::string extended_resource_name;
  std::string creation_timestamp;
  friend bool operator==(const DeviceClass&, const DeviceClass&) = default;
};

// One `exactly` request or one `firstAvailable` entry.
struct RequestSpec {
  std::string name;
  std::string device_class_name;
  std::vector<std::string> selectors;  // "" marks a selector without `cel`
  std::string allocation_mode;         // as given (defaulted to ExactCount by the harness)
  int64_t count = 0;
  std::optional<bool> admin_access;  // only for `exactly`
  std::vector<DeviceToleration> tolerations;
  bool has_capacity = false;                                   // `capacity` present (even if empty)
  std::vector<std::pair<std::string, Qty>> capacity_requests;  // sorted by name
  bool has_derived_attributes = false;
  // DRADerivedAttributes: (fully qualified attribute name, CEL expression), in request order.
  std::vector<std::pair<std::string, std::string>> derived_attributes;
  friend bool operator==(const RequestSpec&, const RequestSpec&) = default;
};

struct DeviceRequest {
  std::string name;
  std::optional<RequestSpec> exactly;
  std::vector<RequestSpec> first_available;
  friend bool operator==(const DeviceRequest&, const DeviceRequest&) = default;
};

struct DeviceConstraint {
  std::vector<std::string> requests;
  std::optional<std::string> match_attribute;
  std::optional<std::string> distinct_attribute;
  friend bool operator==(const DeviceConstraint&, const DeviceConstraint&) = default;
};

struct ClaimConfig {
  std::vector<std::string> requests;
  bool has_opaque = false;
  OpaqueConfig opaque;
  friend bool operator==(const ClaimConfig&, const ClaimConfig&) = default;
};

struct DeviceRequestAllocationResult {
  std::string request, driver, pool, device;
  std::optional<bool> admin_access;
  std::vector<DeviceToleration> tolerations;
  std::vector<std::string> binding_conditions;
  std::vector<std::string> binding_failure_conditions;
  std::optional<std::string> share_id;
  std::vector<std::pair<std::string, Qty>> consumed_capacity;  // sorted by name
  bool has_consumed_capacity = false;
  std::vector<std::string> skip_node_operations;
  friend bool operator==(const DeviceRequestAllocationResult&,
                         const DeviceRequestAllocationResult&) = default;
};

struct AllocationConfig {
  std::string source;  // FromClass / FromClaim
  std::vector<std::string> requests;
  bool has_opaque = false;
  OpaqueConfig opaque;
  friend bool operator==(const AllocationConfig&, const AllocationConfig&) = default;
};

struct AllocationResult {
  std::vector<DeviceRequestAllocationResult> results;
  std::vector<AllocationConfig> config;
  std::optional<NodeSelector> node_selector;
  friend bool operator==(const AllocationResult&, const AllocationResult&) = default;
};

struct ResourceClaim {
  std::string namespace_name;
  std::string name;
  std::string uid;
  std::map<std::string, std::string> annotations;
  std::vector<DeviceRequest> requests;
  std::vector<DeviceConstraint> constraints;
  std::vector<ClaimConfig> config;
  std::optional<AllocationResult> allocation;  // status.allocation
  std::vector<std::string> reserved_for;       // status.reservedFor[].name (informational)
  friend bool operator==(const ResourceClaim&, const ResourceClaim&) = default;
};

struct DeviceTaintRule {
  std::string name;
  bool has_selector = false;
  std::optional<std::string> driver, pool, device;
  DeviceTaint taint;

  // Whether the rule's selector picks this device (as upstream, a rule without a selector picks
  // none; an unset field matches any value).
  bool Selects(std::string_view drv, std::string_view pl, std::string_view dev) const {
    return has_selector && (!driver || *driver == drv) && (!pool || *pool == pl) &&
           (!device || *device == dev);
  }
  friend bool operator==(const DeviceTaintRule&, const DeviceTaintRule&) = default;
};

// draco.dev/v1alpha1 AllocationPolicy (crds/draco.dev_allocationpolicies.yaml).
struct LabelSelectorRequirement {
  std::string key;
  std::string op;  // In, NotIn, Exists, DoesNotExist
  std::vector<std::string> values;
  friend bool operator==(const LabelSelectorRequirement&,
                         const LabelSelectorRequirement&) = default;
};
enum class Strategy : uint8_t { kFirstFit, kBinPack, kSpread };
std::string_view StrategyName(Strategy s);
struct NamespaceLimit {
  std::string namespace_name;  // a namespace, or "*" for every namespace without its own entry
  std::optional<int64_t> max_devices;
  std::vector<std::pair<std::string, Qty>> max_capacity;  // sorted by name
  friend bool operator==(const NamespaceLimit&, const NamespaceLimit&) = default;
};
struct AllocationPolicy {
  std::string name;
  std::optional<std::vector<std::string>> class_names;  // deviceClassSelector.names
  bool has_label_selector = false;                      // deviceClassSelector.labelSelector
  std::map<std::string, std::string> match_labels;
  std::vector<LabelSelectorRequirement> match_expressions;
  Strategy strategy = Strategy::kFirstFit;
  int32_t priority = 0;
  std::vector<NamespaceLimit> namespace_limits;

  // Whether deviceClassSelector selects `cls`.
  bool Selects(const DeviceClass& cls) const;
  // The limit entry for `ns` (its own entry, else "*"), or null.
  const NamespaceLimit* LimitFor(std::string_view ns) const;
  friend bool operator==(const AllocationPolicy&, const AllocationPolicy&) = default;
};

// API-server defaulting of a claim (and of allocation-result tolerations): allocationMode ""
// -> ExactCount, count 0 with ExactCount -> 1, toleration operator "" -> Equal.
void DefaultClaim(ResourceClaim& claim);

}  // namespace draco::alloc
