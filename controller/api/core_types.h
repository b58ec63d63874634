// core/v1 and meta/v1 scheduling types (see types.h for the conventions): node selection and
// taints/tolerations with their matching rules, LabelSelector and pod affinity / topology spread,
// volumes, and the parts of Pod and Node the controller needs. Part of the umbrella header
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

#include "controller/api/meta_types.h"
#include "controller/api/quantity.h"

namespace draco::api {

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

// Upstream semantics (component-helpers nodeaffinity's LazyErrorNodeSelector, implemented once in
// node_affinity.h): requirements within a term are ANDed, terms are ORed; a term with no
// requirements matches nothing; a term with an invalid requirement (what labels.NewRequirement
// rejects: unknown operator, invalid label key or value, wrong value count, non-integer Gt/Lt
// value; for fields anything but In/NotIn with one value) matches nothing. Fields are only
// checked for a named node; a field other than metadata.name reads as "". An empty selector (no
// terms) matches nothing. RequirementMatches: valid and matching.
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

// The fields of a toleration and of a taint, whichever model holds them (core/v1,
// resource.k8s.io devices, the allocator's model); views into the caller's strings.
struct TolerationFields {
  std::string_view key, op, value, effect;
};
struct TaintFields {
  std::string_view key, value, effect;
};
// The one toleration rule: upstream core/v1 Toleration.ToleratesTaint (without the alpha Gt/Lt
// operators of TaintTolerationComparisonOperators, which never match here) and
// resourceclaim.ToleratesTaint, its copy for device taints. An empty effect or key matches any;
// operator "" or Equal compares values, Exists matches any value, anything else nothing.
// Callers decide which effects count.
bool ToleratesTaint(const TolerationFields& t, const TaintFields& taint);

// Upstream v1 Toleration.ToleratesTaint (ToleratesTaint on its fields).
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

}  // namespace draco::api
