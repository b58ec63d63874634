// PodGroup claims (DRAWorkloadResourceClaims): what kube-controller-manager's resourceclaim
// controller does for scheduling.k8s.io PodGroups (k8s.io/kubernetes v1.37
// pkg/controller/resourceclaim syncPodGroup/handlePodGroupClaim), and the checks of PodGroup
// reservations. See controller.h for the overview.
#include <spdlog/spdlog.h>

#include "controller/reconcilers/controller.h"
#include "k8sclient/api_error.h"

namespace draco::reconcilers {
namespace {

EventTarget PodGroupTarget(const api::PodGroup& g) {
  return {std::string(api::kSchedulingGroup) + "/" + api::kPodGroupVersion, "PodGroup",
          g.metadata.namespace_, g.metadata.name, g.metadata.uid};
}

std::optional<std::string> RecordedClaim(const api::PodGroup& g, const std::string& name) {
  for (const auto& st : g.status.resource_claim_statuses) {
    if (st.name == name) return st.resource_claim_name;
  }
  return std::nullopt;
}

}  // namespace

void Controller::OnPodGroup(const PodGroupPtr& old, const PodGroupPtr& now) {
  const PodGroupPtr& g = now ? now : old;
  if (!g) return;
  const std::string& ns = g->metadata.namespace_;
  if (!now) Remember(deleted_groups_, g->metadata.uid);
  if (!now || now->metadata.deletion_timestamp) {
    // The group's reservations go: its generated claims and the claims it names.
    for (const auto& c : cache_.ClaimsOwnedByPod(g->metadata.uid)) {
      queue_.Add(QueueKey("claim", ns, c->metadata.name));
    }
    for (const auto& st : g->status.resource_claim_statuses) {
      if (st.resource_claim_name) queue_.Add(QueueKey("claim", ns, *st.resource_claim_name));
    }
    for (const auto& gc : g->spec.resource_claims) {
      if (gc.resource_claim_name) queue_.Add(QueueKey("claim", ns, *gc.resource_claim_name));
    }
    if (!now) return;
  }
  const bool claims = options_.workload_claims && !now->spec.resource_claims.empty();
  // Gang members wait for their PodGroup's minimum (group_sync.cc): wake them when it arrives.
  if (!claims && !options_.groups) return;
  if (claims && !now->metadata.deletion_timestamp) {
    queue_.Add(QueueKey("podgroup", ns, now->metadata.name));
  }
  // Members may be waiting for the group's claims (recorded in its status).
  for (const auto& p : cache_.PodGroupMembers(ns, now->metadata.name)) {
    if (!p->metadata.deletion_timestamp && !IsPodDone(*p)) {
      queue_.Add(QueueKey("pod", ns, p->metadata.name));
    }
  }
}

StatusOr<Result> Controller::SyncPodGroup(const std::string& ns, const std::string& name) {
  // With upstream's controller owning the lifecycle, it creates and records the group's claims.
  if (!options_.workload_claims || !DracoOwnsLifecycle()) return Result{};
  PodGroupPtr group = cache_.GetPodGroup(ns, name);
  if (!group || group->metadata.deletion_timestamp) return Result{};
  std::vector<api::PodGroupResourceClaimStatus> desired;
  bool changed = false;
  for (const auto& gc : group->spec.resource_claims) {
    if (!gc.resource_claim_template_name) continue;  // a user claim: nothing to create
    std::optional<std::string> recorded = RecordedClaim(*group, gc.name);
    ClaimPtr claim;
    if (recorded) {
      claim = cache_.GetClaim(ns, *recorded);
      if (claim && !IsClaimForPodGroup(*claim, *group)) {
        spdlog::warn("PodGroup {}/{}: recorded claim {} is not owned by the group; re-creating", ns,
                     name, *recorded);
        claim = nullptr;
      }
    }
    // An orphan from a create whose status apply failed.
    if (!claim) claim = cache_.FindGeneratedClaim(group->metadata.uid, gc.name);
    if (!claim) {
      TemplatePtr tmpl = cache_.GetTemplate(ns, *gc.resource_claim_template_name);
      if (!tmpl) {
        std::string msg = "PodGroupResourceClaim " + gc.name + ": resource claim template \"" +
                          *gc.resource_claim_template_name + "\" not found";
        events_.Record(PodGroupTarget(*group), "Warning", "FailedResourceClaimCreation", msg);
        return NotFoundError(msg);  // retried with backoff
      }
      auto created = writer_.CreateClaim(ClaimFromPodGroupTemplate(*group, gc, *tmpl));
      if (metrics_) metrics_->IncClaimCreate(created.ok());
      if (!created.ok()) {
        if (k8s::IsRefusal(created.status())) {
          events_.Record(PodGroupTarget(*group), "Warning", "FailedResourceClaimCreation",
                         "PodGroupResourceClaim " + gc.name + ": " + created.status().message());
        }
        return created.status().WithPrefix("create claim for PodGroup claim " + gc.name);
      }
      claim = *created;
      cache_.AssumeClaim(claim);
      spdlog::debug("PodGroup {}/{}: created claim {} for {}", ns, name, claim->metadata.name,
                    gc.name);
    }
    api::PodGroupResourceClaimStatus st;
    st.name = gc.name;
    st.resource_claim_name = claim->metadata.name;
    if (recorded != claim->metadata.name) changed = true;
    desired.push_back(std::move(st));
  }
  if (!changed) return Result{};
  auto applied = writer_.ApplyPodGroupClaimStatuses(*group, desired);
  if (!applied.ok()) {
    if (k8s::IsNotFound(applied.status())) return Result{};  // gone meanwhile
    return applied.status().WithPrefix("apply PodGroup resourceClaimStatuses");
  }
  cache_.UpsertPodGroup(*applied);
  for (const auto& p : cache_.PodGroupMembers(ns, name)) {
    if (!p->metadata.deletion_timestamp && !IsPodDone(*p)) {
      queue_.Add(QueueKey("pod", ns, p->metadata.name));
    }
  }
  return Result{};
}

StatusOr<PodGroupPtr> Controller::PodGroupOfPod(const api::Pod& pod) {
  std::string name = PodGroupNameOf(pod);
  if (!options_.workload_claims || name.empty()) return PodGroupPtr(nullptr);
  PodGroupPtr g = cache_.GetPodGroup(pod.metadata.namespace_, name);
  if (!g) {
    // The group's add event enqueues its members (OnPodGroup).
    return NotFoundError("PodGroup " + pod.metadata.namespace_ + "/" + name + " of pod " +
                         pod.metadata.name + " not found");
  }
  return g;
}

ClaimPtr Controller::FindPodGroupClaim(const api::Pod& pod, const api::PodGroup& group,
                                       const api::PodResourceClaim& pc,
                                       const ResolvedName& resolved) {
  const std::string& ns = pod.metadata.namespace_;
  if (resolved.name) {
    ClaimPtr c = cache_.GetClaim(ns, *resolved.name);
    if (c && IsClaimForPodGroup(*c, group)) return c;
  }
  if (auto recorded = RecordedClaim(group, pc.name)) {
    ClaimPtr c = cache_.GetClaim(ns, *recorded);
    if (c && IsClaimForPodGroup(*c, group)) return c;
  }
  return cache_.FindGeneratedClaim(group.metadata.uid, pc.name);
}

StatusOr<bool> Controller::PodGroupReservationValid(const std::string& ns,
                                                    const api::ResourceClaimConsumerReference& r) {
  if (Recent(deleted_groups_, r.uid)) return false;
  PodGroupPtr g = cache_.GetPodGroup(ns, r.name);
  if (!g) {
    // Not in the cache (just created, or nothing watches PodGroups): ask the API server before
    // dropping a group's reservation while its pods may be scheduling.
    auto live = writer_.GetPodGroupLive(ns, r.name);
    if (!live.ok()) return live.status();
    g = *live;
  }
  if (g && g->metadata.uid == r.uid) return true;
  Remember(deleted_groups_, r.uid);
  return false;
}

bool Controller::OwnerPodGroupGone(const api::ResourceClaim& claim) {
  std::string uid = OwnerPodGroupUid(claim);
  if (uid.empty()) return false;
  if (Recent(deleted_groups_, uid)) return true;
  PodGroupPtr g = cache_.GetPodGroup(claim.metadata.namespace_, OwnerPodGroupName(claim));
  return g && g->metadata.uid != uid;
}

}  // namespace draco::reconcilers
