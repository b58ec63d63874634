#include "controller/api/pod_claims.h"

namespace draco::api {

StatusOr<ResolvedName> ResolveClaimName(const Pod& pod, const PodResourceClaim& pc) {
  ResolvedName r;
  if (pc.resource_claim_name) {
    r.name = *pc.resource_claim_name;
    return r;
  }
  if (pc.resource_claim_template_name) {
    r.must_check_owner = true;
    for (const auto& st : pod.status.resource_claim_statuses) {
      if (st.name == pc.name) {
        r.name = st.resource_claim_name;
        return r;
      }
    }
    r.not_created_yet = true;
    return r;
  }
  return InvalidArgumentError("pod claim " + pc.name +
                              ": neither resourceClaimName nor resourceClaimTemplateName is set");
}

}  // namespace draco::api
