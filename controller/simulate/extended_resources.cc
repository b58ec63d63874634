#include "controller/simulate/extended_resources.h"

#include <rapidjson/document.h>

#include "controller/allocator/allocator.h"
#include "controller/allocator/json_codec.h"
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
  // One claim model for the allocator: go through the same decoder as claim manifests.
  rapidjson::Document doc;
  doc.Parse(api::Encode(c).c_str());
  if (doc.HasParseError()) return InternalError(where + ": encoding the claim failed");
  auto ac = alloc::DecodeResourceClaim(doc);
  if (!ac.ok()) return ac.status().WithPrefix(where);
  alloc::DefaultClaim(*ac);
  return std::optional<alloc::ResourceClaim>(std::move(ac).value());
}

}  // namespace draco::simulate
