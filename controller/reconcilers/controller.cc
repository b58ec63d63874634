#include "controller/reconcilers/controller.h"

#include <algorithm>
#include <array>
#include <ctime>

#include <spdlog/spdlog.h>

#include "controller/api/extended_resource.h"
#include "controller/feasibility/feasibility.h"
#include "controller/feasibility/node_filter.h"
#include "controller/reconcilers/controller_util.h"
#include "controller/reconcilers/extended_resource.h"
#include "controller/reconcilers/node_fit.h"
#include "controller/reconcilers/scheduler_holds.h"
#include "k8sclient/api_error.h"

namespace draco::reconcilers {
namespace {

constexpr size_t kMaxDeletedUids = 500;  // upstream's deleted-pod UID LRU size
constexpr int kExplainedNodes = 5;       // per-node reasons quoted in a FailedAllocation Event

}  // namespace

std::optional<std::chrono::system_clock::time_point> ParseTimestamp(const std::string& s) {
  std::tm tm{};
  int y, mo, d, h, mi, sec;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d", &y, &mo, &d, &h, &mi, &sec) != 6) {
    return std::nullopt;
  }
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = sec;
  auto t = std::chrono::system_clock::from_time_t(timegm(&tm));
  if (s.size() > 19 && s[19] == '.') {
    size_t i = 20;
    double frac = 0, scale = 0.1;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      frac += (s[i] - '0') * scale;
      scale /= 10;
      ++i;
    }
    t += std::chrono::duration_cast<std::chrono::system_clock::duration>(
        std::chrono::duration<double>(frac));
  }
  return t;
}

std::string FormatTimestamp(std::chrono::system_clock::time_point t) {
  std::time_t secs = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  std::array<char, 32> buf{};
  std::strftime(buf.data(), buf.size(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf.data();
}

Controller::Controller(ClusterCache& cache, ApiWriter& writer, ClaimAllocator& allocator,
                       EventSink& events, Enqueuer& queue, Clock& clock,
                       metrics::ControllerMetrics* metrics, ControllerOptions options)
    : cache_(cache),
      writer_(writer),
      allocator_(allocator),
      events_(events),
      queue_(queue),
      clock_(clock),
      metrics_(metrics),
      options_(options) {}

std::string Controller::NowTimestamp() const { return FormatTimestamp(clock_.WallNow()); }

// ---------------------------------------------------------------------------------------------
// Event hooks

void Controller::Remember(RecentUids& r, const std::string& uid) {
  std::lock_guard<std::mutex> l(mu_);
  if (!r.set.insert(uid).second) return;
  r.order.push_back(uid);
  if (r.order.size() > kMaxDeletedUids) {
    r.set.erase(r.order.front());
    r.order.pop_front();
  }
}

bool Controller::Recent(const RecentUids& r, const std::string& uid) {
  std::lock_guard<std::mutex> l(mu_);
  return r.set.count(uid) > 0;
}

void Controller::OnPod(const PodPtr& old, const PodPtr& now) {
  // A pod leaving a scheduler's hands (bound, gated, finished or gone) ends its scheduler holds:
  // what parked pods wait for may be free again.
  if (old && InSchedulersHands(*old) && !(now && InSchedulersHands(*now)) &&
      allocator_.HeldDevices() > 0) {
    OnAllocationInputsChanged();
  }
  const PodPtr& p = now ? now : old;
  if (!p || !PodConsumesClaims(*p) || IsLifecycleProbe(*p)) return;
  const std::string& ns = p->metadata.namespace_;
  if (!now) RememberDeletedPod(p->metadata.uid);
  if (!now || !HasSchedulingGate(*now)) ForgetPendingRelease(p->metadata.uid);
  if (!now || PodReleasesClaims(*now)) {
    ReleasePlannedExtended(p->metadata.uid);
    // The pod no longer needs its claims: their reservations (and generated claims) go. Urgent:
    // short writes that free devices parked pods wait for.
    for (const auto& pc : p->spec.resource_claims) {
      auto r = ResolveClaimName(*p, pc);
      if (r.ok() && r->name) queue_.AddUrgent(QueueKey("claim", ns, *r->name));
    }
    if (std::string ext = ExtendedClaimName(*p); !ext.empty()) {
      queue_.AddUrgent(QueueKey("claim", ns, ext));  // kube-scheduler's extended-resource claim
    }
    for (const auto& c : cache_.ClaimsOwnedByPod(p->metadata.uid)) {
      queue_.AddUrgent(QueueKey("claim", ns, c->metadata.name));
    }
    if (!now) return;
  }
  if (now->metadata.deletion_timestamp) return;
  EnqueueDuplicateClaims(*now);
  // A new pod is not urgent: its first pass creates its claims and allocates them, so pods are
  // served in arrival order (see the header for why claim creation does not jump the line).
  queue_.Add(QueueKey("pod", ns, now->metadata.name));
}

void Controller::EnqueueDuplicateClaims(const api::Pod& pod) {
  // More claims than entries recorded in the status (the KEP-5004 claim counts as one): some
  // may be duplicates of a claim lifecycle change (DeleteDuplicateClaim decides).
  if (pod.status.resource_claim_statuses.empty()) return;
  size_t expected =
      pod.status.resource_claim_statuses.size() + (ExtendedClaimName(pod).empty() ? 0 : 1);
  auto owned = cache_.ClaimsOwnedByPod(pod.metadata.uid);
  if (owned.size() <= expected) return;
  for (const auto& c : owned) {
    queue_.Add(QueueKey("claim", c->metadata.namespace_, c->metadata.name));
  }
}

void Controller::OnClaim(const ClaimPtr& old, const ClaimPtr& now) {
  const ClaimPtr& c = now ? now : old;
  if (!c) return;
  const std::string& ns = c->metadata.namespace_;
  if (lifecycle_ && now && !old) lifecycle_->ObserveClaimAdded(*now);
  if (now) queue_.Add(QueueKey("claim", ns, now->metadata.name));
  if (now && now->status.allocation && api::IsExtendedResourceClaim(*now)) {
    ReleasePlannedExtended(OwnerPodUid(*now));  // kube-scheduler's own claim took over
  }
  for (const auto& p : cache_.PodsForClaim(ns, c->metadata.name)) {
    if (p->metadata.deletion_timestamp || IsPodDone(*p)) continue;
    if (now && now->status.allocation && HasSchedulingGate(*p) && p->spec.node_name.empty()) {
      // The watch confirms an allocation: the gate may come off (ReleaseAllocatedPod).
      queue_.AddNext(QueueKey("pod", ns, p->metadata.name));
    } else if (HasSchedulingGate(*p) || !p->spec.node_name.empty() || !now ||
               (old && IsReservedFor(*old, p->metadata.uid) &&
                !IsReservedFor(*now, p->metadata.uid))) {
      queue_.Add(QueueKey("pod", ns, p->metadata.name));  // (last: a released pod lost it)
    }
  }
  // Pods whose template claim was just created but not yet recorded look it up by owner.
  // Its allocation, seen before the pod recorded the claim (statuses deferred to the release),
  // may take the gate off: next, like above.
  std::string owner = OwnerPodName(*c);
  if (!owner.empty() && now) {
    PodPtr p = now->status.allocation ? cache_.GetPod(ns, owner) : nullptr;
    if (p && HasSchedulingGate(*p) && p->spec.node_name.empty()) {
      queue_.AddNext(QueueKey("pod", ns, owner));
    } else {
      queue_.Add(QueueKey("pod", ns, owner));
    }
  }
  bool freed = old && old->status.allocation && (!now || !now->status.allocation);
  // A new allocation while devices are held may be a scheduler's: its holds shrink to it.
  bool hold_ended = now && now->status.allocation && (!old || !old->status.allocation) &&
                    allocator_.HeldDevices() > 0;
  if (freed || hold_ended) OnAllocationInputsChanged();
}

void Controller::OnTemplate(const TemplatePtr& t) {
  // Pods created before their template: retry them now instead of at the rate-limited retry.
  for (const auto& p : cache_.Pods()) {
    if (p->metadata.namespace_ != t->metadata.namespace_) continue;
    for (const auto& pc : p->spec.resource_claims) {
      if (pc.resource_claim_template_name == t->metadata.name) {
        queue_.Add(QueueKey("pod", p->metadata.namespace_, p->metadata.name));
        break;
      }
    }
  }
}

void Controller::Park(const std::string& key) {
  std::lock_guard<std::mutex> l(mu_);
  parked_.insert(key);
}

void Controller::OnAllocationInputsChanged() {
  ++wakeups_;
  std::set<std::string> keys;
  {
    std::lock_guard<std::mutex> l(mu_);
    keys.swap(parked_);
  }
  for (const auto& k : keys) queue_.Add(k);
}

size_t Controller::ParkedCount() const {
  std::lock_guard<std::mutex> l(mu_);
  return parked_.size();
}

void Controller::EnqueueAll() {
  for (const auto& p : cache_.Pods()) {
    // PodGroups with claims are synced through their members' groups (after a claim lifecycle
    // decision, too: an undecided term created none).
    if (std::string g = PodGroupNameOf(*p); options_.workload_claims && !g.empty()) {
      queue_.Add(QueueKey("podgroup", p->metadata.namespace_, g));
    }
    if (!PodConsumesClaims(*p)) continue;
    OnPod(nullptr, p);
  }
  for (const auto& c : cache_.Claims()) {
    queue_.Add(QueueKey("claim", c->metadata.namespace_, c->metadata.name));
  }
  if (probe_) queue_.Add(probe_->QueueKey());
}

StatusOr<Result> Controller::Reconcile(const Request& r) {
  if (r.kind == "pod") return SyncPod(r.namespace_name, r.name);
  if (r.kind == "claim") return SyncClaim(r.namespace_name, r.name);
  if (r.kind == "podgroup") return SyncPodGroup(r.namespace_name, r.name);
  if (r.kind == "lifecycle") return probe_ ? probe_->Sync() : StatusOr<Result>(Result{});
  return TerminalError("unknown key kind " + r.kind);
}

// ---------------------------------------------------------------------------------------------
// Pods

StatusOr<Result> Controller::SyncPod(const std::string& ns, const std::string& name) {
  PodPtr pod = cache_.GetPod(ns, name);
  if (!pod || pod->metadata.deletion_timestamp || IsPodDone(*pod)) return Result{};
  PodClaims claims;
  if (options_.allocate && options_.extended_resources && HasSchedulingGate(*pod) &&
      pod->spec.node_name.empty()) {
    claims.planned_extended = PlannedExtendedClaim(*pod, cache_.DeviceClasses());
  }
  if (pod->spec.resource_claims.empty() && !claims.planned_extended) {
    // A gated pod without claims has nothing to wait for.
    if (options_.allocate && HasSchedulingGate(*pod) && pod->spec.node_name.empty()) {
      auto r = writer_.RemoveSchedulingGate(*pod, kSchedulingGate, "");
      if (!r.ok() && !k8s::IsNotFound(r.status())) return r.status();
    }
    return Result{};
  }
  const bool gated = options_.allocate && HasSchedulingGate(*pod) && pod->spec.node_name.empty();
  std::optional<group::GroupRef> group = gated ? GroupOfPod(*pod) : std::nullopt;
  claims.defer_statuses =
      gated && !group && options_.pin_node && DracoOwnsLifecycle() && feasibility::CoversPod(*pod);
  if (Status st = EnsureGeneratedClaims(*pod, claims); !st.ok()) return st;
  if (!pod->spec.node_name.empty()) return ReserveForBoundPod(*pod, claims);
  if (!options_.allocate) return Result{};
  if (HasSchedulingGate(*pod)) {
    if (group) return SyncGroupMember(*pod, claims, *group);
    auto r = AllocateForPod(*pod, claims);
    if (r.ok() && claims.statuses_unwritten) {
      if (Status st = WriteDeferredStatuses(*pod, claims); !st.ok()) return st;
    }
    return r;
  }
  return RecoverUnschedulable(*pod, claims);  // the scheduler deals with released pods
}

Status Controller::WriteDeferredStatuses(const api::Pod& pod, const PodClaims& pc) {
  // Nothing when the release wrote them already.
  Status st = Nominate(pod, pc, "", /*pin=*/false);
  if (st.ok() || k8s::IsNotFound(st)) return OkStatus();
  return WriteError(st, "apply pod resourceClaimStatuses");
}

StatusOr<Result> Controller::ReserveForBoundPod(const api::Pod& pod, const PodClaims& pc) {
  // Whoever bound the pod without its reservation (a scheduler whose write was lost, one without
  // DRA support), the kubelet refuses a claim not reserved for the pod: reserve it, when the
  // allocation is usable on the pod's node.
  if (!DracoOwnsLifecycle()) return Result{};  // upstream's controller reserves them
  NodePtr node = cache_.GetNode(pod.spec.node_name);
  for (size_t i = 0; i < pc.claims.size(); ++i) {
    const ClaimPtr& c = pc.claims[i];
    if (!c || !c->status.allocation) continue;
    if (IsReservedForPodOrGroup(*c, pod, options_.workload_claims)) continue;
    if (c->metadata.deletion_timestamp) continue;
    const auto& sel = c->status.allocation->node_selector;
    if (node && sel && !feasibility::MatchesAllocatedSelectors(*node, {&*sel})) {
      events_.Record(PodTarget(pod), "Warning", "ClaimAllocatedElsewhere",
                     "ResourceClaim " + ClaimKey(*c) + " is allocated for other nodes than " +
                         pod.spec.node_name + ", where the pod is bound; it cannot be used there");
      continue;
    }
    api::ResourceClaim copy = *c;
    copy.status.reserved_for.push_back(pc.bind_to[i]);
    auto updated = writer_.UpdateClaimStatus(copy);
    if (!updated.ok()) return WriteError(updated.status(), "reserve claim " + ClaimKey(*c));
    cache_.AssumeClaim(*updated);
  }
  return Result{};
}

void Controller::ReportFailure(const api::Pod* pod, const std::vector<ClaimPtr>& claims,
                               const std::string& reason, const std::string& message) {
  if (pod) events_.Record(PodTarget(*pod), "Warning", reason, message);
  for (const auto& c : claims) {
    if (c) events_.Record(ClaimTarget(*c), "Warning", reason, message);
  }
}

StatusOr<Result> Controller::AllocateForPod(const api::Pod& pod, const PodClaims& pc,
                                            const std::string* selector) {
  const std::string pod_key = pod.metadata.namespace_ + "/" + pod.metadata.name;
  const std::string queue_key = QueueKey("pod", pod.metadata.namespace_, pod.metadata.name);
  std::vector<ClaimPtr> allocated, to_allocate;
  if (auto wait = NotReadyToAllocate(pod, pc, allocated, to_allocate)) return *wait;
  if (auto released = ReleasePending(pod, pc, to_allocate.empty())) return *released;
  std::vector<ClaimPtr> planned = to_allocate;  // what the allocator decides on
  if (pc.planned_extended) planned.push_back(pc.planned_extended);
  if (selector) {
    for (auto& c : planned) {
      c = std::make_shared<const api::ResourceClaim>(group::Constrained(*c, *selector));
    }
  }
  std::string node;
  // Pin the pod to `node` (and reserve its claims at allocation time) only when an allocation
  // restricts it to that node alone and draco checked every constraint of the pod.
  bool pin = false;
  const bool may_pin = options_.pin_node && feasibility::CoversPod(pod);
  {
    std::unique_lock<std::mutex> l(alloc_mu_);
    for (const auto& c : to_allocate) {
      if (allocating_.count(ClaimKey(*c))) return Result{options_.busy_retry};
      // A claim shared by several pods (a PodGroup's, or one named by several pods) may have
      // been allocated by another worker since this sync read the cache: decide again on the
      // newest state instead of allocating it a second time.
      ClaimPtr now = cache_.GetClaim(c->metadata.namespace_, c->metadata.name);
      if (now && now->status.allocation) return Result{options_.busy_retry};
    }
    auto filtered = FilterNodes(&pod, cache_.Nodes(), allocated, cache_);
    if (filtered.fit.empty()) {
      l.unlock();
      std::string msg = "cannot schedule pod: " + filtered.Summary(cache_.Nodes().size());
      int shown = 0;
      for (const auto& [n, why] : filtered.why) {
        if (shown++ == kExplainedNodes) break;
        msg.append(shown == 1 ? " (" : "; ").append(n).append(": ").append(why);
      }
      if (shown > 0) msg += ")";
      ReportFailure(&pod, to_allocate, "FailedAllocation", msg);
      if (metrics_) {
        metrics_->ObserveAllocation(metrics::AllocationResult::kUnschedulable, 0);
        metrics_->IncPending(metrics::PendingReason::kNoNodeFits);
      }
      Park(queue_key);
      return Result{};
    }
    if (planned.empty()) {
      node = filtered.fit.front()->metadata.name;
    } else {
      auto start = clock_.Now();
      AllocateRequest req{pod_key, planned, filtered.fit, ""};
      AllocateResponse resp = allocator_.Allocate(req);
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
        std::string msg =
            (fatal ? "cannot allocate devices: " : "no node has the devices: ") + resp.message;
        ReportFailure(&pod, to_allocate, fatal ? "AllocationError" : "FailedAllocation", msg);
        Park(queue_key);
        return Result{};
      }
      if (metrics_) metrics_->ObserveAllocation(metrics::AllocationResult::kSuccess, secs);
      node = resp.node;
      for (const auto& r : resp.results) pin = pin || SelectsOnlyNode(r.node_selector, node);
      for (const auto& c : allocated) {
        pin = pin || SelectsOnlyNode(c->status.allocation->node_selector, node);
      }
      pin = pin && may_pin;
      if (pc.planned_extended) resp.results.pop_back();  // kube-scheduler writes that one
      for (const auto& c : to_allocate) allocating_.insert(ClaimKey(*c));
      cache_.NominatePod(pod_key, node);
      l.unlock();
      // reservedFor is written here only for a pinned pod (see RecoverUnschedulable).
      std::vector<std::optional<api::ResourceClaimConsumerReference>> reserve;
      for (size_t i = 0; pin && i < pc.claims.size(); ++i) {
        if (std::ranges::find(to_allocate, pc.claims[i]) != to_allocate.end()) {
          reserve.emplace_back(pc.bind_to[i]);
        }
      }
      Status st = WriteAllocations(reserve, to_allocate, resp.results);
      {
        std::lock_guard<std::mutex> g(alloc_mu_);
        for (const auto& c : to_allocate) allocating_.erase(ClaimKey(*c));
        allocator_.Settle(to_allocate, st.ok());
      }
      if (pc.planned_extended) HoldPlannedExtended(pod, pc.planned_extended);
      if (!st.ok()) {
        ReleasePlannedExtended(pod.metadata.uid);
        cache_.ClearNomination(pod_key);
        if (metrics_ && k8s::IsConflict(st)) {
          metrics_->ObserveAllocation(metrics::AllocationResult::kConflict, 0);
          metrics_->IncPending(metrics::PendingReason::kWriteConflict);
        }
        return st;
      }
      ForgetPendingRelease(pod.metadata.uid);  // a new decision: its own deadline, node and pin
    }
    if (planned.empty()) cache_.NominatePod(pod_key, node);
  }
  if (to_allocate.empty()) {
    for (const auto& c : allocated) {
      pin = pin || SelectsOnlyNode(c->status.allocation->node_selector, node);
    }
    pin = pin && may_pin;
  }
  if (options_.binding_conditions && !to_allocate.empty()) {
    if (auto held = HoldForBindingConditions(pod, pc)) return *held;
  }
  return ReleaseAllocatedPod(pod, pc, node, pin);
}

std::optional<StatusOr<Result>> Controller::NotReadyToAllocate(const api::Pod& pod,
                                                               const PodClaims& pc,
                                                               std::vector<ClaimPtr>& allocated,
                                                               std::vector<ClaimPtr>& to_allocate) {
  const std::string queue_key = QueueKey("pod", pod.metadata.namespace_, pod.metadata.name);
  if (pc.waiting_for_lifecycle) return WaitForLifecycle(pod, pc);
  if (!pc.missing.empty()) {
    // The claim's add event wakes the pod (pods-by-claim index).
    std::string msg = "waiting for ResourceClaim " + pc.missing.front() + " to be created";
    events_.Record(PodTarget(pod), "Warning", "ClaimNotFound", msg);
    return StatusOr<Result>(Result{});
  }
  for (const auto& c : pc.claims) {
    if (c->metadata.deletion_timestamp) {
      ReportFailure(&pod, {c}, "ClaimBeingDeleted",
                    "ResourceClaim " + c->metadata.name + " is being deleted");
      if (metrics_) metrics_->IncPending(metrics::PendingReason::kClaimBeingDeleted);
      return StatusOr<Result>(Result{});
    }
    (c->status.allocation ? allocated : to_allocate).push_back(c);
  }
  if (Status v = feasibility::ValidatePod(pod); !v.ok()) {
    // kube-scheduler would fail this pod in PreFilter; it stays gated until it is fixed.
    events_.Record(PodTarget(pod), "Warning", "InvalidSchedulingConstraints",
                   "cannot choose a node for the pod: " + v.message());
    if (metrics_) metrics_->IncPending(metrics::PendingReason::kInvalidConstraints);
    Park(queue_key);
    return StatusOr<Result>(Result{});
  }
  if (options_.binding_conditions && to_allocate.empty()) {
    if (auto held = HoldForBindingConditions(pod, pc)) return held;
    if (pc.planned_extended) ReleasePlannedExtended(pod.metadata.uid);  // planned again below
  }
  if (!to_allocate.empty() || pc.planned_extended) {
    std::optional<group::GroupRef> g = GroupOfPod(pod);
    if (auto held = HeldForGroup(g ? g->key : ""); held) {
      events_.Record(PodTarget(pod), "Normal", "WaitingForGroup", *held);
      if (metrics_) metrics_->IncPending(metrics::PendingReason::kWaitingForGroup);
      Park(queue_key);
      return StatusOr<Result>(Result{});
    }
  }
  return std::nullopt;
}

Status Controller::WriteAllocations(
    const std::vector<std::optional<api::ResourceClaimConsumerReference>>& reserve,
    const std::vector<ClaimPtr>& claims, const std::vector<api::AllocationResult>& results) {
  if (results.size() != claims.size()) {
    return InternalError("allocator returned " + std::to_string(results.size()) + " results for " +
                         std::to_string(claims.size()) + " claims");
  }
  const std::string now = NowTimestamp();
  for (size_t i = 0; i < claims.size(); ++i) {
    api::ResourceClaim c = *claims[i];
    if (!HasFinalizer(c.metadata, kDeleteProtectionFinalizer)) {
      c.metadata.finalizers.emplace_back(kDeleteProtectionFinalizer);
      auto updated = writer_.UpdateClaim(c);
      if (!updated.ok()) return WriteError(updated.status(), "add finalizer to " + ClaimKey(c));
      c = **updated;
    }
    c.status.allocation = results[i];
    c.status.allocation->allocation_timestamp = now;
    if (i < reserve.size() && reserve[i]) c.status.reserved_for.push_back(*reserve[i]);
    auto written = writer_.UpdateClaimStatus(c);
    if (!written.ok()) return WriteError(written.status(), "write allocation of " + ClaimKey(c));
    cache_.AssumeClaim(*written);
    if (metrics_) {
      auto created = ParseTimestamp(c.metadata.creation_timestamp);
      if (created) {
        metrics_->ObserveClaimAllocationLatency(
            std::chrono::duration<double>(clock_.WallNow() - *created).count());
      }
    }
  }
  return OkStatus();
}

}  // namespace draco::reconcilers
