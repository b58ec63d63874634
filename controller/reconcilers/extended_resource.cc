#include "controller/reconcilers/extended_resource.h"

#include <memory>

#include "controller/api/extended_resource.h"
#include "controller/reconcilers/claim_util.h"
#include "controller/reconcilers/controller.h"

namespace draco::reconcilers {

namespace {

bool AsksFromContainers(const std::vector<api::Container>& containers) {
  for (const auto& c : containers) {
    for (const auto& [name, q] : api::EffectiveContainerRequests(c)) {
      if (q.Sign() > 0 && api::IsDraExtendedResourceName(name)) return true;
    }
  }
  return false;
}

}  // namespace

bool AsksDraExtendedResources(const api::Pod& pod) {
  return AsksFromContainers(pod.spec.containers) || AsksFromContainers(pod.spec.init_containers);
}

bool PodConsumesClaims(const api::Pod& pod) {
  if (!pod.spec.resource_claims.empty() || !ExtendedClaimName(pod).empty()) return true;
  return HasSchedulingGate(pod) && AsksDraExtendedResources(pod);
}

std::string ExtendedClaimName(const api::Pod& pod) { return api::ExtendedResourceClaimName(pod); }

ClaimPtr PlannedExtendedClaim(const api::Pod& pod, const std::vector<api::DeviceClass>& classes) {
  if (!ExtendedClaimName(pod).empty()) return nullptr;
  std::vector<const api::DeviceClass*> ptrs;
  ptrs.reserve(classes.size());
  for (const auto& c : classes) ptrs.push_back(&c);
  auto plan = api::PlanExtendedResources(pod, api::MapExtendedResourceClasses(ptrs), nullptr);
  if (!plan.ok() || plan->empty()) return nullptr;  // without a node there is no error case
  api::ResourceClaim c = api::NewExtendedResourceClaim(pod, std::move(plan->requests));
  c.metadata.name = pod.metadata.name + "-extended-resources-plan";
  c.metadata.uid = "extended-resources-plan/" + pod.metadata.uid;
  return std::make_shared<const api::ResourceClaim>(std::move(c));
}

void Controller::HoldPlannedExtended(const api::Pod& pod, ClaimPtr planned) {
  std::lock_guard<std::mutex> l(alloc_mu_);
  planned_extended_[pod.metadata.uid] = std::move(planned);
}

void Controller::ReleasePlannedExtended(const std::string& pod_uid) {
  {
    std::lock_guard<std::mutex> l(alloc_mu_);
    auto it = planned_extended_.find(pod_uid);
    if (it == planned_extended_.end()) return;
    // Never written: the cache does not show it allocated, so its devices are free again (and
    // kube-scheduler's claim, once in the cache, holds whatever it got).
    allocator_.Settle({it->second}, /*written=*/false);
    planned_extended_.erase(it);
  }
  // The held devices (and namespace budget) may be what a parked pod waits for.
  OnAllocationInputsChanged();
}

}  // namespace draco::reconcilers
