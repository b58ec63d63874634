// Plain C++ model of scheduling.k8s.io/v1beta1 PodGroup (Kubernetes 1.37, GenericWorkload): the
// parts the claim lifecycle reads for DRAWorkloadResourceClaims (the group's resource claims and
// the claims generated for them) and the gang minimum; everything else (workloadRef, conditions)
// is kept in `unknown`. Same conventions as types.h; the codec (codec.h) decodes and encodes it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "controller/api/types.h"

namespace draco::api {

// Group/version/resource of the PodGroup API draco reads.
inline constexpr const char* kSchedulingGroup = "scheduling.k8s.io";
inline constexpr const char* kPodGroupVersion = "v1beta1";
inline constexpr const char* kPodGroupResource = "podgroups";

// spec.resourceClaims[]: exactly one of the two names is set. A member pod's claim entry with the
// same name and the same claim/template name is the group's claim, shared by all members.
struct PodGroupResourceClaim {
  std::string name;
  std::optional<std::string> resource_claim_name;
  std::optional<std::string> resource_claim_template_name;
  UnknownFields unknown;
  friend bool operator==(const PodGroupResourceClaim&, const PodGroupResourceClaim&) = default;
};

// spec.schedulingPolicy.gang: all-or-nothing placement of at least `min_count` pods.
struct GangSchedulingPolicy {
  int64_t min_count = 0;
  UnknownFields unknown;
  friend bool operator==(const GangSchedulingPolicy&, const GangSchedulingPolicy&) = default;
};

// spec.schedulingPolicy: exactly one of basic (kept in `unknown`) and gang.
struct PodGroupSchedulingPolicy {
  std::optional<GangSchedulingPolicy> gang;
  UnknownFields unknown;
  friend bool operator==(const PodGroupSchedulingPolicy&,
                         const PodGroupSchedulingPolicy&) = default;
};

struct PodGroupSpec {
  std::vector<PodGroupResourceClaim> resource_claims;
  std::optional<PodGroupSchedulingPolicy> scheduling_policy;
  UnknownFields unknown;  // workloadRef, ...
  friend bool operator==(const PodGroupSpec&, const PodGroupSpec&) = default;
};

// status.resourceClaimStatuses[]: the claim generated for a template entry (written by the claim
// lifecycle, server-side apply).
struct PodGroupResourceClaimStatus {
  std::string name;
  std::optional<std::string> resource_claim_name;
  UnknownFields unknown;
  friend bool operator==(const PodGroupResourceClaimStatus&,
                         const PodGroupResourceClaimStatus&) = default;
};

struct PodGroupStatus {
  std::vector<PodGroupResourceClaimStatus> resource_claim_statuses;
  UnknownFields unknown;  // conditions
  friend bool operator==(const PodGroupStatus&, const PodGroupStatus&) = default;
};

struct PodGroup {
  std::string api_version = "scheduling.k8s.io/v1beta1";
  std::string kind = "PodGroup";
  ObjectMeta metadata;
  PodGroupSpec spec;
  PodGroupStatus status;
  UnknownFields unknown;
  friend bool operator==(const PodGroup&, const PodGroup&) = default;
};

}  // namespace draco::api
