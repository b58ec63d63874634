#include "controller/simulate/extended_resources.h"

#include "controller/api/codec.h"

namespace draco::simulate {

std::string SimulatedExtendedClaimName(const std::string& pod_name) {
  return pod_name + "-extended-resources";
}

StatusOr<std::optional<api::ResourceClaim>> ExtendedResourceClaim(
    const api::Pod& pod, const api::ExtendedResourceClasses& classes) {
  const std::string& ns = pod.metadata.namespace_;
  const std::string where = "pod " + ns + "/" + pod.metadata.name + ": extended resources";
  auto plan = api::PlanExtendedResources(pod, classes, nullptr);
  if (!plan.ok()) return plan.status().WithPrefix(where);
  if (plan->empty()) return std::optional<api::ResourceClaim>();
  api::ResourceClaim c = api::NewExtendedResourceClaim(pod, std::move(plan->requests));
  c.metadata.name = SimulatedExtendedClaimName(pod.metadata.name);
  c.metadata.namespace_ = ns;
  return std::optional<api::ResourceClaim>(std::move(c));
}

}  // namespace draco::simulate
