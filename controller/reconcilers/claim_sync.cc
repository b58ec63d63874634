// Claim sync (see controller.h): reservations of gone consumers are dropped, unused claims
// deallocated and their finalizer removed, generated claims of finished owners deleted, and
// standalone claims annotated for immediate allocation allocated.
#include <algorithm>

#include <spdlog/spdlog.h>

#include "controller/reconcilers/controller.h"
#include "controller/reconcilers/controller_util.h"
#include "controller/reconcilers/node_fit.h"
#include "k8sclient/api_error.h"

namespace draco::reconcilers {
namespace {

// With DRAWorkloadResourceClaims off, how often a claim still reserved for a PodGroup is checked.
constexpr Clock::Duration kPodGroupRecheck = std::chrono::minutes(1);

}  // namespace

bool Controller::WantsStandaloneAllocation(const api::ResourceClaim& claim) const {
  return options_.allocate && !claim.status.allocation && !claim.metadata.deletion_timestamp &&
         OwnerPodUid(claim).empty() && OwnerPodGroupUid(claim).empty() &&
         WantsImmediateAllocation(claim);
}

StatusOr<Result> Controller::AllocateStandalone(const api::ResourceClaim& claim) {
  const std::string key = ClaimKey(claim);
  auto self = cache_.GetClaim(claim.metadata.namespace_, claim.metadata.name);
  if (!self) return Result{};
  std::unique_lock<std::mutex> l(alloc_mu_);
  if (allocating_.count(key)) return Result{options_.busy_retry};
  auto filtered = FilterNodes(nullptr, cache_.Nodes(), {}, cache_);
  auto start = clock_.Now();
  AllocateResponse resp = allocator_.Allocate(AllocateRequest{"", {self}, filtered.fit, ""});
  double secs = SecondsSince(clock_, start);
  if (resp.kind != AllocateResponse::Kind::kAllocated) {
    l.unlock();
    bool fatal = resp.kind == AllocateResponse::Kind::kError;
    if (metrics_) {
      metrics_->ObserveAllocation(
          fatal ? metrics::AllocationResult::kError : metrics::AllocationResult::kUnschedulable,
          secs);
      metrics_->IncPending(fatal ? metrics::PendingReason::kAllocationError
                                 : metrics::PendingReason::kDevicesUnavailable);
    }
    ReportFailure(
        nullptr, {self}, fatal ? "AllocationError" : "FailedAllocation",
        std::string(fatal ? "cannot allocate devices: " : "no devices available: ") + resp.message);
    Park(QueueKey("claim", claim.metadata.namespace_, claim.metadata.name));
    return Result{};
  }
  if (metrics_) metrics_->ObserveAllocation(metrics::AllocationResult::kSuccess, secs);
  allocating_.insert(key);
  l.unlock();
  Status st = WriteAllocations({}, {self}, resp.results);
  std::lock_guard<std::mutex> g(alloc_mu_);
  allocating_.erase(key);
  allocator_.Settle({self}, st.ok());
  if (!st.ok()) return st;
  return Result{};
}

// ---------------------------------------------------------------------------------------------
// Claims

bool Controller::OwnerPodDone(const api::ResourceClaim& claim) const {
  std::string owner_uid = OwnerPodUid(claim);
  if (owner_uid.empty()) return false;
  PodPtr owner = cache_.GetPod(claim.metadata.namespace_, OwnerPodName(claim));
  return owner && (owner->metadata.uid != owner_uid || IsPodDone(*owner));
}

StatusOr<ClaimPtr> Controller::RemoveFinalizer(const api::ResourceClaim& claim) {
  api::ResourceClaim f = claim;
  std::erase(f.metadata.finalizers, std::string(kDeleteProtectionFinalizer));
  auto u = writer_.UpdateClaim(f);
  if (u.ok()) cache_.AssumeClaim(*u);
  return u;
}

StatusOr<Controller::Reservations> Controller::CheckReservations(const api::ResourceClaim& claim) {
  const std::string& ns = claim.metadata.namespace_;
  Reservations out;
  for (const auto& r : claim.status.reserved_for) {
    if (IsPodGroupConsumer(r)) {
      auto keep = PodGroupReservationValid(ns, r);
      if (!keep.ok()) return WriteError(keep.status(), "get PodGroup " + r.name);
      if (*keep) out.valid.push_back(r);
      out.dropped = out.dropped || !*keep;
      out.group_kept = out.group_kept || *keep;
      continue;
    }
    if (!r.api_group.empty() || r.resource != "pods") {
      out.valid.push_back(r);  // a consumer type we cannot check
      continue;
    }
    if (IsDeletedPod(r.uid)) {
      out.dropped = true;
      continue;
    }
    PodPtr pod = cache_.GetPod(ns, r.name);
    if (!pod) {
      // Not in the cache: ask the API server before dropping a pod the cache may not have seen.
      auto live = writer_.GetPodLive(ns, r.name);
      if (!live.ok()) return WriteError(live.status(), "get pod " + r.name);
      pod = *live;
    }
    if (!pod || pod->metadata.uid != r.uid || IsPodDone(*pod)) {
      out.dropped = true;
      continue;
    }
    out.valid.push_back(r);
  }

  return out;
}

Status Controller::DeleteWithoutFinalizer(const api::ResourceClaim& claim) {
  const std::string& ns = claim.metadata.namespace_;
  const std::string& name = claim.metadata.name;
  if (HasFinalizer(claim.metadata, kDeleteProtectionFinalizer)) {
    auto u = RemoveFinalizer(claim);
    if (!u.ok()) {
      if (k8s::IsNotFound(u.status())) return OkStatus();
      return WriteError(u.status(), "remove finalizer of " + ns + "/" + name);
    }
  }
  Status st = writer_.DeleteClaim(ns, name, claim.metadata.uid);
  if (!st.ok() && !k8s::IsNotFound(st)) return WriteError(st, "delete claim " + name);
  return OkStatus();
}

std::optional<StatusOr<Result>> Controller::DeleteClaimOfFinishedOwner(
    const api::ResourceClaim& claim) {
  // A generated claim whose pod is finished, deleted or replaced is deleted anyway: drop the
  // finalizer and delete it (2 writes) instead of deallocating first (3 writes, upstream's
  // order). The devices are free once the object is gone, and the pod is done, so nothing can
  // still use them; if the DELETE fails the next sync deallocates the usual way.
  std::string owner_uid = OwnerPodUid(claim);
  if ((!owner_uid.empty() && (IsDeletedPod(owner_uid) || OwnerPodDone(claim))) ||
      OwnerPodGroupGone(claim)) {
    if (Status st = DeleteWithoutFinalizer(claim); !st.ok()) return StatusOr<Result>(st);
    // Gone unless another finalizer holds it: then later events still deserve a sync.
    if (std::ranges::all_of(claim.metadata.finalizers,
                            [](const std::string& f) { return f == kDeleteProtectionFinalizer; })) {
      Remember(deleted_claims_, claim.metadata.uid);
    }
    return StatusOr<Result>(Result{});
  }
  return std::nullopt;
}

std::optional<StatusOr<Result>> Controller::DeleteDuplicateClaim(const api::ResourceClaim& claim) {
  // Only one that holds devices matters (an unallocated one is left to the garbage collector, as
  // upstream does), and only while its pod may still run (a finished pod's claims are the
  // lifecycle owner's to delete; upstream's controller even re-creates them).
  if (!claim.status.allocation || !claim.status.reserved_for.empty() ||
      claim.metadata.deletion_timestamp) {
    return std::nullopt;
  }
  const std::string uid = OwnerPodUid(claim);
  auto entry = claim.metadata.annotations.find(std::string(kPodClaimNameAnnotation));
  if (uid.empty() || entry == claim.metadata.annotations.end()) return std::nullopt;
  const std::string& ns = claim.metadata.namespace_;
  PodPtr pod = cache_.GetPod(ns, OwnerPodName(claim));
  if (!pod || pod->metadata.uid != uid || IsPodDone(*pod)) return std::nullopt;
  std::optional<std::string> recorded;
  for (const auto& st : pod->status.resource_claim_statuses) {
    if (st.name == entry->second) recorded = st.resource_claim_name;
  }
  if (!recorded || *recorded == claim.metadata.name) return std::nullopt;
  ClaimPtr used = cache_.GetClaim(ns, *recorded);
  if (!used || !IsClaimForPod(*used, *pod)) return std::nullopt;
  if (auto created = ParseTimestamp(claim.metadata.creation_timestamp)) {
    auto age = std::chrono::duration_cast<Clock::Duration>(clock_.WallNow() - *created);
    if (age < kDuplicateGrace) return StatusOr<Result>(Result{kDuplicateGrace - age});
  }
  spdlog::info("claim {}/{}: pod {} uses {} for its claim {}; deleting this duplicate", ns,
               claim.metadata.name, pod->metadata.name, *recorded, entry->second);
  if (Status st = DeleteWithoutFinalizer(claim); !st.ok()) return StatusOr<Result>(st);
  events_.Record(PodTarget(*pod), "Normal", "DuplicateClaimDeleted",
                 "ResourceClaim " + claim.metadata.name + " was a second claim for pod claim " +
                     entry->second + " (the pod uses " + *recorded + "); deleted");
  return StatusOr<Result>(Result{});
}

StatusOr<ClaimPtr> Controller::DropReservations(
    const api::ResourceClaim& claim,
    const std::vector<api::ResourceClaimConsumerReference>& valid) {
  const std::string& ns = claim.metadata.namespace_;
  const std::string& name = claim.metadata.name;
  api::ResourceClaim c = claim;
  c.status.reserved_for = valid;
  // Deallocate only on the transition "last consumer removed", and only claims allocated by the
  // builtin path (finalizer present).
  if (valid.empty() && c.status.allocation &&
      HasFinalizer(c.metadata, kDeleteProtectionFinalizer)) {
    c.status.allocation.reset();
    c.status.devices.clear();
  }
  auto updated = writer_.UpdateClaimStatus(c);
  if (!updated.ok()) {
    return WriteError(updated.status(), "update reservedFor of " + ns + "/" + name);
  }
  cache_.AssumeClaim(*updated);
  ClaimPtr now = *updated;
  if (!now->status.allocation && HasFinalizer(now->metadata, kDeleteProtectionFinalizer) &&
      !now->metadata.deletion_timestamp) {
    // Keep the finalizer on claims we may allocate again (unreserved but still used by a gated
    // pod); drop it otherwise, as upstream does after deallocation.
    auto u = RemoveFinalizer(*now);
    if (!u.ok()) return WriteError(u.status(), "remove finalizer of " + ns + "/" + name);
    now = *u;
  }
  return now;
}

StatusOr<Result> Controller::FinishDeletedClaim(const api::ResourceClaim& deleted) {
  const std::string& ns = deleted.metadata.namespace_;
  const std::string& name = deleted.metadata.name;
  ClaimPtr claim = std::make_shared<const api::ResourceClaim>(deleted);
  if (claim->status.allocation) {
    api::ResourceClaim c = *claim;
    c.status.allocation.reset();
    c.status.devices.clear();
    c.status.reserved_for.clear();
    auto updated = writer_.UpdateClaimStatus(c);
    if (!updated.ok()) return WriteError(updated.status(), "deallocate " + ns + "/" + name);
    cache_.AssumeClaim(*updated);
    claim = *updated;
  }
  auto u = RemoveFinalizer(*claim);
  if (!u.ok() && !k8s::IsNotFound(u.status())) {
    return WriteError(u.status(), "remove finalizer of " + ns + "/" + name);
  }
  return Result{};
}

StatusOr<Result> Controller::SyncClaim(const std::string& ns, const std::string& name) {
  ClaimPtr claim = cache_.GetClaim(ns, name);
  if (!claim || Recent(deleted_claims_, claim->metadata.uid)) return Result{};
  if (auto dup = DeleteDuplicateClaim(*claim)) return *dup;
  if (!DracoOwnsLifecycle()) {
    // Reservations, deallocation, finalizers and deletion are upstream's controller's; draco
    // only allocates what nobody else would.
    if (WantsStandaloneAllocation(*claim)) return AllocateStandalone(*claim);
    return Result{};
  }
  auto checked = CheckReservations(*claim);
  if (!checked.ok()) return checked.status();
  const std::vector<api::ResourceClaimConsumerReference>& valid = checked->valid;
  const bool dropped = checked->dropped;
  const bool group_kept = checked->group_kept;
  if (dropped && valid.empty() && !claim->metadata.deletion_timestamp) {
    if (auto done = DeleteClaimOfFinishedOwner(*claim)) return *done;
  }
  if (dropped) {
    auto updated = DropReservations(*claim, valid);
    if (!updated.ok()) return updated.status();
    claim = *updated;
  }
  if (claim->metadata.deletion_timestamp && valid.empty() &&
      HasFinalizer(claim->metadata, kDeleteProtectionFinalizer)) {
    return FinishDeletedClaim(*claim);
  }
  // Not in the cache: the garbage collector deletes claims of deleted pods.
  if (valid.empty() && !claim->metadata.deletion_timestamp &&
      (OwnerPodDone(*claim) || OwnerPodGroupGone(*claim))) {
    Status st = writer_.DeleteClaim(ns, name, claim->metadata.uid);
    if (!st.ok() && !k8s::IsNotFound(st)) return WriteError(st, "delete claim " + name);
    return Result{};
  }

  if (WantsStandaloneAllocation(*claim)) return AllocateStandalone(*claim);
  // Without the gate nothing watches PodGroups: look again later, so a reservation of a group
  // that goes away is not kept until the next restart.
  if (group_kept && !options_.workload_claims) return Result{kPodGroupRecheck};
  return Result{};
}

}  // namespace draco::reconcilers
