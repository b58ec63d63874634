// The safety net of the pod sync (Controller::RecoverUnschedulable, step 4 in controller.h).
//
// When reservedFor is written. draco reserves a claim for its pod in the allocation write only
// when it also pins the pod to the allocation's node (FitCoversPod: draco checked every
// constraint the scheduler will check). For every other released pod, the allocation is written
// with an empty reservedFor and the scheduler reserves the claim itself in the binding cycle
// (kube-scheduler's DynamicResources PreBind adds the pod to reservedFor, with the claim's
// resourceVersion, before it binds). So "allocated, reserved for nobody, pod not bound" means no
// scheduler has committed to a node for the claim yet, and taking the allocation back with a
// resourceVersion precondition cannot race a binding: if the scheduler reserved first, our write
// fails with a conflict; if we deallocate first, its reservation fails (the API server refuses
// reservedFor without an allocation) and the pod goes back to its scheduling queue.
// A pinned pod is not helped by deallocation (its node affinity names the node for good, the API
// server does not let a released pod's affinity be relaxed), so its reservation stays, and draco
// puts it back when someone removes it while the pod is unbound: kube-scheduler's Unreserve (a
// binding cycle that failed, e.g. during an API-server restart) drops the pod from reservedFor
// without looking at who wrote it, and its next cycle, from a claim cache that has not seen that
// patch yet, skips PreBind and binds the pod to a claim not reserved for it (seen 60 times in an
// 8,000-pod burst with two kube-apiserver restarts, issue #21).

#include <algorithm>
#include <chrono>

#include <spdlog/spdlog.h>

#include "controller/feasibility/node_filter.h"
#include "controller/reconcilers/claim_util.h"
#include "controller/reconcilers/controller.h"
#include "controller/reconcilers/controller_util.h"
#include "k8sclient/api_error.h"

namespace draco::reconcilers {
namespace {

constexpr size_t kMaxRecoveries = 500;  // pods remembered (same bound as the deleted-UID LRU)
// Delay before the safety net acts again for the same pod on a new scheduler report: the first
// action is immediate, then 1 s doubling up to 5 min. A repeat needs someone to allocate the
// released pod's claims without reserving them again, which draco does not do; the delay keeps a
// misbehaving third party from turning this into a write loop.
constexpr auto kRecoveryBackoffBase = std::chrono::seconds(1);
constexpr auto kRecoveryBackoffMax = std::chrono::minutes(5);

// The scheduler's report of a failed attempt: PodScheduled=False, reason Unschedulable.
const api::PodCondition* UnschedulableReport(const api::Pod& pod) {
  for (const auto& c : pod.status.conditions) {
    if (c.type != "PodScheduled") continue;
    return c.status == "False" && c.reason == "Unschedulable" ? &c : nullptr;
  }
  return nullptr;
}

// Allocated by the builtin path (delete-protection finalizer), reserved for no one, not being
// deleted, and not an immediate standalone claim (draco would allocate that again at once).
bool Deallocatable(const api::ResourceClaim& c) {
  return c.status.allocation && c.status.reserved_for.empty() && !c.metadata.deletion_timestamp &&
         HasFinalizer(c.metadata, kDeleteProtectionFinalizer) &&
         !(OwnerPodUid(c).empty() && WantsImmediateAllocation(c));
}

Clock::Duration RecoveryBackoff(int previous_actions) {
  Clock::Duration d = kRecoveryBackoffBase;
  for (int i = 1; i < previous_actions && d < kRecoveryBackoffMax; ++i) d *= 2;
  return std::min<Clock::Duration>(d, kRecoveryBackoffMax);
}

}  // namespace

StatusOr<Result> Controller::KeepPinnedReservations(const api::Pod& pod, const PodClaims& pc,
                                                    const std::string& node) {
  NodePtr n = cache_.GetNode(node);
  for (size_t i = 0; i < pc.claims.size(); ++i) {
    const ClaimPtr& c = pc.claims[i];
    if (!c || !c->status.allocation || c->metadata.deletion_timestamp) continue;
    if (!HasFinalizer(c->metadata, kDeleteProtectionFinalizer)) continue;
    if (IsReservedForPodOrGroup(*c, pod, options_.workload_claims)) continue;
    const auto& sel = c->status.allocation->node_selector;
    if (!n || (sel && !feasibility::MatchesAllocatedSelectors(*n, {&*sel}))) continue;
    api::ResourceClaim copy = *c;
    copy.status.reserved_for.push_back(pc.bind_to[i]);
    auto updated = writer_.UpdateClaimStatus(copy);  // resourceVersion precondition
    if (!updated.ok()) {
      if (k8s::IsNotFound(updated.status())) continue;
      return updated.status().WithPrefix("restore the reservation of " + ClaimKey(*c));
    }
    cache_.AssumeClaim(*updated);
    spdlog::info("pod {}/{} (pinned to {}): reservation of claim {} restored",
                 pod.metadata.namespace_, pod.metadata.name, node, c->metadata.name);
  }
  return Result{};
}

StatusOr<Result> Controller::RecoverUnschedulable(const api::Pod& pod, const PodClaims& pc) {
  if (auto node = PinnedNode(pod)) return KeepPinnedReservations(pod, pc, *node);
  const api::PodCondition* report = UnschedulableReport(pod);
  if (!report || !pod.spec.node_name.empty()) return Result{};
  std::vector<ClaimPtr> victims;
  for (const auto& c : pc.claims) {
    if (c && Deallocatable(*c)) victims.push_back(c);
  }
  if (victims.empty()) return Result{};
  const std::string& ns = pod.metadata.namespace_;
  const std::string pod_key = ns + "/" + pod.metadata.name;
  const std::string attempt = report->last_transition_time + "\n" + report->message;
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = recoveries_.find(pod.metadata.uid);
    if (it != recoveries_.end()) {
      if (it->second.attempt == attempt) return Result{};  // this report was acted on
      Clock::TimePoint ready = it->second.last + RecoveryBackoff(it->second.count);
      if (clock_.Now() < ready) return Result{ready - clock_.Now()};
    }
  }
  // The cache may lag: confirm with the API server that the pod is still unbound (a scheduler
  // without DRA support could bind without reserving, which no claim precondition would catch).
  auto live = writer_.GetPodLive(ns, pod.metadata.name);
  if (!live.ok()) return live.status().WithPrefix("get pod " + pod_key);
  if (!*live || (*live)->metadata.uid != pod.metadata.uid || !(*live)->spec.node_name.empty() ||
      !UnschedulableReport(**live)) {
    return Result{};  // the pod's own update event brings the next sync
  }

  std::string names;
  for (const auto& c : victims) {
    api::ResourceClaim copy = *c;
    copy.status.allocation.reset();
    copy.status.devices.clear();
    auto updated = writer_.UpdateClaimStatus(copy);  // resourceVersion precondition
    if (!updated.ok()) {
      if (k8s::IsNotFound(updated.status())) continue;
      // A conflict: the scheduler may have reserved it meanwhile; the retry reads fresh state.
      return updated.status().WithPrefix("deallocate " + ns + "/" + c->metadata.name);
    }
    cache_.AssumeClaim(*updated);
    names += (names.empty() ? "" : ", ") + c->metadata.name;
  }
  cache_.ClearNomination(pod_key);
  {
    std::lock_guard<std::mutex> l(mu_);
    auto [it, fresh] = recoveries_.try_emplace(pod.metadata.uid);
    if (fresh) {
      recovery_order_.push_back(pod.metadata.uid);
      if (recovery_order_.size() > kMaxRecoveries) {
        recoveries_.erase(recovery_order_.front());
        recovery_order_.pop_front();
      }
    }
    it->second.attempt = attempt;
    ++it->second.count;
    it->second.last = clock_.Now();
  }
  if (names.empty()) return Result{};
  const std::string scheduler =
      pod.spec.scheduler_name.empty() ? "default-scheduler" : pod.spec.scheduler_name;
  std::string msg = "deallocated ResourceClaim " + names +
                    " that draco had allocated: " + scheduler +
                    " reported the pod unschedulable (\"" + report->message +
                    "\"); the scheduler can now allocate it on a node it accepts";
  events_.Record({"v1", "Pod", ns, pod.metadata.name, pod.metadata.uid}, "Warning",
                 "DeallocatedUnschedulable", msg);
  if (metrics_) metrics_->IncReleasedUnschedulable();
  spdlog::info("pod {}: {}", pod_key, msg);
  OnAllocationInputsChanged();  // freed devices: parked pods may fit now
  return Result{};
}

}  // namespace draco::reconcilers
