// Plain C++ model of the Kubernetes objects draco reads and writes: resource.k8s.io/v1
// (DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice, DeviceTaintRule) and the
// parts of core/v1 Pod and Node the controller needs.
//
// Conventions:
// - Members are the snake_case form of the JSON field name (deviceClassName ->
//   device_class_name); the exact JSON names live in codec.cc and in the comments where they
//   differ in more than case.
// - Go pointers and `omitempty` scalars whose absence matters are std::optional; lists and maps
//   are empty when absent (the encoder omits empty lists/maps, like Go's omitempty).
// - Every object-valued struct has an `unknown` member holding JSON members the decoder did not
//   recognise, verbatim, so that decode -> modify -> encode does not drop fields added by newer
//   API servers (see codec.h).
// - Timestamps are kept as the RFC 3339 strings the API server sends.
//
// All types are value types: thread-compatible, no hidden sharing.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "controller/api/quantity.h"

namespace draco::api {

// JSON members not modelled by a struct: (name, compact JSON text) in document order.
struct UnknownFields {
  std::vector<std::pair<std::string, std::string>> members;
  bool empty() const { return members.empty(); }
  friend bool operator==(const UnknownFields&, const UnknownFields&) = default;
};

// An arbitrary JSON value kept as compact JSON text (e.g. opaque driver parameters).
struct RawJson {
  std::string json;  // empty = absent
  bool empty() const { return json.empty(); }
  friend bool operator==(const RawJson&, const RawJson&) = default;
};

using StringMap = std::map<std::string, std::string>;
using ResourceList = std::map<std::string, Quantity>;  // core/v1 ResourceList

// ---------------------------------------------------------------------------------------------
// meta/v1

struct OwnerReference {
  std::string api_version;  // apiVersion
  std::string kind;
  std::string name;
  std::string uid;
  std::optional<bool> controller;
  std::optional<bool> block_owner_deletion;
  UnknownFields unknown;
  friend bool operator==(const OwnerReference&, const OwnerReference&) = default;
};

struct ObjectMeta {
  std::string name;
  std::string generate_name;
  std::string namespace_;  // "namespace"
  std::string uid;
  std::string resource_version;
  int64_t generation = 0;
  std::string creation_timestamp;
  std::optional<std::string> deletion_timestamp;
  std::optional<int64_t> deletion_grace_period_seconds;
  StringMap labels;
  StringMap annotations;
  std::vector<OwnerReference> owner_references;
  std::vector<std::string> finalizers;
  UnknownFields unknown;  // managedFields etc.
  friend bool operator==(const ObjectMeta&, const ObjectMeta&) = default;
};

// metav1.Condition.
struct Condition {
  std::string type;
  std::string status;  // "True" | "False" | "Unknown"
  int64_t observed_generation = 0;
  std::string last_transition_time;
  std::string reason;
  std::string message;
  UnknownFields unknown;
  friend bool operator==(const Condition&, const Condition&) = default;
};

// ---------------------------------------------------------------------------------------------
// core/v1 node selection

struct NodeSelectorRequirement {
  std::string key;
  std::string operator_;  // "operator": In NotIn Exists DoesNotExist Gt Lt
  std::vector<std::string> values;
  UnknownFields unknown;
  friend bool operator==(const NodeSelectorRequirement&, const NodeSelectorRequirement&) = default;
};

struct NodeSelectorTerm {
  std::vector<NodeSelectorRequirement> match_expressions;
  std::vector<NodeSelectorRequirement> match_fields;  // only metadata.name, In/NotIn, one value
  UnknownFields unknown;
  friend bool operator==(const NodeSelectorTerm&, const NodeSelectorTerm&) = default;
};

struct NodeSelector {
  std::vector<NodeSelectorTerm> node_selector_terms;
  UnknownFields unknown;
  friend bool operator==(const NodeSelector&, const NodeSelector&) = default;
};

// Upstream semantics (component-helpers nodeaffinity): requirements within a term are ANDed,
// terms are ORed; a term with no requirements matches nothing; a term with an invalid requirement
// (unknown operator, wrong value count, non-integer Gt/Lt value, a field other than
// metadata.name) matches nothing. An empty selector (no terms) matches nothing.
bool RequirementMatches(const NodeSelectorRequirement& r, const StringMap& labels);
bool TermMatches(const NodeSelectorTerm& term, const StringMap& labels, std::string_view node_name);
bool NodeSelectorMatches(const NodeSelector& selector, const StringMap& labels,
                         std::string_view node_name);

struct Taint {
  std::string key;
  std::string value;
  std::string effect;  // NoSchedule PreferNoSchedule NoExecute
  std::optional<std::string> time_added;
  UnknownFields unknown;
  friend bool operator==(const Taint&, const Taint&) = default;
};

struct Toleration {
  std::string key;
  std::string operator_;  // "operator": Equal (default) | Exists
  std::string value;
  std::string effect;
  std::optional<int64_t> toleration_seconds;
  UnknownFields unknown;
  friend bool operator==(const Toleration&, const Toleration&) = default;
};

// Upstream v1 Toleration.ToleratesTaint.
bool TolerationToleratesTaint(const Toleration& t, const Taint& taint);

// ---------------------------------------------------------------------------------------------
// meta/v1 LabelSelector and core/v1 pod scheduling constraints

struct LabelSelectorRequirement {
  std::string key;
  std::string operator_;  // "operator": In NotIn Exists DoesNotExist
  std::vector<std::string> values;
  UnknownFields unknown;
  friend bool operator==(const LabelSelectorRequirement&,
                         const LabelSelectorRequirement&) = default;
};

struct LabelSelector {
  StringMap match_labels;
  std::vector<LabelSelectorRequirement> match_expressions;
  UnknownFields unknown;
  friend bool operator==(const LabelSelector&, const LabelSelector&) = default;
};

struct PodAffinityTerm {
  std::optional<LabelSelector> label_selector;
  std::vector<std::string> namespaces;
  std::string topology_key;
  std::optional<LabelSelector> namespace_selector;
  std::vector<std::string> match_label_keys;
  std::vector<std::string> mismatch_label_keys;
  UnknownFields unknown;
  friend bool operator==(const PodAffinityTerm&, const PodAffinityTerm&) = default;
};

// podAffinity and podAntiAffinity share a shape; preferred terms stay in `unknown`.
struct PodAffinity {
  std::vector<PodAffinityTerm> required_during_scheduling_ignored_during_execution;
  UnknownFields unknown;
  friend bool operator==(const PodAffinity&, const PodAffinity&) = default;
};

struct TopologySpreadConstraint {
  int64_t max_skew = 0;
  std::string topology_key;
  std::string when_unsatisfiable;  // DoNotSchedule | ScheduleAnyway
  std::optional<LabelSelector> label_selector;
  std::optional<int64_t> min_domains;
  std::optional<std::string> node_affinity_policy;  // Honor (default) | Ignore
  std::optional<std::string> node_taints_policy;    // Honor | Ignore (default)
  std::vector<std::string> match_label_keys;
  UnknownFields unknown;
  friend bool operator==(const TopologySpreadConstraint&,
                         const TopologySpreadConstraint&) = default;
};

struct ContainerPort {
  std::string name;
  int64_t host_port = 0;
  int64_t container_port = 0;
  std::string protocol;  // TCP (default) UDP SCTP
  std::string host_ip;   // "hostIP"
  UnknownFields unknown;
  friend bool operator==(const ContainerPort&, const ContainerPort&) = default;
};

// Volume sources the scheduler looks at; every other source stays in Volume::unknown.
struct PersistentVolumeClaimVolumeSource {
  std::string claim_name;
  bool read_only = false;
  UnknownFields unknown;
  friend bool operator==(const PersistentVolumeClaimVolumeSource&,
                         const PersistentVolumeClaimVolumeSource&) = default;
};

struct GCEPersistentDiskVolumeSource {
  std::string pd_name;  // "pdName"
  bool read_only = false;
  UnknownFields unknown;
  friend bool operator==(const GCEPersistentDiskVolumeSource&,
                         const GCEPersistentDiskVolumeSource&) = default;
};

struct AWSElasticBlockStoreVolumeSource {
  std::string volume_id;  // "volumeID"
  bool read_only = false;
  UnknownFields unknown;
  friend bool operator==(const AWSElasticBlockStoreVolumeSource&,
                         const AWSElasticBlockStoreVolumeSource&) = default;
};

struct RBDVolumeSource {
  std::vector<std::string> monitors;
  std::string image;
  std::string pool;
  bool read_only = false;
  UnknownFields unknown;
  friend bool operator==(const RBDVolumeSource&, const RBDVolumeSource&) = default;
};

struct ISCSIVolumeSource {
  std::string target_portal;
  std::string iqn;
  int64_t lun = 0;
  bool read_only = false;
  UnknownFields unknown;
  friend bool operator==(const ISCSIVolumeSource&, const ISCSIVolumeSource&) = default;
};

struct CSIVolumeSource {
  std::string driver;
  bool read_only = false;
  UnknownFields unknown;
  friend bool operator==(const CSIVolumeSource&, const CSIVolumeSource&) = default;
};

// Generic ephemeral volume: its PVC is named <pod>-<volume>; the template stays in `unknown`.
struct EphemeralVolumeSource {
  UnknownFields unknown;
  friend bool operator==(const EphemeralVolumeSource&, const EphemeralVolumeSource&) = default;
};

struct Volume {
  std::string name;
  std::optional<PersistentVolumeClaimVolumeSource> persistent_volume_claim;
  std::optional<GCEPersistentDiskVolumeSource> gce_persistent_disk;  // "gcePersistentDisk"
  std::optional<AWSElasticBlockStoreVolumeSource>
      aws_elastic_block_store;  // "awsElasticBlockStore"
  std::optional<RBDVolumeSource> rbd;
  std::optional<ISCSIVolumeSource> iscsi;
  std::optional<CSIVolumeSource> csi;
  std::optional<EphemeralVolumeSource> ephemeral;
  UnknownFields unknown;
  friend bool operator==(const Volume&, const Volume&) = default;
};

// ---------------------------------------------------------------------------------------------
// core/v1 Pod (subset)

struct PodResourceClaim {
  std::string name;
  std::optional<std::string> resource_claim_name;
  std::optional<std::string> resource_claim_template_name;
  UnknownFields unknown;
  friend bool operator==(const PodResourceClaim&, const PodResourceClaim&) = default;
};

struct PodSchedulingGate {
  std::string name;
  UnknownFields unknown;
  friend bool operator==(const PodSchedulingGate&, const PodSchedulingGate&) = default;
};

// spec.schedulingGroup (1.36+): the PodGroup (scheduling.k8s.io) the pod belongs to.
struct PodSchedulingGroup {
  std::optional<std::string> pod_group_name;
  UnknownFields unknown;
  friend bool operator==(const PodSchedulingGroup&, const PodSchedulingGroup&) = default;
};

struct ResourceClaimRef {  // core/v1 ResourceClaim (container.resources.claims[])
  std::string name;
  std::string request;
  UnknownFields unknown;
  friend bool operator==(const ResourceClaimRef&, const ResourceClaimRef&) = default;
};

struct ResourceRequirements {
  ResourceList limits;
  ResourceList requests;
  std::vector<ResourceClaimRef> claims;
  UnknownFields unknown;
  friend bool operator==(const ResourceRequirements&, const ResourceRequirements&) = default;
};

struct Container {
  std::string name;
  std::string image;
  ResourceRequirements resources;
  // Only meaningful on init containers: "Always" makes it a restartable init container (sidecar)
  // that keeps running next to the regular containers. Absent: not restartable.
  std::optional<std::string> restart_policy;
  std::vector<ContainerPort> ports;
  UnknownFields unknown;  // command, env, ...
  friend bool operator==(const Container&, const Container&) = default;
};

struct NodeAffinity {
  std::optional<NodeSelector> required_during_scheduling_ignored_during_execution;
  UnknownFields unknown;  // preferred terms
  friend bool operator==(const NodeAffinity&, const NodeAffinity&) = default;
};

struct Affinity {
  std::optional<NodeAffinity> node_affinity;
  std::optional<PodAffinity> pod_affinity;
  std::optional<PodAffinity> pod_anti_affinity;
  UnknownFields unknown;
  friend bool operator==(const Affinity&, const Affinity&) = default;
};

struct PodSpec {
  std::string node_name;
  StringMap node_selector;
  std::optional<Affinity> affinity;
  std::vector<Toleration> tolerations;
  std::vector<PodSchedulingGate> scheduling_gates;
  std::vector<PodResourceClaim> resource_claims;
  std::vector<Container> init_containers;
  std::vector<Container> containers;
  std::string scheduler_name;
  // Resources consumed by the pod sandbox (RuntimeClass overhead), added to the pod's requests.
  ResourceList overhead;
  // Pod-level resources (PodLevelResources); absent when not set. Its requests override the
  // container aggregate for the resources they name.
  std::optional<ResourceRequirements> resources;
  std::vector<TopologySpreadConstraint> topology_spread_constraints;
  std::vector<Volume> volumes;
  std::optional<PodSchedulingGroup> scheduling_group;
  UnknownFields unknown;
  friend bool operator==(const PodSpec&, const PodSpec&) = default;
};

struct PodResourceClaimStatus {
  std::string name;
  std::optional<std::string> resource_claim_name;
  UnknownFields unknown;
  friend bool operator==(const PodResourceClaimStatus&, const PodResourceClaimStatus&) = default;
};

// status.conditions[] entry (PodScheduled, Ready, ...). kube-scheduler reports a failed attempt as
// type PodScheduled, status "False", reason "Unschedulable" with its explanation in message.
struct PodCondition {
  std::string type;
  std::string status;  // "True" | "False" | "Unknown"
  std::string reason;
  std::string message;
  std::string last_probe_time;
  std::string last_transition_time;
  UnknownFields unknown;
  friend bool operator==(const PodCondition&, const PodCondition&) = default;
};

// The resource parts of a container status (in-place resize); the rest stays in `unknown`.
struct ContainerStatus {
  std::string name;
  ResourceList allocated_resources;
  std::optional<ResourceRequirements> resources;
  UnknownFields unknown;
  friend bool operator==(const ContainerStatus&, const ContainerStatus&) = default;
};

// status.extendedResourceClaimStatus: the special claim kube-scheduler creates for a pod's
// DRA-backed extended resources (KEP-5004) and which container/resource uses which request.
struct ContainerExtendedResourceRequest {
  std::string container_name;
  std::string resource_name;
  std::string request_name;
  UnknownFields unknown;
  friend bool operator==(const ContainerExtendedResourceRequest&,
                         const ContainerExtendedResourceRequest&) = default;
};

struct PodExtendedResourceClaimStatus {
  std::vector<ContainerExtendedResourceRequest> request_mappings;
  std::string resource_claim_name;
  UnknownFields unknown;
  friend bool operator==(const PodExtendedResourceClaimStatus&,
                         const PodExtendedResourceClaimStatus&) = default;
};

struct PodStatus {
  std::string phase;  // Pending Running Succeeded Failed Unknown
  std::string nominated_node_name;
  std::vector<PodCondition> conditions;
  std::vector<ContainerStatus> init_container_statuses;
  std::vector<ContainerStatus> container_statuses;
  std::vector<PodResourceClaimStatus> resource_claim_statuses;
  std::optional<PodExtendedResourceClaimStatus> extended_resource_claim_status;
  UnknownFields unknown;
  friend bool operator==(const PodStatus&, const PodStatus&) = default;
};

struct Pod {
  std::string api_version = "v1";
  std::string kind = "Pod";
  ObjectMeta metadata;
  PodSpec spec;
  PodStatus status;
  UnknownFields unknown;
  friend bool operator==(const Pod&, const Pod&) = default;
};

// ---------------------------------------------------------------------------------------------
// core/v1 Node (subset)

struct NodeCondition {
  std::string type;
  std::string status;
  std::string last_heartbeat_time;
  std::string last_transition_time;
  std::string reason;
  std::string message;
  UnknownFields unknown;
  friend bool operator==(const NodeCondition&, const NodeCondition&) = default;
};

struct NodeSpec {
  bool unschedulable = false;
  std::vector<Taint> taints;
  std::string provider_id;  // "providerID"
  UnknownFields unknown;
  friend bool operator==(const NodeSpec&, const NodeSpec&) = default;
};

struct NodeStatus {
  ResourceList capacity;
  ResourceList allocatable;
  std::vector<NodeCondition> conditions;
  std::vector<std::string> declared_features;  // node features the kubelet declares (1.35+)
  UnknownFields unknown;
  friend bool operator==(const NodeStatus&, const NodeStatus&) = default;
};

struct Node {
  std::string api_version = "v1";
  std::string kind = "Node";
  ObjectMeta metadata;
  NodeSpec spec;
  NodeStatus status;
  UnknownFields unknown;
  friend bool operator==(const Node&, const Node&) = default;

  // True iff the Ready condition has status "True".
  bool IsReady() const;
};

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
