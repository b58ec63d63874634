// Claim lifecycle for DRA-backed extended resources (KEP-5004), the part of
// kube-controller-manager's resourceclaim-controller that concerns them.
//
// kube-scheduler creates one special claim per pod for its extended-resource requests
// ("<pod>-extended-resources-xxxxx", annotation resource.kubernetes.io/extended-resource-claim,
// the pod as controller owner), allocates and reserves it for the pod and records its name in
// pod.status.extendedResourceClaimStatus. It never cleans up after the pod. draco treats the
// claim like a claim generated from a template: when the pod is done or gone its reservation is
// dropped and the claim is deleted (Controller::SyncClaim), and the pod's events must reach the
// claim even though spec.resourceClaims is empty. These helpers say which pods that concerns.
//
// Gated pods (the admission gate covers extended resources when the chart says so): draco plans
// the special claim together with the pod's own claims (PlannedExtendedClaim), so policies,
// namespace limits, node choice, Events and metrics cover it, pins the pod to the planned node
// and holds the planned devices in the allocator until kube-scheduler's claim appears. The
// claim itself is left to kube-scheduler.
//
// Why draco does not create the claim itself: kube-scheduler 1.37's Filter treats an existing
// special claim that already has requests as stale from an earlier cycle ("cannot schedule
// extended resource claim") and its PostFilter deletes it, so a claim created and allocated by
// anyone else is deleted and re-made; see docs/platform-guide.md.
#pragma once

#include <string>
#include <vector>

#include "controller/api/types.h"
#include "controller/reconcilers/cluster_cache.h"

namespace draco::reconcilers {

// True when the pod consumes claims the controller must follow: spec.resourceClaims entries, a
// special extended-resource claim recorded in its status, or (draco's gate present) requests for
// extended resources a DeviceClass may serve.
bool PodConsumesClaims(const api::Pod& pod);

// True when a container or init container requests (> 0) an extended resource a DeviceClass may
// serve (api::IsDraExtendedResourceName).
bool AsksDraExtendedResources(const api::Pod& pod);

// Name of the pod's special extended-resource claim ("" if none recorded).
std::string ExtendedClaimName(const api::Pod& pod);

// The special claim kube-scheduler will create for `pod`, as draco plans it: kube-scheduler's
// requests (names, classes, counts), annotation and owner, named "<pod>-extended-resources-plan"
// with UID "extended-resources-plan/<pod UID>" (never written). Null when the pod asks for no
// extended resource a class in `classes` serves, or kube-scheduler already recorded its claim.
// Node allocatable is not consulted: a resource a DeviceClass serves is planned through DRA
// even where a device plugin also offers it.
ClaimPtr PlannedExtendedClaim(const api::Pod& pod, const std::vector<api::DeviceClass>& classes);

}  // namespace draco::reconcilers
