#include "controller/simulate/extended_resources.h"

#include "controller/allocator/from_api.h"
#include "controller/api/codec.h"

namespace draco::simulate {

std::string SimulatedExtendedClaimName(const std::string& pod_name) {
  return pod_name + "-extended-resources";
}

StatusOr<std::optional<alloc::ResourceClaim>> ExtendedResourceClaim(
    const api::Pod& pod, const std::string& ns, const api::ExtendedResourceClasses& classes) {
  const std::string where = "pod " + ns + "/" + pod.metadata.name + ": extended resources";
  auto plan = api::PlanExtendedResources(pod, classes, nullptr);
  if (!plan.ok()) return plan.status().WithPrefix(where);
  if (plan->empty()) return std::optional<alloc::ResourceClaim>();
  api::ResourceClaim c = api::NewExtendedResourceClaim(pod, std::move(plan->requests));
  c.metadata.name = SimulatedExtendedClaimName(pod.metadata.name);
  c.metadata.namespace_ = ns;
  return std::optional<alloc::ResourceClaim>(alloc::ToAllocClaim(c));
}

}  // namespace draco::simulate
