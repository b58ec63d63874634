// kube-scheduler's DRA feature gates, mapped onto the allocator's Features.
//
// draco allocates what kube-scheduler of the cluster's version would allocate, so the defaults
// follow the server's minor version (the versioned gate table of k8s.io/kubernetes
// pkg/features/kube_features.go, 1.34 to 1.37) and `--feature-gates` overrides them with
// kube-scheduler's gate names and syntax ("DRAPartitionableDevices=true,DRADeviceTaints=false").
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace draco::alloc {

// Which optional allocator behaviours are on (kube-scheduler 1.37 defaults).
struct Features {
  bool admin_access = true;
  bool prioritized_list = true;
  bool partitionable_devices = true;
  bool device_taints = true;
  bool device_taint_rules = true;
  bool device_binding = true;
  bool consumable_capacity = true;
  bool fractional_capacity_range = false;
  bool list_type_attributes = false;
  bool optional_node_operations = false;
  bool derived_attributes = false;
  bool compatibility_groups = false;
  // Not allocator semantics, carried here so one gate table serves draco: DRAExtendedResource
  // (draco plans the special claim of gated pods asking for extended resources a DeviceClass
  // serves) and DRAWorkloadResourceClaims (claims of a PodGroup's templates, shared by its pods).
  bool extended_resource = true;
  bool workload_resource_claims = false;
};

// The oldest and newest Kubernetes minor versions whose gate defaults draco knows. Older servers
// get the oldest defaults, newer ones the newest.
inline constexpr int kOldestKnownMinor = 34;
inline constexpr int kNewestKnownMinor = 37;

// kube-scheduler 1.<minor>'s defaults for the DRA gates draco implements.
Features DefaultFeatures(int minor = kNewestKnownMinor);

// Applies a kube-style gate list ("Name=true,Other=false", spaces allowed) on top of `features`,
// as a 1.<minor> kube-scheduler would accept it: an unknown gate name, a value other than
// true/false, or a gate locked to its default in that version set otherwise is InvalidArgument
// naming the gate, and `features` is left unchanged. Gates of other subsystems are rejected
// too: only the gates listed by FeatureGateNames() are accepted.
Status ApplyFeatureGates(std::string_view spec, int minor, Features& features);

// "DRAAdminAccess=true,DRAConsumableCapacity=true,..." in a fixed order (for logs and --help).
std::string FeatureGatesString(const Features& features);

// The accepted gate names, comma separated.
std::string FeatureGateNames();

}  // namespace draco::alloc
