// Pure helpers over api::Pod and api::ResourceClaim that encode upstream's rules
// (k8s.io/dynamic-resource-allocation/resourceclaim and the resourceclaim controller).
// Thread-safe (pure functions).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "controller/api/pod_claims.h"
#include "controller/api/types.h"
#include "controller/api/workload_types.h"

namespace draco::reconcilers {

// resource.kubernetes.io/pod-claim-name: which pod claim entry a generated claim is for.
inline constexpr std::string_view kPodClaimNameAnnotation = "resource.kubernetes.io/pod-claim-name";
// The builtin finalizer; deallocation by the claim lifecycle requires it.
inline constexpr std::string_view kDeleteProtectionFinalizer =
    "resource.kubernetes.io/delete-protection";
// draco's scheduling gate: kube-scheduler holds the pod until draco has allocated its claims.
inline constexpr std::string_view kSchedulingGate = "draco.dev/allocation";
// A standalone claim with this annotation set to "immediate" is allocated as soon as it exists.
inline constexpr std::string_view kAllocationAnnotation = "draco.dev/allocation";
inline constexpr std::string_view kImmediateAllocation = "immediate";
// Field manager for server-side apply of pod status.
inline constexpr std::string_view kFieldManager = "draco";

// Phase Succeeded/Failed, or deleted before it was scheduled (upstream isPodDone).
bool IsPodDone(const api::Pod& pod);
// The pod no longer needs its claims: done, or being deleted.
bool PodReleasesClaims(const api::Pod& pod);
bool HasSchedulingGate(const api::Pod& pod, std::string_view gate = kSchedulingGate);

// resourceclaim.Name: the claim a pod claim entry refers to (shared with `draco simulate`).
using api::ResolveClaimName;
using api::ResolvedName;

// The UID of the claim's controlling ownerReference of kind v1/Pod, or "".
std::string OwnerPodUid(const api::ResourceClaim& claim);
std::string OwnerPodName(const api::ResourceClaim& claim);
// IsForPod: claim in the pod's namespace and controlled by it.
bool IsClaimForPod(const api::ResourceClaim& claim, const api::Pod& pod);

// Whether the pod's status.resourceClaimStatuses is exactly `statuses` (names and claim names).
bool StatusesRecorded(const api::Pod& pod,
                      const std::vector<api::PodResourceClaimStatus>& statuses);
bool IsReservedFor(const api::ResourceClaim& claim, std::string_view uid);
bool HasFinalizer(const api::ObjectMeta& meta, std::string_view finalizer);
bool WantsImmediateAllocation(const api::ResourceClaim& claim);
// True when `selector` (an allocation's nodeSelector) selects node `node` and no other: one term
// whose only requirement is `metadata.name In [node]`, as the allocator writes for node-local
// devices.
bool SelectsOnlyNode(const std::optional<api::NodeSelector>& selector, std::string_view node);

// The node a pod is pinned to: every term of its required node affinity has the requirement
// `metadata.name In [node]` (what draco's gate removal adds, ANDed into each term); else nullopt.
std::optional<std::string> PinnedNode(const api::Pod& pod);

// The generateName for a claim from a template: "<pod>-<claim>-", shortened proportionally when
// longer than 57 characters (then without the trailing dash), exactly as upstream.
std::string GeneratedClaimPrefix(std::string_view pod_name, std::string_view claim_name);

// The name draco gives the claim of `pod_claim_name` of the pod with `pod_uid`: `prefix`
// (GeneratedClaimPrefix) and five characters of the generateName alphabet derived from the pod's
// UID and the claim's name, so it looks like a generated name but every attempt for the same pod
// claim asks for the same one. A create whose answer was lost (a reset connection, a timeout)
// then makes the retry fail with AlreadyExists instead of creating a second claim for the pod.
std::string GeneratedClaimName(std::string_view prefix, std::string_view pod_uid,
                               std::string_view pod_claim_name);

// Builds the claim created for `pc` of `pod` from `tmpl` (name from GeneratedClaimName, with
// generateName as upstream's as well, labels, annotations + pod-claim-name, controller
// ownerReference without blockOwnerDeletion, spec copy). With `with_finalizer` the builtin
// finalizer is set at creation (draco allocates the claim itself, saving one write).
api::ResourceClaim ClaimFromTemplate(const api::Pod& pod, const api::PodResourceClaim& pc,
                                     const api::ResourceClaimTemplate& tmpl, bool with_finalizer);

// A reservedFor entry for a pod.
api::ResourceClaimConsumerReference PodConsumer(const api::Pod& pod);

// ---- PodGroup claims (DRAWorkloadResourceClaims) ----

// spec.schedulingGroup.podGroupName, or "" when the pod belongs to no PodGroup.
std::string PodGroupNameOf(const api::Pod& pod);
// The controlling ownerReference of kind PodGroup (apiVersion scheduling.k8s.io/<any>): its UID
// and name, or "".
std::string OwnerPodGroupUid(const api::ResourceClaim& claim);
std::string OwnerPodGroupName(const api::ResourceClaim& claim);
// IsForPodGroup: claim in the group's namespace and controlled by it (by UID).
bool IsClaimForPodGroup(const api::ResourceClaim& claim, const api::PodGroup& group);
// A reservedFor entry for a PodGroup (apiGroup scheduling.k8s.io, resource podgroups).
api::ResourceClaimConsumerReference PodGroupConsumer(const api::PodGroup& group);
bool IsPodGroupConsumer(const api::ResourceClaimConsumerReference& ref);
// upstream BindTo: the consumer `pc` of `pod` is reserved for. The PodGroup when `group` (the
// pod's group, null when the gate is off or the pod has none) lists a claim with the same name
// and the same claim/template name, else the pod. A `group` the pod is not a member of is
// InvalidArgument.
StatusOr<api::ResourceClaimConsumerReference> BindTo(const api::Pod& pod,
                                                     const api::PodGroup* group,
                                                     const api::PodResourceClaim& pc);
// IsReservedForPod: reserved for the pod, or (with `accept_group`) for its PodGroup by name.
bool IsReservedForPodOrGroup(const api::ResourceClaim& claim, const api::Pod& pod,
                             bool accept_group);
// The claim KCM creates for template entry `gc` of `group`: generateName "<group>-<claim>-"
// (shortened as for pods), template labels and annotations plus pod-claim-name = gc.name, the
// PodGroup as controller owner (scheduling.k8s.io/v1beta1), the template's spec.
api::ResourceClaim ClaimFromPodGroupTemplate(const api::PodGroup& group,
                                             const api::PodGroupResourceClaim& gc,
                                             const api::ResourceClaimTemplate& tmpl);

}  // namespace draco::reconcilers
