// Double bookings (issue #21): a device in two allocated claims that may not share it. Scheduler
// holds (scheduler_holds.h) keep draco from causing one; a scheduler whose view lags the API
// server, or a component outside draco's reach, still can. draco repairs what is safe to repair
// and reports the rest:
//   - repair: a claim whose one consumer is a pod draco still gates (unbound; the API server binds
//     no gated pod) is deallocated (status update with its resourceVersion, so a concurrent change
//     wins) and the pod allocates again. Checked by the pod's own worker right before its gate
//     comes off (ReleaseDoubleBooked), so never concurrently with its release; the auditor (every
//     10 s) only queues such pods. When every claim of the device is such a claim, the oldest
//     allocation keeps it. A claim several pods share is never taken back this way (another
//     worker may be releasing one of them): it is reported.
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

// The cached claim named by a DoubleAllocation entry ("ns/name"), or null.
ClaimPtr ClaimByKey(const ClusterCache& cache, const std::string& key) {
  auto slash = key.find('/');
  return cache.GetClaim(key.substr(0, slash), key.substr(slash + 1));
}

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
  if (pods.size() != 1) return false;  // none (standalone) or shared: another worker may release
  const api::Pod& p = *pods[0];
  if (!HasSchedulingGate(p) || !p.spec.node_name.empty() || PodReleasesClaims(p)) return false;
  return std::ranges::all_of(claim.status.reserved_for, [&p](const auto& r) {
    return r.resource == "pods" && r.uid == p.metadata.uid;
  });
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
    const auto doubles = cache_.DoubleAllocationsOf(*now);
    // Shared or in use: the auditor reports it.
    if (doubles.empty() || !OnlyGatedConsumers(*now)) continue;
    for (const auto& d : doubles) {
      if (KeepsDevice(*now, d)) continue;
      if (Status st = DeallocateDoubleBooked(*now, d); !st.ok()) return StatusOr<Result>(st);
      repaired = true;
      break;
    }
  }
  if (!repaired) return std::nullopt;
  cache_.ClearNomination(pod.metadata.namespace_ + "/" + pod.metadata.name);
  return StatusOr<Result>(Result{});  // requeued urgently by DeallocateDoubleBooked
}

bool Controller::KeepsDevice(const api::ResourceClaim& claim, const DoubleAllocation& d) const {
  // Every holder is a claim only a gated pod uses: the oldest allocation (then the smallest
  // name) keeps the device, the others give it back when their pods come to be released.
  auto stamp = [](const api::ResourceClaim& c) {
    return std::make_pair(c.status.allocation->allocation_timestamp.value_or(""), ClaimKey(c));
  };
  for (const auto& key : d.claims) {
    if (key == ClaimKey(claim)) continue;
    ClaimPtr other = ClaimByKey(cache_, key);
    if (!other || !other->status.allocation) continue;
    if (!OnlyGatedConsumers(*other) || stamp(*other) < stamp(claim)) return false;
  }
  return true;
}

size_t Controller::Audit() {
  auto doubles = cache_.DoubleAllocations();
  for (const auto& d : doubles) {
    spdlog::error("auditor: device allocated twice: {}: {}", d.device.ToString(), Join(d.claims));
    std::vector<ClaimPtr> claims;
    bool repairable = false;
    for (const auto& key : d.claims) {
      ClaimPtr c = ClaimByKey(cache_, key);
      if (!c) continue;
      claims.push_back(c);
      if (!OnlyGatedConsumers(*c)) continue;
      // The pod's own worker repairs it (ReleaseDoubleBooked), never concurrently with its
      // release: a deallocation from here could land after the gate came off.
      repairable = true;
      for (const auto& p : ConsumersOf(*c)) {
        queue_.AddUrgent(QueueKey("pod", p->metadata.namespace_, p->metadata.name));
      }
    }
    if (repairable) continue;
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
