// Gate removal (see controller.h, ControllerOptions::release_after_observed): a gated pod whose
// claims draco allocated is released once the watch shows the allocations, without a worker
// waiting for that meanwhile.
#include <spdlog/spdlog.h>

#include "controller/reconcilers/controller.h"
#include "controller/reconcilers/controller_util.h"
#include "k8sclient/api_error.h"

namespace draco::reconcilers {

void Controller::ForgetPendingRelease(const std::string& pod_uid) {
  std::lock_guard<std::mutex> l(mu_);
  pending_releases_.erase(pod_uid);
}

std::optional<Controller::PendingRelease> Controller::FindPendingRelease(
    const std::string& pod_uid) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = pending_releases_.find(pod_uid);
  if (it == pending_releases_.end()) return std::nullopt;
  return it->second;
}

std::optional<StatusOr<Result>> Controller::ReleasePending(const api::Pod& pod, const PodClaims& pc,
                                                           bool all_allocated) {
  if (!all_allocated || pc.planned_extended) return std::nullopt;
  auto p = FindPendingRelease(pod.metadata.uid);
  if (!p) return std::nullopt;
  return ReleaseAllocatedPod(pod, pc, p->node, p->pin);
}

Status Controller::Nominate(const api::Pod& pod, const PodClaims& pc, const std::string& node,
                            bool pin) {
  PodPtr latest = cache_.GetPod(pod.metadata.namespace_, pod.metadata.name);
  const api::Pod& target = latest && latest->metadata.uid == pod.metadata.uid ? *latest : pod;
  const bool statuses = pc.statuses_unwritten && !StatusesRecorded(target, pc.statuses);
  const bool nominate = pin && target.status.nominated_node_name != node;
  if (!statuses && !nominate) return OkStatus();
  auto written = nominate ? writer_.NominatePod(target, statuses ? &pc.statuses : nullptr, node)
                          : writer_.ApplyPodClaimStatuses(target, pc.statuses);
  if (!written.ok()) return written.status();
  if (*written) cache_.AssumePod(*written);
  return OkStatus();
}

StatusOr<Result> Controller::ReleaseAllocatedPod(const api::Pod& pod, const PodClaims& pc,
                                                 const std::string& node, bool pin) {
  const std::string pod_key = pod.metadata.namespace_ + "/" + pod.metadata.name;
  if (auto st = Nominate(pod, pc, node, pin); !st.ok()) {
    if (k8s::IsNotFound(st)) return Result{};
    cache_.ClearNomination(pod_key);
    return WriteError(st, "write the pod's nominated node and claim statuses");
  }
  if (options_.release_after_observed) {
    bool observed = true;
    for (const auto& c : pc.claims) {
      ClaimPtr now = cache_.GetClaim(c->metadata.namespace_, c->metadata.name);
      observed = observed && (!now || cache_.ClaimObserved(*now));
    }
    if (!observed) {
      // OnClaim brings the pod back (urgently) when the watch delivers the allocation.
      const auto t = clock_.Now();
      Clock::TimePoint deadline;
      {
        std::lock_guard<std::mutex> l(mu_);
        deadline = pending_releases_
                       .try_emplace(pod.metadata.uid,
                                    PendingRelease{t + options_.observe_timeout, node, pin})
                       .first->second.deadline;
      }
      if (t < deadline) return Result{deadline - t};
      spdlog::debug(
          "pod {}: allocation not seen through the watch after {} ms; releasing anyway", pod_key,
          std::chrono::duration_cast<std::chrono::milliseconds>(options_.observe_timeout).count());
    }
    ForgetPendingRelease(pod.metadata.uid);
  }
  if (auto repaired = ReleaseDoubleBooked(pod, pc)) return *repaired;
  // This pass may have applied the pod's status: patch the newest version we know.
  PodPtr latest = cache_.GetPod(pod.metadata.namespace_, pod.metadata.name);
  const api::Pod& target = latest && latest->metadata.uid == pod.metadata.uid ? *latest : pod;
  auto released = writer_.RemoveSchedulingGate(target, kSchedulingGate, pin ? node : std::string());
  if (!released.ok()) {
    if (k8s::IsNotFound(released.status())) return Result{};
    cache_.ClearNomination(pod_key);
    return WriteError(released.status(), "remove scheduling gate");
  }
  if (*released) cache_.AssumePod(*released);
  spdlog::debug("pod {}: claims allocated on node {}, gate removed", pod_key, node);
  return Result{};
}

}  // namespace draco::reconcilers
