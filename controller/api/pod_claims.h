// Which ResourceClaim a pod's spec.resourceClaims entry refers to: upstream's resourceclaim.Name
// (k8s.io/dynamic-resource-allocation/resourceclaim). The controller (reconcilers/claim_util.h)
// and `draco simulate`/`explain`/`kubectl draco` (simulate/inputs.cc) resolve a pod's claims with
// it.
// Pure; thread-safe.
#pragma once

#include <optional>
#include <string>

#include "base/status.h"
#include "controller/api/core_types.h"

namespace draco::api {

struct ResolvedName {
  std::optional<std::string> name;  // nullopt: no claim needed (status recorded nil) or missing
  bool must_check_owner = false;    // template-generated: the claim must be controlled by the pod
  bool not_created_yet = false;     // template entry without a recorded status
};

// resourceClaimName as is; for resourceClaimTemplateName, the claim the pod's
// status.resourceClaimStatuses records for the entry. INVALID_ARGUMENT ("pod claim NAME: neither
// resourceClaimName nor resourceClaimTemplateName is set") when the entry names neither.
StatusOr<ResolvedName> ResolveClaimName(const Pod& pod, const PodResourceClaim& pc);

}  // namespace draco::api
