// Extended resources backed by DRA (KEP-5004): which DeviceClass serves an extended resource
// name, and the device requests + container mappings of the special claim kube-scheduler
// creates for a pod's extended-resource requests. The formats follow kube-scheduler 1.37's
// dynamicresources plugin exactly (request names "container-<i>-request-<j>", claim
// generateName "<pod>-extended-resources-", annotation
// resource.kubernetes.io/extended-resource-claim: "true", the pod as controller owner), so a
// claim or plan built here is one kube-scheduler and kubelet accept.
//
// Pure functions over the api model; thread-compatible.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "controller/api/types.h"

namespace draco::api {

inline constexpr std::string_view kExtendedResourceClaimAnnotation =
    "resource.kubernetes.io/extended-resource-claim";
// Every DeviceClass implicitly serves "deviceclass.resource.kubernetes.io/<class name>".
inline constexpr std::string_view kDeviceClassResourcePrefix =
    "deviceclass.resource.kubernetes.io/";

// True for names kube-scheduler may map to a DeviceClass: extended resource names (domain
// prefixed, outside *kubernetes.io/, not "requests.*") and the implicit class names.
bool IsDraExtendedResourceName(std::string_view name);

// Resource name -> DeviceClass name, as kube-scheduler's extended-resource cache builds it:
// every class under its implicit name, plus spec.extendedResourceName; when two classes claim
// the same name the newer one (creationTimestamp) wins, on a tie the lower name.
using ExtendedResourceClasses = std::map<std::string, std::string>;
ExtendedResourceClasses MapExtendedResourceClasses(const std::vector<const DeviceClass*>& classes);

// A container's requests after API-server defaulting (a resource with only a limit requests the
// limit).
ResourceList EffectiveContainerRequests(const Container& c);

// Names of the DRA-backed extended resources the pod requests (> 0, served by a class), sorted.
std::vector<std::string> PodExtendedResources(const Pod& pod,
                                              const ExtendedResourceClasses& classes);

struct ExtendedResourcePlan {
  std::vector<DeviceRequest> requests;  // exactly/ExactCount, sorted by request name
  std::vector<ContainerExtendedResourceRequest> mappings;
  bool empty() const { return requests.empty(); }
};

// The special claim's requests and the pod's request mappings for one node, as kube-scheduler's
// Filter computes them: resources the node offers through a device plugin (allocatable > 0 in
// `node_allocatable`, may be null) are left to the device plugin. Non-sidecar init containers
// reuse the devices of later long-lived containers and share one request (the largest). An error
// names a requested extended resource that neither the node nor any class provides.
StatusOr<ExtendedResourcePlan> PlanExtendedResources(const Pod& pod,
                                                     const ExtendedResourceClasses& classes,
                                                     const ResourceList* node_allocatable);

// True when `claim` is a special extended-resource claim (annotation "true").
bool IsExtendedResourceClaim(const ResourceClaim& claim);

// The claim kube-scheduler would create for `pod` (no name yet: generateName, owner, annotation).
ResourceClaim NewExtendedResourceClaim(const Pod& pod, std::vector<DeviceRequest> requests);

// The special claim's name recorded in pod.status.extendedResourceClaimStatus ("" if none).
std::string ExtendedResourceClaimName(const Pod& pod);

}  // namespace draco::api
