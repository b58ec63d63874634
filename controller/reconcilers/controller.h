// Controller: draco's claim lifecycle (a drop-in for kube-controller-manager's
// resourceclaim-controller) plus allocation before scheduling.
//
// Keys. One work queue carries "pod:<ns>/<name>" and "claim:<ns>/<name>"; a key is never
// processed by two workers at once (workqueue guarantee), so per-object logic needs no locks.
// Pods are served in arrival order: a new pod's first pass creates its claims, allocates them and
// (once the watch shows the allocation) releases it. Only work that finishes what was started goes
// in the queue's urgent line (Enqueuer::AddUrgent): the claims of a pod that finished or went
// (they free devices), and, first of all, a gated pod one of whose claims the watch shows
// allocated (AddNext: gate removal). Claim creation is not urgent. Measured in the 2,000-pod
// burst of tests/bench/throughput.sh (medians of 3, each interleaved with the same reference
// build), creating every new pod's claims ahead of all allocations took claim creation from ~14 s
// to 0.8 s p50 but moved the wait into allocation (0.3 s -> 21 s p50) and pods were bound later
// (p50 1.6x the reference's); in arrival order pod bound p50 is 1.26x the reference's, claim
// allocation 0.27 s p50. pods/s and draco's CPU per pod did not differ beyond the noise.
//
// Pod sync (SyncPod):
//   1. For every spec.resourceClaims entry with a template: find the recorded claim, else an
//      orphan controlled by the pod (owner index + pod-claim-name annotation; our own creates are
//      assumed into the cache at once, so a retry never creates a duplicate), else create it from
//      the template. Then write the full set of resourceClaimStatuses this controller owns, if
//      it changed (a JSON patch of pods/status). For a gated pod draco may pin, that write waits
//      for the release in step 3, where it also sets status.nominatedNodeName to the chosen node
//      (one pod write instead of two: kube-scheduler, finding the pod already nominated to the
//      node it picks, skips its own status patch before PreBind); a pass that does not release
//      the pod writes the statuses at its end, as upstream does at once.
//   2. Bound pod: reserve allocated claims that are not reserved for it (UpdateStatus with RV).
//   3. Pod with the draco.dev/allocation gate: filter nodes (fit + allocated claims' node
//      selectors), let the allocator choose a node and devices for the unallocated claims, write
//      finalizer (if missing) and status.allocation (+ allocationTimestamp) with optimistic
//      concurrency, then remove the gate. The pod is pinned to the chosen node (required node
//      affinity in the gate removal) and its new claims are reserved for it in the allocation
//      write only when the allocation restricts it to that node alone and FitCoversPod says
//      draco checked every constraint of the pod; otherwise reservedFor is left to the scheduler
//      (kube-scheduler's DynamicResources PreBind writes it just before binding), which keeps
//      step 4 possible. Unschedulable/errors give Warning Events on the pod and its claims and
//      park the pod until slices, classes, nodes, taint rules or a deallocation change the
//      picture (event-driven, no polling).
//   4. Released, unbound pod (safety net, RecoverUnschedulable): when its scheduler reports it
//      Unschedulable (PodScheduled=False), the claims draco allocated that nobody reserved yet
//      are deallocated (status update with resourceVersion precondition), so that the scheduler
//      can allocate them on a node it accepts; Warning Event DeallocatedUnschedulable on the pod
//      and draco_released_unschedulable_total.
//   Binding conditions (binding_conditions.h): step 3 keeps the gate while a device's binding
//   conditions are pending, and deallocates and allocates again when one fails or times out.
//   Extended resources (KEP-5004, extended_resource.h): a gated pod's special claim is planned
//   with its claims but written by kube-scheduler; pods are followed through their status's
//   extendedResourceClaimStatus so the special claim is released and deleted like a generated one.
//   PodGroup claims (DRAWorkloadResourceClaims, podgroup.cc): a member pod's claim entry that its
//   PodGroup lists too (same name and claim/template name) is the group's claim: created once
//   from the template for the PodGroup by SyncPodGroup ("podgroup:<ns>/<name>" keys, the group
//   as controller owner, recorded in the group's status.resourceClaimStatuses), recorded in each
//   member's status, allocated by the first member draco allocates and shared by the others, and
//   reserved for the PodGroup instead of the pod.
// Claim sync (SyncClaim): drop reservedFor entries of deleted, finished or replaced pods (deleted
// UID cache, lister, then a live GET before dropping a pod the cache does not know), deallocate
// when the last consumer went (builtin finalizer present), remove the finalizer once unallocated
// (after deallocation, or when the claim is being deleted), delete generated claims whose pod is
// done, and allocate standalone claims annotated draco.dev/allocation=immediate. PodGroup entries
// are dropped when the group is deleted or replaced (deleted UID memory, cache, then a live GET),
// whatever the gate says (nothing keeps a reservation of a gone group), and a claim generated for
// a gone group is deleted.
//
// Threading: Reconcile() is called concurrently by the worker threads; the On*() event hooks by
// informer threads. All are thread-safe. Allocation decisions are serialised by one mutex (the
// allocator's in-flight marks need that); API writes run outside it, in parallel.
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "controller/group/group.h"
#include "controller/metrics/controller_metrics.h"
#include "controller/reconcilers/claim_lifecycle.h"
#include "controller/reconcilers/cluster_cache.h"
#include "controller/reconcilers/interfaces.h"
#include "controller/reconcilers/lifecycle_probe.h"
#include "controller/reconcilers/reconciler.h"

namespace draco::reconcilers {

struct ControllerOptions {
  // Allocate claims of gated pods and immediate standalone claims (off: lifecycle only).
  bool allocate = true;
  // Requeue delay when a claim is being allocated by another worker.
  Clock::Duration busy_retry = std::chrono::milliseconds(20);
  // Remove the scheduling gate only once the informer has delivered the allocated version of
  // every claim of the pod. Releasing earlier races kube-scheduler's claim informer: a scheduler
  // that has not seen the allocation yet allocates the claim itself and fails in PreBind ("got
  // allocated elsewhere in the meantime"), which sends the pod into the scheduler's backoff.
  // The worker does not wait: the pod goes back to the queue, and the watch event that shows
  // the allocation puts it in the urgent line (OnClaim), so the gate comes off as soon as the
  // watch confirms the allocation, without a worker blocked meanwhile (under load the watch lags
  // by seconds, and blocked workers delayed every other pod). `observe_timeout` after the first
  // such pass the pod is released anyway (kube-scheduler recovers from the race by itself, only
  // slower).
  bool release_after_observed = true;
  Clock::Duration observe_timeout = std::chrono::seconds(2);
  // When a claim's allocation restricts the pod to exactly one node (node-local devices), the
  // gate removal also adds that node as a required node affinity (see
  // ApiWriter::RemoveSchedulingGate). The pod's placement is unchanged, but kube-scheduler then
  // filters one node instead of all of them. Only for pods FitCoversPod accepts; a pinned pod's
  // new claims are reserved for it in the allocation write (unpinned: left to the scheduler).
  bool pin_node = true;
  // Device binding conditions (binding_conditions.h): a gated pod is released only once every
  // device of its claims that has bindingConditions reports them True; a failed condition, or
  // none True `binding_timeout` after the allocation, makes draco deallocate the claim and
  // allocate it again. Off: the pod is released at once and kube-scheduler waits in PreBind.
  bool binding_conditions = true;
  std::chrono::milliseconds binding_timeout = std::chrono::seconds(600);
  // DRAExtendedResource: plan the special claim of gated pods that ask for extended resources a
  // DeviceClass serves (off: such requests are left to device plugins, as kube-scheduler does).
  bool extended_resources = true;
  // DRAWorkloadResourceClaims: create the claims of PodGroups' templates, share them among the
  // group's pods and reserve them for the group (off: pods get their own claims, as the API
  // server drops spec.resourceClaims of PodGroups with the gate off).
  bool workload_claims = false;
  // All-or-nothing groups (group_sync.cc, controller/group/group.h): the gated members of a group
  // are allocated in one decision once its minimum is there, and released together.
  bool groups = true;
  // Fairness: a group that has waited `group_reserve_after` since its first failed placement
  // reserves: no other pod or group is allocated (they stay gated, Event WaitingForGroup) until
  // it is placed or gone, for at most `group_reserve_max`; then it goes to the back of the line
  // (its wait starts again) and everything waiting is retried. One group reserves at a time.
  Clock::Duration group_reserve_after = std::chrono::minutes(2);
  Clock::Duration group_reserve_max = std::chrono::minutes(10);
  // Testing only (e2e crash test, env DRACO_TESTING_EXIT_AFTER_GROUP_WRITES): when > 0, the
  // process exits at once after writing that many members' allocations of a group.
  int testing_exit_after_group_writes = 0;
};

class Controller {
 public:
  // All references must outlive the Controller. `metrics` may be null.
  Controller(ClusterCache& cache, ApiWriter& writer, ClaimAllocator& allocator, EventSink& events,
             Enqueuer& queue, Clock& clock, metrics::ControllerMetrics* metrics,
             ControllerOptions options = {});

  // Event hooks, called after the cache was updated. `old`/`now` may be null (add/delete).
  void OnPod(const PodPtr& old, const PodPtr& now);
  void OnClaim(const ClaimPtr& old, const ClaimPtr& now);
  void OnTemplate(const TemplatePtr& t);
  void OnPodGroup(const PodGroupPtr& old, const PodGroupPtr& now);
  // Slices, classes, taint rules or nodes changed: retry parked allocations.
  void OnAllocationInputsChanged();

  // Queues the claims the pod owns when there are more than its status records (duplicates).
  void EnqueueDuplicateClaims(const api::Pod& pod);

  // Start-up resync: every pod and claim in the cache (and the lifecycle probe, if any).
  void EnqueueAll();

  // How long a pod waits quietly for upstream's controller to create its claim before it asks
  // for a probe and gets an Event (WaitForLifecycle).
  static constexpr Clock::Duration kLifecycleQuiet = std::chrono::seconds(10);
  // A second claim for one pod entry is deleted this long after its creation
  // (DeleteDuplicateClaim).
  static constexpr Clock::Duration kDuplicateGrace = std::chrono::seconds(10);
  // While no probe can run, a pod that waited this long stands in for one (WaitForLifecycle).
  static constexpr Clock::Duration kLifecycleStandIn = std::chrono::seconds(30);

  // Who owns the claim lifecycle (claim_lifecycle.h) and the probe that finds out (work-queue
  // key probe->QueueKey(), run by Reconcile). Unset (the default): draco owns it. Call before the
  // workers start; both must outlive the controller.
  void SetLifecycle(ClaimLifecycle* lifecycle, LifecycleProbe* probe) {
    lifecycle_ = lifecycle;
    probe_ = probe;
  }

  StatusOr<Result> Reconcile(const Request& request);
  StatusOr<Result> SyncPod(const std::string& ns, const std::string& name);
  StatusOr<Result> SyncClaim(const std::string& ns, const std::string& name);
  StatusOr<Result> SyncPodGroup(const std::string& ns, const std::string& name);

  // Auditor (double_booking.cc): devices allocated to two claims that may not share them; logs
  // each finding, queues the gated pods whose worker repairs it (their claim is deallocated and
  // allocated again), reports the rest (Event DeviceAllocatedTwice, metrics). Returns the count.
  size_t Audit();

  // Number of pods/claims parked after a failed allocation (for tests and logs).
  size_t ParkedCount() const;

 private:
  struct PodClaims {
    std::vector<ClaimPtr> claims;  // resolved, pod order (null: missing user claim)
    // Per entry of `claims`: whom the claim is reserved for (the pod, or its PodGroup).
    std::vector<api::ResourceClaimConsumerReference> bind_to;
    std::vector<std::string> missing;
    // Gated pod with DRA-backed extended resources: the special claim kube-scheduler will make,
    // as draco plans it (never written; see extended_resource.h).
    ClaimPtr planned_extended;
    // The pod's resourceClaimStatuses entries for its template claims, in pod order.
    std::vector<api::PodResourceClaimStatus> statuses;
    // Set by the caller: a gated pod draco may pin leaves `statuses` unwritten here, so that the
    // release writes them with status.nominatedNodeName in one patch (see ApiWriter::NominatePod);
    // any other outcome of the pass writes them (SyncPod).
    bool defer_statuses = false;
    bool statuses_unwritten = false;  // out: deferred, and the pod's status differs
    // out: a template claim is kube-controller-manager's to create (or nobody knows yet whose).
    bool waiting_for_lifecycle = false;
  };
  // A pod with pc.waiting_for_lifecycle: requeued quietly for kLifecycleQuiet after its
  // creation, then a probe is requested and an Event says what it waits for.
  StatusOr<Result> WaitForLifecycle(const api::Pod& pod, const PodClaims& pc);
  bool DracoOwnsLifecycle() const { return lifecycle_ == nullptr || lifecycle_->DracoOwns(); }
  // `may_write` false: resolve only (a missing generated claim is reported in `out.missing`, the
  // pod's status is not applied); used for the other members of a group.
  Status EnsureGeneratedClaims(const api::Pod& pod, PodClaims& out, bool may_write = true);
  // The pod's PodGroup when the gate is on and the pod names one; NotFound while the group is
  // not in the cache (upstream waits for it too). Null otherwise.
  StatusOr<PodGroupPtr> PodGroupOfPod(const api::Pod& pod);
  // The group's claim for pod claim entry `pc`: recorded in the pod's status and controlled by
  // the group, else found by owner and annotation. Null when the group has not made it yet.
  ClaimPtr FindPodGroupClaim(const api::Pod& pod, const api::PodGroup& group,
                             const api::PodResourceClaim& pc, const ResolvedName& resolved);
  // Whether reservedFor entry `r` (a PodGroup) of a claim in `ns` is still valid: the group exists
  // with that UID (deleted UID memory, cache, then a live GET).
  StatusOr<bool> PodGroupReservationValid(const std::string& ns,
                                          const api::ResourceClaimConsumerReference& r);
  // The claim was generated for a PodGroup that is gone (deleted, or replaced by another UID).
  bool OwnerPodGroupGone(const api::ResourceClaim& claim);
  StatusOr<Result> ReserveForBoundPod(const api::Pod& pod, const PodClaims& claims);
  // `selector`: a CEL device selector every new allocation must also satisfy (a group's
  // match-attribute domain), or null.
  StatusOr<Result> AllocateForPod(const api::Pod& pod, const PodClaims& claims,
                                  const std::string* selector = nullptr);
  // AllocateForPod's checks before the allocator runs: sorts the pod's claims into `allocated` and
  // `to_allocate`; a result when the pod must wait (missing or deleted claim, invalid
  // constraints, binding conditions pending, another group reserving capacity).
  std::optional<StatusOr<Result>> NotReadyToAllocate(const api::Pod& pod, const PodClaims& pc,
                                                     std::vector<ClaimPtr>& allocated,
                                                     std::vector<ClaimPtr>& to_allocate);
  // After the allocation is written: writes the deferred resourceClaimStatuses and, when `pin`,
  // status.nominatedNodeName (one patch), then removes the gate (pinning the pod to `node` when
  // `pin`) once the watch shows the allocation, or observe_timeout after the first pass that
  // found it unobserved; until then returns a requeue at that deadline (OnClaim brings the pod
  // back sooner).
  StatusOr<Result> ReleaseAllocatedPod(const api::Pod& pod, const PodClaims& pc,
                                       const std::string& node, bool pin);
  // Before the gate comes off: the deferred `pc.statuses` unless the pod has them, and with `pin`
  // status.nominatedNodeName = `node` unless set, in one write.
  Status Nominate(const api::Pod& pod, const PodClaims& pc, const std::string& node, bool pin);
  // Writes `pc.statuses` (deferred by EnsureGeneratedClaims) unless the pod has them already.
  Status WriteDeferredStatuses(const api::Pod& pod, const PodClaims& pc);
  // Groups (group_sync.cc). The pod's group, when groups are on and it is in one.
  std::optional<group::GroupRef> GroupOfPod(const api::Pod& pod) const;
  // A gated member's sync: waits for the minimum, places the group (AllocateGroup), or, once the
  // minimum runs, allocates a late member alone in the group's domain.
  StatusOr<Result> SyncGroupMember(const api::Pod& pod, const PodClaims& claims,
                                   const group::GroupRef& g);
  struct GroupMember;
  StatusOr<Result> AllocateGroup(const api::Pod& pod, const PodClaims& claims,
                                 const group::GroupRef& g, const std::vector<PodPtr>& gated,
                                 size_t released);
  // The claims of every gated member (`pc` for `pod`, resolved without writes for the others);
  // false while one is missing or being deleted (that member's own sync comes back).
  bool ResolveGroupMembers(const api::Pod& pod, const PodClaims& pc,
                           const std::vector<PodPtr>& gated, std::vector<GroupMember>& members);
  // Places one member (under alloc_mu_): node filter, then the allocator with its claims
  // restricted to `dom` (null: any device), starting at `prefer`. The result stays in flight.
  group::MemberOutcome TryGroupMember(GroupMember& m, const group::Domain* dom,
                                      const std::string& prefer);
  // A failed plan: Events on every member, rollback of a half-written group, wait bookkeeping.
  StatusOr<Result> GroupDoesNotFit(const group::GroupRef& g,
                                   const std::vector<GroupMember>& members,
                                   const group::PlanOutcome& out,
                                   const std::vector<group::Domain>& domains, double secs);
  // Writes the placed members' allocations, then releases them all (or rolls the writes back).
  StatusOr<Result> CommitGroup(const group::GroupRef& g, std::vector<GroupMember>& members,
                               const std::vector<size_t>& placed);
  // Deallocates the allocated claims of gated members that only this group's gated members use
  // (what a draco that stopped between a group's writes left behind). Returns how many.
  StatusOr<size_t> RollBackGroup(const group::GroupRef& g, const std::vector<GroupMember>& members);
  // The domain (match-attribute value) the group's allocated claims already use, if any.
  std::optional<std::string> GroupDomainInUse(const group::GroupRef& g,
                                              const std::vector<PodPtr>& members) const;
  // Fairness: the message when another group reserves capacity and `own_group` ("" for a pod in
  // none) must wait; nullopt otherwise. Ends an expired reservation.
  std::optional<std::string> HeldForGroup(const std::string& own_group);
  void NoteGroupFailure(const group::GroupRef& g, size_t gated);
  void NoteGroupPlaced(const std::string& group_key);
  StatusOr<Result> AllocateStandalone(const api::ResourceClaim& claim);
  // An unallocated claim annotated draco.dev/allocation=immediate that no pod or group owns.
  bool WantsStandaloneAllocation(const api::ResourceClaim& claim) const;
  // Step 4 of the pod sync (safety_net.cc). Acts at most once per scheduler report (condition
  // transition time + message) and pod, with an exponential delay between repeated actions.
  StatusOr<Result> RecoverUnschedulable(const api::Pod& pod, const PodClaims& claims);
  // A released pod pinned to `node`, not bound yet: its allocated claims usable there (allocated
  // through the builtin path) that are not reserved for it get the reservation back.
  StatusOr<Result> KeepPinnedReservations(const api::Pod& pod, const PodClaims& claims,
                                          const std::string& node);
  // Binding conditions of a gated pod's allocated claims (binding_conditions.cc): nullopt when
  // all are ready to bind (release the pod); otherwise the pass's result, after deallocating
  // the claims whose conditions failed or timed out (the pod stays gated either way).
  std::optional<StatusOr<Result>> HoldForBindingConditions(const api::Pod& pod,
                                                           const PodClaims& claims);
  // True when `claim` was generated for a pod that the cache shows finished or replaced (another
  // UID under the same name). A pod missing from the cache is not "done" here.
  bool OwnerPodDone(const api::ResourceClaim& claim) const;
  // Claim sync (claim_sync.cc) in steps: which reservedFor entries still hold (pods, PodGroups);
  struct Reservations {
    std::vector<api::ResourceClaimConsumerReference> valid;
    bool dropped = false;     // some entry is gone
    bool group_kept = false;  // a PodGroup reservation was kept
  };
  StatusOr<Reservations> CheckReservations(const api::ResourceClaim& claim);
  // a generated claim of a finished, deleted or replaced owner is deleted (a result), else nullopt;
  std::optional<StatusOr<Result>> DeleteClaimOfFinishedOwner(const api::ResourceClaim& claim);
  // An allocated generated claim its pod, not done, does not use, because the pod's status
  // records another claim of the pod's for the same entry (two controllers each created one while
  // the claim lifecycle changed hands, and draco allocated its own), is deleted, finalizer first,
  // once it is kDuplicateGrace old and if nobody reserved it (a result); else nullopt. Upstream
  // leaves such claims to the garbage collector, with their devices, until the pod goes.
  std::optional<StatusOr<Result>> DeleteDuplicateClaim(const api::ResourceClaim& claim);
  // the gone entries are dropped (deallocating when none is left), the finalizer removed when the
  // claim is unallocated; returns the claim as written;
  StatusOr<ClaimPtr> DropReservations(
      const api::ResourceClaim& claim,
      const std::vector<api::ResourceClaimConsumerReference>& valid);
  // a claim being deleted that nobody uses: deallocated and its finalizer removed.
  StatusOr<Result> FinishDeletedClaim(const api::ResourceClaim& claim);
  // PUT without the delete-protection finalizer; the result is assumed into the cache.
  StatusOr<ClaimPtr> RemoveFinalizer(const api::ResourceClaim& claim);
  // Removes the builtin finalizer (if set), then DELETEs the claim with a UID precondition; a
  // claim already gone counts as deleted. Write errors as WriteError.
  Status DeleteWithoutFinalizer(const api::ResourceClaim& claim);
  // Writes finalizer + allocation (+ reservation) for `claims`; returns updated claims.
  // `reserve`: empty, or per claim the consumer to add to reservedFor (nullopt: none).
  Status WriteAllocations(
      const std::vector<std::optional<api::ResourceClaimConsumerReference>>& reserve,
      const std::vector<ClaimPtr>& claims, const std::vector<api::AllocationResult>& results);
  // Double bookings (double_booking.cc). The pods that use `claim` (spec or generated owner).
  std::vector<PodPtr> ConsumersOf(const api::ResourceClaim& claim) const;
  // True when the allocated `claim` has one consumer, a pod draco still gates (and so cannot
  // run), and is reserved for nothing else: deallocating it takes nothing from anyone.
  bool OnlyGatedConsumers(const api::ResourceClaim& claim) const;
  // Whether `claim` keeps device `d` when all of its holders are such claims (the oldest).
  bool KeepsDevice(const api::ResourceClaim& claim, const DoubleAllocation& d) const;
  // Deallocates `claim` (resourceVersion precondition), Events, metric, requeues its pods.
  Status DeallocateDoubleBooked(const api::ResourceClaim& claim, const DoubleAllocation& d);
  // Right before a gate comes off: a claim of the pod whose device the cache shows in another
  // claim is deallocated (the pod allocates again); a result then, else nullopt.
  std::optional<StatusOr<Result>> ReleaseDoubleBooked(const api::Pod& pod, const PodClaims& pc);
  void ReportFailure(const api::Pod* pod, const std::vector<ClaimPtr>& claims,
                     const std::string& reason, const std::string& message);
  void Park(const std::string& key);
  // Gated pods whose allocation is written but not yet seen through the watch, by pod UID: when
  // to release them anyway (observe_timeout after the first pass that found them unobserved), and
  // the node and pin decided, so that the release pass needs no node filter.
  struct PendingRelease {
    Clock::TimePoint deadline;
    std::string node;
    bool pin = false;
  };
  void ForgetPendingRelease(const std::string& pod_uid);
  std::optional<PendingRelease> FindPendingRelease(const std::string& pod_uid) const;
  // A pass after an earlier one allocated every claim of the pod (`all_allocated`) and waits for
  // the watch: ReleaseAllocatedPod on that pass's node and pin (no node filter again); nullopt
  // when there is no such pending release.
  std::optional<StatusOr<Result>> ReleasePending(const api::Pod& pod, const PodClaims& pc,
                                                 bool all_allocated);
  // Planned special claims stay in flight in the allocator (their devices are held, and count
  // against namespace limits) from the gate removal until kube-scheduler's own claim for the pod
  // is seen allocated, or the pod is done or gone (extended_resource.cc).
  void HoldPlannedExtended(const api::Pod& pod, ClaimPtr planned);
  void ReleasePlannedExtended(const std::string& pod_uid);
  // A bounded memory of UIDs (the newest kMaxDeletedUids), guarded by mu_.
  struct RecentUids {
    std::deque<std::string> order;
    std::unordered_set<std::string> set;
  };
  bool Recent(const RecentUids& r, const std::string& uid);
  void Remember(RecentUids& r, const std::string& uid);
  bool IsDeletedPod(const std::string& uid) { return Recent(deleted_pods_, uid); }
  void RememberDeletedPod(const std::string& uid) { Remember(deleted_pods_, uid); }
  std::string NowTimestamp() const;

  ClusterCache& cache_;
  ApiWriter& writer_;
  ClaimAllocator& allocator_;
  EventSink& events_;
  Enqueuer& queue_;
  Clock& clock_;
  metrics::ControllerMetrics* metrics_;
  ControllerOptions options_;
  ClaimLifecycle* lifecycle_ = nullptr;
  LifecycleProbe* probe_ = nullptr;

  std::mutex alloc_mu_;                         // serialises allocation decisions
  std::unordered_set<std::string> allocating_;  // claim keys being written (guarded by alloc_mu_)
  std::map<std::string, ClaimPtr> planned_extended_;  // pod UID -> held plan (alloc_mu_)
  // Groups being decided or written by a worker (alloc_mu_).
  std::set<std::string> groups_busy_;
  // Groups that failed to fit: since when, and the inputs then (alloc_mu_).
  struct GroupWait {
    Clock::TimePoint since;
    uint64_t wakeups = 0;  // wakeups_ then: the same inputs give the same answer
    size_t gated = 0;
  };
  std::map<std::string, GroupWait> group_waits_;
  struct Reservation {
    std::string group_key;
    std::string display;
    Clock::TimePoint start;
  };
  std::optional<Reservation> reservation_;  // alloc_mu_
  std::atomic<uint64_t> wakeups_{0};        // OnAllocationInputsChanged calls

  mutable std::mutex mu_;
  std::set<std::string> parked_;  // queue keys waiting for an allocation-relevant change
  RecentUids deleted_pods_;
  RecentUids deleted_groups_;  // PodGroups seen deleted
  // Claims draco deleted: later events of the same claim (the watch still delivers the update
  // that removed the finalizer) need no second DELETE.
  RecentUids deleted_claims_;
  // Gated pods whose allocation is written but not yet seen through the watch, by pod UID
  // (guarded by mu_).
  std::unordered_map<std::string, PendingRelease> pending_releases_;
  // Safety-net actions per pod UID (newest kMaxRecoveries), guarded by mu_.
  struct Recovery {
    std::string attempt;  // the scheduler report acted on
    int count = 0;
    Clock::TimePoint last;
  };
  std::unordered_map<std::string, Recovery> recoveries_;
  std::set<std::string> reported_doubles_;  // findings already reported (Audit), mu_
  std::deque<std::string> recovery_order_;
};

// Parses an RFC 3339 timestamp ("2026-01-02T03:04:05Z", optional fraction); nullopt if malformed.
std::optional<std::chrono::system_clock::time_point> ParseTimestamp(const std::string& s);
std::string FormatTimestamp(std::chrono::system_clock::time_point t);

}  // namespace draco::reconcilers
