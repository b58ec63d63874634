// Pod claims (see controller.h, "Pod sync" step 1): a pod's claim entries resolved to claims,
// its template claims created and recorded in its status when draco owns the claim lifecycle
// (claim_lifecycle.h), or waited for when kube-controller-manager's resourceclaim controller does.
#include <algorithm>

#include <spdlog/spdlog.h>

#include "controller/reconcilers/controller.h"
#include "controller/reconcilers/controller_util.h"
#include "k8sclient/api_error.h"

namespace draco::reconcilers {

Status Controller::EnsureGeneratedClaims(const api::Pod& pod, PodClaims& out, bool may_write) {
  const std::string& ns = pod.metadata.namespace_;
  std::vector<api::PodResourceClaimStatus> desired;
  bool changed = false;
  auto group = PodGroupOfPod(pod);
  if (!group.ok()) return group.status();
  for (const auto& pc : pod.spec.resource_claims) {
    auto resolved = ResolveClaimName(pod, pc);
    StatusOr<api::ResourceClaimConsumerReference> bind =
        resolved.ok() ? BindTo(pod, group->get(), pc)
                      : StatusOr<api::ResourceClaimConsumerReference>(resolved.status());
    if (!bind.ok()) {
      events_.Record(PodTarget(pod), "Warning", "FailedResourceClaimCreation",
                     "PodResourceClaim " + pc.name + ": " + bind.status().message());
      return TerminalError(bind.status().message());
    }
    out.bind_to.push_back(*bind);
    if (pc.resource_claim_name) {
      ClaimPtr c = cache_.GetClaim(ns, *pc.resource_claim_name);
      if (!c) out.missing.push_back(*pc.resource_claim_name);
      out.claims.push_back(std::move(c));
      continue;
    }
    // Template entry.
    ClaimPtr claim;
    if (IsPodGroupConsumer(*bind)) {
      // The group's claim: made by SyncPodGroup, never by the pod.
      claim = FindPodGroupClaim(pod, **group, pc, *resolved);
      if (!claim) {
        out.missing.push_back("for claim " + pc.name + " of PodGroup " + (*group)->metadata.name);
        out.claims.push_back(nullptr);
        continue;
      }
    } else if (resolved->name) {
      claim = cache_.GetClaim(ns, *resolved->name);
      if (claim && !IsClaimForPod(*claim, pod)) {
        spdlog::warn("pod {}/{}: recorded claim {} is not owned by the pod; re-creating", ns,
                     pod.metadata.name, *resolved->name);
        claim = nullptr;
      }
    }
    if (!claim && !DracoOwnsLifecycle()) {
      // kube-controller-manager's resourceclaim controller creates it and records it in the
      // pod's status (whose update brings the pod back); until then draco waits. Only a
      // recorded claim counts: an unrecorded one may be a duplicate of a mode switch.
      out.missing.push_back("for claim " + pc.name + " of pod " + pod.metadata.name);
      out.claims.push_back(nullptr);
      out.waiting_for_lifecycle = true;
      continue;
    }
    if (!claim) claim = cache_.FindGeneratedClaim(pod.metadata.uid, pc.name);
    if (!claim && !may_write) {
      out.missing.push_back("for claim " + pc.name + " of pod " + pod.metadata.name);
      out.claims.push_back(nullptr);
      continue;
    }
    if (!claim) {
      TemplatePtr tmpl = cache_.GetTemplate(ns, *pc.resource_claim_template_name);
      if (!tmpl) {
        std::string msg = "PodResourceClaim " + pc.name + ": resource claim template \"" +
                          *pc.resource_claim_template_name + "\" not found";
        events_.Record(PodTarget(pod), "Warning", "FailedResourceClaimCreation", msg);
        // The template's add event re-enqueues the pod (OnTemplate); a slow retry covers a
        // missed event.
        return NotFoundError(msg);
      }
      // draco allocates claims of gated pods itself, so it sets the finalizer at creation and
      // saves one write per claim.
      bool with_finalizer = options_.allocate && HasSchedulingGate(pod);
      api::ResourceClaim fresh = ClaimFromTemplate(pod, pc, *tmpl, with_finalizer);
      if (ClaimPtr taken = cache_.GetClaim(ns, fresh.metadata.name);
          taken && !IsClaimForPod(*taken, pod)) {
        // Another pod's claim has the derived name (a hash collision): the server picks one.
        fresh.metadata.name.clear();
      }
      auto created = writer_.CreateClaim(fresh);
      if (metrics_) metrics_->IncClaimCreate(created.ok());
      if (!created.ok() && !fresh.metadata.name.empty() && k8s::IsAlreadyExists(created.status())) {
        // An earlier attempt created it and its answer was lost (a reset connection, a
        // timeout). Its add event brings the pod back, which then adopts it (or, if it is not
        // this pod's, creates one with a server-picked name).
        return UnavailableError("claim " + fresh.metadata.name + " for " + pc.name +
                                " exists already (an earlier create whose answer was lost); "
                                "waiting for the informer to deliver it");
      }
      if (!created.ok()) {
        // Only a refusal is news for the pod's owner; an unreachable or overloaded API server
        // (or the end of our term) is retried and logged by the worker, not reported per pod.
        if (k8s::IsRefusal(created.status())) {
          events_.Record(PodTarget(pod), "Warning", "FailedResourceClaimCreation",
                         "PodResourceClaim " + pc.name + ": " + created.status().message());
        }
        return WriteError(created.status(), "create claim for " + pc.name);
      }
      claim = *created;
      cache_.AssumeClaim(claim);
    }
    api::PodResourceClaimStatus st;
    st.name = pc.name;
    st.resource_claim_name = claim->metadata.name;
    if (resolved->name != claim->metadata.name) changed = true;
    desired.push_back(std::move(st));
    out.claims.push_back(std::move(claim));
  }
  out.statuses = desired;
  if (!changed || !may_write) return OkStatus();
  if (out.defer_statuses && !*group) {  // a PodGroup's members keep the early write
    out.statuses_unwritten = true;
    return OkStatus();
  }
  auto applied = writer_.ApplyPodClaimStatuses(pod, desired);
  if (!applied.ok()) return WriteError(applied.status(), "apply pod resourceClaimStatuses");
  if (*applied) cache_.AssumePod(*applied);
  return OkStatus();
}

StatusOr<Result> Controller::WaitForLifecycle(const api::Pod& pod, const PodClaims& pc) {
  // Upstream's controller usually creates a claim within a second: a pod waits quietly for a
  // while (the claim's creation and the pod's status update bring it back), then asks for a
  // probe (is that controller still there?) and says why it waits.
  Clock::Duration waited = kLifecycleQuiet;
  if (auto created = ParseTimestamp(pod.metadata.creation_timestamp)) {
    waited = std::max(Clock::Duration::zero(),
                      std::chrono::duration_cast<Clock::Duration>(clock_.WallNow() - *created));
  }
  if (waited < kLifecycleQuiet) return Result{kLifecycleQuiet - waited};
  if (lifecycle_ && waited >= kLifecycleStandIn && (!probe_ || probe_->Failing())) {
    // No probe can run: a pod whose templates all exist and that nobody gave a claim for this
    // long, with no claim of upstream's seen meanwhile, tells the same.
    bool templates = true;
    for (const auto& c : pod.spec.resource_claims) {
      if (c.resource_claim_template_name &&
          !cache_.GetTemplate(pod.metadata.namespace_, *c.resource_claim_template_name)) {
        templates = false;
      }
    }
    if (templates) lifecycle_->ProbeFinished(false, clock_.Now() - waited);
    if (DracoOwnsLifecycle()) {
      queue_.Add(QueueKey("pod", pod.metadata.namespace_, pod.metadata.name));
      return Result{};
    }
  }
  if (probe_) {
    probe_->RequestSoon();
    queue_.Add(probe_->QueueKey());
  }
  const bool undecided = lifecycle_ && lifecycle_->Owner() == LifecycleOwner::kUndecided;
  std::string msg = "waiting for ResourceClaim " + pc.missing.front() +
                    (undecided ? ": draco has not determined yet whether kube-controller-manager's "
                                 "resourceclaim controller runs (probing)"
                               : " to be created by kube-controller-manager's resourceclaim "
                                 "controller");
  if (lifecycle_) msg += "; claim lifecycle: " + lifecycle_->Reason();
  events_.Record(PodTarget(pod), "Normal", "WaitingForClaimCreation", msg);
  return Result{kLifecycleQuiet};
}

}  // namespace draco::reconcilers
