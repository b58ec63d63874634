// `draco simulate`/`explain` for pods that ask for DRA-backed extended resources (KEP-5004): the
// special claim kube-scheduler would create for such a pod, as an allocator claim, so the
// simulation gives the pod devices (and never the same device twice) like any claim.
//
// Thread-compatible; pure.
#pragma once

#include <optional>
#include <string>

#include "base/status.h"
#include "controller/allocator/compute_model.h"
#include "controller/api/extended_resource.h"
#include "controller/api/types.h"

namespace draco::simulate {

// Name the simulation gives the special claim of `pod_name` (kube-scheduler appends a random
// suffix to "<pod>-extended-resources-"; the simulation drops it so runs are reproducible).
std::string SimulatedExtendedClaimName(const std::string& pod_name);

// The special claim for `pod` (namespace `ns`), with kube-scheduler's request names, classes
// and counts; nullopt when the pod asks for no extended resource a class serves. Device-plugin
// resources are not simulated: node allocatable is not considered. Errors name the pod.
StatusOr<std::optional<alloc::ResourceClaim>> ExtendedResourceClaim(
    const api::Pod& pod, const std::string& ns, const api::ExtendedResourceClasses& classes);

}  // namespace draco::simulate
