// Double bookings (issue #21): a device in two allocated claims that may not share it. Scheduler
// holds (scheduler_holds.h) keep draco from causing one; a scheduler whose view lags the API
// server, or a component outside draco's reach, still can. draco repairs what is safe to repair
// and reports the rest:
//   - repair: a claim all of whose consumers are pods draco still gates (unbound; the API server
//     binds no gated pod) is deallocated (status update with its resourceVersion, so a concurrent
//     change wins) and its pods allocate again. Checked right before a gate comes off
//     (ReleaseDoubleBooked) and by the auditor every 10 s. When every claim of the device is such
//     a claim, the oldest allocation stays.
//   - report: when no claim of the device can be taken back (its pods run or are in a scheduler's
//     hands), a Warning Event DeviceAllocatedTwice on every pod that uses one of the claims, once
//     per finding, the gauge draco_double_allocated_devices and
//     draco_double_allocation_repairs_total{outcome="reported"} (the chart's alert fires on
//     either).
#include <algorithm>

#include <spdlog/spdlog.h>

#include "controller/reconcilers/controller.h"
#include "controller/reconcilers/controller_util.h"
#include "k8sclient/api_error.h"

namespace draco::reconcilers {
namespace {

constexpr size_t kMaxReported = 4096;

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

}  // namespace

std::vector<PodPtr> Controller::ConsumersOf(const api::ResourceClaim& claim) const {
  std::vector<PodPtr> pods = cache_.PodsForClaim(claim.metadata.namespace_, claim.metadata.name);
  std::string owner = OwnerPodName(claim);
  if (!owner.empty()) {
    PodPtr p = cache_.GetPod(claim.metadata.namespace_, owner);
    if (p && p->metadata.uid == OwnerPodUid(claim) && std::ranges::find(pods, p) == pods.end()) {
      pods.push_back(std::move(p));
    }
  }
  return pods;
}

bool Controller::OnlyGatedConsumers(const api::ResourceClaim& claim) const {
  if (!claim.status.allocation || claim.metadata.deletion_timestamp) return false;
  std::vector<PodPtr> pods = ConsumersOf(claim);
  if (pods.empty()) return false;  // a standalone claim: nobody to allocate it again
  for (const auto& p : pods) {
    if (!HasSchedulingGate(*p) || !p->spec.node_name.empty() || PodReleasesClaims(*p)) return false;
  }
  for (const auto& r : claim.status.reserved_for) {
    bool gated_pod = std::ranges::any_of(
        pods, [&r](const PodPtr& p) { return r.resource == "pods" && r.uid == p->metadata.uid; });
    if (!gated_pod) return false;
  }
  return true;
}

Status Controller::DeallocateDoubleBooked(const api::ResourceClaim& claim,
                                          const DoubleAllocation& d) {
  api::ResourceClaim copy = claim;
  copy.status.allocation.reset();
  copy.status.reserved_for.clear();
  copy.status.devices.clear();
  auto updated = writer_.UpdateClaimStatus(copy);  // resourceVersion precondition
  if (!updated.ok()) {
    if (k8s::IsNotFound(updated.status())) return OkStatus();
    return updated.status().WithPrefix("deallocate double-booked " + ClaimKey(claim));
  }
  cache_.AssumeClaim(*updated);
  std::vector<std::string> others;
  for (const auto& k : d.claims) {
    if (k != ClaimKey(claim)) others.push_back(k);
  }
  std::string msg = "device " + d.device.ToString() + " of ResourceClaim " + ClaimKey(claim) +
                    " is also allocated to " + Join(others) +
                    " (allocated by another scheduler at the same time); draco deallocated its "
                    "own allocation and allocates the pod again";
  spdlog::warn("double booking repaired: {}", msg);
  events_.Record(ClaimTarget(claim), "Warning", "DoubleAllocationRepaired", msg);
  for (const auto& p : ConsumersOf(claim)) {
    events_.Record(PodTarget(*p), "Warning", "DoubleAllocationRepaired", msg);
    ForgetPendingRelease(p->metadata.uid);
    queue_.AddUrgent(QueueKey("pod", p->metadata.namespace_, p->metadata.name));
  }
  if (metrics_) metrics_->IncDoubleAllocationRepair(/*repaired=*/true);
  return OkStatus();
}

std::optional<StatusOr<Result>> Controller::ReleaseDoubleBooked(const api::Pod& pod,
                                                                const PodClaims& pc) {
  bool repaired = false;
  for (const auto& c : pc.claims) {
    if (!c) continue;
    ClaimPtr now = cache_.GetClaim(c->metadata.namespace_, c->metadata.name);
    if (!now || !now->status.allocation) continue;
    for (const auto& d : cache_.DoubleAllocationsOf(*now)) {
      if (!OnlyGatedConsumers(*now)) break;  // shared with a running pod: the auditor reports it
      if (Status st = DeallocateDoubleBooked(*now, d); !st.ok()) return StatusOr<Result>(st);
      repaired = true;
      break;
    }
  }
  if (!repaired) return std::nullopt;
  cache_.ClearNomination(pod.metadata.namespace_ + "/" + pod.metadata.name);
  return StatusOr<Result>(Result{});  // requeued urgently by DeallocateDoubleBooked
}

size_t Controller::Audit() {
  auto doubles = cache_.DoubleAllocations();
  for (const auto& d : doubles) {
    spdlog::error("auditor: device allocated twice: {}: {}", d.device.ToString(), Join(d.claims));
    std::vector<ClaimPtr> claims, repairable;
    for (const auto& key : d.claims) {
      auto slash = key.find('/');
      ClaimPtr c = cache_.GetClaim(key.substr(0, slash), key.substr(slash + 1));
      if (!c) continue;
      claims.push_back(c);
      if (OnlyGatedConsumers(*c)) repairable.push_back(c);
    }
    if (!repairable.empty() && repairable.size() == claims.size()) {
      // Every holder is still gated: the oldest allocation stays.
      auto oldest = std::ranges::min_element(repairable, [](const ClaimPtr& a, const ClaimPtr& b) {
        return a->status.allocation->allocation_timestamp.value_or("") <
               b->status.allocation->allocation_timestamp.value_or("");
      });
      repairable.erase(oldest);
    }
    for (const auto& c : repairable) {
      if (Status st = DeallocateDoubleBooked(*c, d); !st.ok()) {
        spdlog::warn("auditor: {}", st.message());
      }
    }
    if (!repairable.empty()) continue;
    std::string finding = d.device.ToString() + ": " + Join(d.claims);
    {
      std::lock_guard<std::mutex> l(mu_);
      if (!reported_doubles_.insert(finding).second) continue;
      if (reported_doubles_.size() > kMaxReported) reported_doubles_.clear();
    }
    std::string msg = "device " + d.device.ToString() + " is allocated to " + Join(d.claims) +
                      " and no claim can be taken back (their pods are bound or in a "
                      "scheduler's hands); two allocators handed it out";
    for (const auto& c : claims) {
      for (const auto& p : ConsumersOf(*c)) {
        events_.Record(PodTarget(*p), "Warning", "DeviceAllocatedTwice", msg);
      }
    }
    if (metrics_) metrics_->IncDoubleAllocationRepair(/*repaired=*/false);
  }
  if (metrics_) metrics_->SetDoubleAllocatedDevices(static_cast<double>(doubles.size()));
  return doubles.size();
}

}  // namespace draco::reconcilers
