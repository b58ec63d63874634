// All-or-nothing groups of pods (controller/group/group.h): the gated members of a group are
// allocated in one decision under the allocation lock, written, and released together. See
// controller.h (ControllerOptions::groups, group_reserve_*) for the rules.
//
// A decision places every gated member through the ClaimAllocator one after the other; each
// result stays in flight, so the next member sees those devices taken, and an attempt that
// cannot reach the group's minimum is undone (Settle not written) before the next domain is
// tried. Nothing is written before the whole group has a place. The writes then go member by
// member; if one fails, the members already written are deallocated again. A draco that stops
// between those writes leaves gated members with allocated claims: the next decision counts them
// as placed if the rest fits, and otherwise deallocates them (RollBackGroup), so no device stays
// with a partial group.
#include <algorithm>
#include <cstdlib>

#include <spdlog/spdlog.h>

#include "controller/feasibility/feasibility.h"
#include "controller/reconcilers/controller.h"
#include "controller/reconcilers/controller_util.h"
#include "controller/reconcilers/extended_resource.h"
#include "controller/reconcilers/node_fit.h"
#include "k8sclient/api_error.h"

namespace draco::reconcilers {
namespace {

// How soon a member whose group another worker is deciding looks again.
constexpr Clock::Duration kGroupBusyRetry = std::chrono::milliseconds(250);

std::string PodKey(const api::Pod& p) { return p.metadata.namespace_ + "/" + p.metadata.name; }

bool IsGatedUnbound(const api::Pod& p) { return HasSchedulingGate(p) && p.spec.node_name.empty(); }

}  // namespace

struct Controller::GroupMember {
  PodPtr pod;
  PodClaims claims;
  std::vector<ClaimPtr> allocated, to_allocate;
  // Set while placed in the current attempt.
  std::string node;
  std::vector<ClaimPtr> in_flight;  // what Allocate holds (to_allocate + planned extended)
  std::vector<api::AllocationResult> results;
  bool pin = false;
};

std::optional<group::GroupRef> Controller::GroupOfPod(const api::Pod& pod) const {
  if (!options_.groups) return std::nullopt;
  PodGroupPtr pg;
  if (pod.spec.scheduling_group && pod.spec.scheduling_group->pod_group_name) {
    pg = cache_.GetPodGroup(pod.metadata.namespace_, *pod.spec.scheduling_group->pod_group_name);
  }
  return group::GroupOf(pod, pg.get());
}

StatusOr<Result> Controller::SyncGroupMember(const api::Pod& pod, const PodClaims& pc,
                                             const group::GroupRef& g) {
  if (!pc.missing.empty()) {
    // The pod's own claims first: one upstream's controller has yet to create, or a user's claim
    // that does not exist yet (their creation brings the pod back).
    std::vector<ClaimPtr> allocated, to_allocate;
    if (auto wait = NotReadyToAllocate(pod, pc, allocated, to_allocate)) return *wait;
  }
  std::vector<PodPtr> members = cache_.GroupMembers(g.key);
  std::vector<PodPtr> gated;
  size_t released = 0;
  for (const auto& m : members) {
    if (m->metadata.deletion_timestamp || IsPodDone(*m)) continue;
    if (IsGatedUnbound(*m)) {
      gated.push_back(m);
    } else {
      ++released;
    }
  }
  const auto min = static_cast<size_t>(std::max<int64_t>(g.min_members, 0));
  if (min > 0 && released >= min) {
    // The group runs: a late member joins alone, in the group's domain.
    std::optional<std::string> selector;
    if (!g.match_attribute.empty()) {
      if (auto value = GroupDomainInUse(g, members)) {
        auto domains = group::DomainsOf(cache_.Slices(), g.match_attribute);
        if (domains.ok()) {
          for (const auto& d : *domains) {
            if (d.value == *value) selector = d.selector;
          }
        }
      }
    }
    return AllocateForPod(pod, pc, selector ? &*selector : nullptr);
  }
  if (min == 0 || gated.size() + released < min) {
    std::string msg = min == 0 ? g.display + ": the minimum member count is not known yet (" +
                                     (g.source == group::Source::kPodGroup
                                          ? "PodGroup not seen"
                                          : "set " + std::string(group::kMinMembersKey)) +
                                     "); the members stay gated"
                               : g.display + ": " + std::to_string(gated.size() + released) +
                                     " of " + std::to_string(min) +
                                     " member(s) exist; the group is allocated once all of them do";
    events_.Record(PodTarget(pod), "Normal", "WaitingForGroupMembers", msg);
    if (metrics_) metrics_->IncPending(metrics::PendingReason::kGroupIncomplete);
    return Result{};  // the next member's own sync decides for the group
  }
  return AllocateGroup(pod, pc, g, gated, released);
}

StatusOr<Result> Controller::AllocateGroup(const api::Pod& pod, const PodClaims& pc,
                                           const group::GroupRef& g,
                                           const std::vector<PodPtr>& gated, size_t released) {
  {
    std::lock_guard<std::mutex> l(alloc_mu_);
    if (!groups_busy_.insert(g.key).second) return Result{kGroupBusyRetry};
    auto w = group_waits_.find(g.key);
    if (w != group_waits_.end() && w->second.wakeups == wakeups_.load() &&
        w->second.gated == gated.size()) {
      // Nothing changed since this group last failed: the answer is the same.
      groups_busy_.erase(g.key);
      Park(QueueKey("pod", pod.metadata.namespace_, pod.metadata.name));
      return Result{};
    }
  }
  struct Release {
    Controller* c;
    std::string key;
    Release(Controller* ctl, std::string k) : c(ctl), key(std::move(k)) {}
    Release(const Release&) = delete;
    Release& operator=(const Release&) = delete;
    ~Release() {
      std::lock_guard<std::mutex> l(c->alloc_mu_);
      c->groups_busy_.erase(key);
    }
  } release{this, g.key};

  std::vector<GroupMember> members(gated.size());
  if (!ResolveGroupMembers(pod, pc, gated, members)) return Result{};
  if (auto held = HeldForGroup(g.key)) {
    if (metrics_) metrics_->IncPending(metrics::PendingReason::kWaitingForGroup);
    for (const auto& m : members) {
      events_.Record(PodTarget(*m.pod), "Normal", "WaitingForGroup", *held);
      Park(QueueKey("pod", m.pod->metadata.namespace_, m.pod->metadata.name));
    }
    return Result{};
  }
  const auto min = static_cast<size_t>(g.min_members);
  const size_t need = min > released ? min - released : 0;

  std::unique_lock<std::mutex> l(alloc_mu_);
  for (const auto& m : members) {
    for (const auto& c : m.to_allocate) {
      if (allocating_.count(ClaimKey(*c))) return Result{options_.busy_retry};
      ClaimPtr now = cache_.GetClaim(c->metadata.namespace_, c->metadata.name);
      if (now && now->status.allocation) return Result{options_.busy_retry};
    }
  }
  const bool constrained = !g.match_attribute.empty();
  std::vector<group::Domain> domains;
  if (constrained) {
    auto all = group::DomainsOf(cache_.Slices(), g.match_attribute);
    if (!all.ok()) {
      l.unlock();
      for (const auto& m : members) {
        events_.Record(PodTarget(*m.pod), "Warning", "InvalidGroup", all.status().message());
      }
      return Result{};
    }
    std::optional<std::string> in_use = GroupDomainInUse(g, cache_.GroupMembers(g.key));
    for (auto& d : *all) {
      if (!in_use || d.value == *in_use) domains.push_back(std::move(d));
    }
  }
  std::vector<size_t> tried;
  auto try_member = [&](size_t i, const group::Domain* dom, const std::string& prefer) {
    group::MemberOutcome o = TryGroupMember(members[i], dom, prefer);
    if (o.placed) tried.push_back(i);
    return o;
  };
  auto undo = [&] {
    for (size_t i : tried) {
      GroupMember& m = members[i];
      if (!m.in_flight.empty()) allocator_.Settle(m.in_flight, false);
      cache_.ClearNomination(PodKey(*m.pod));
      m.node.clear();
      m.in_flight.clear();
      m.results.clear();
    }
    tried.clear();
  };
  auto start = clock_.Now();
  group::PlanOutcome out =
      group::PlanGroup(members.size(), need, domains, constrained, try_member, undo);
  double secs = SecondsSince(clock_, start);
  if (!out.ok) {
    l.unlock();
    return GroupDoesNotFit(g, members, out, domains, secs);
  }
  if (metrics_) metrics_->ObserveAllocation(metrics::AllocationResult::kSuccess, secs);
  for (size_t i : out.placed) {
    for (const auto& c : members[i].to_allocate) allocating_.insert(ClaimKey(*c));
  }
  l.unlock();
  spdlog::info("{}: {} member(s) placed at once{} in {:.1f} ms", g.display, out.placed.size(),
               out.domain ? " in " + g.match_attribute + "=" + domains[*out.domain].value : "",
               secs * 1000);
  return CommitGroup(g, members, out.placed);
}

bool Controller::ResolveGroupMembers(const api::Pod& pod, const PodClaims& pc,
                                     const std::vector<PodPtr>& gated,
                                     std::vector<GroupMember>& members) {
  for (size_t i = 0; i < gated.size(); ++i) {
    GroupMember& m = members[i];
    m.pod = gated[i];
    if (m.pod->metadata.uid == pod.metadata.uid) {
      if (!pc.missing.empty()) return false;  // SyncGroupMember waits for them
      m.claims = pc;
    } else {
      if (options_.extended_resources) {
        m.claims.planned_extended = PlannedExtendedClaim(*m.pod, cache_.DeviceClasses());
      }
      auto st = EnsureGeneratedClaims(*m.pod, m.claims, /*may_write=*/false);
      if (!st.ok() || !m.claims.missing.empty()) {
        // That member's own sync creates its claims and then decides for the group.
        return false;
      }
    }
    for (const auto& c : m.claims.claims) {
      if (c->metadata.deletion_timestamp) {
        ReportFailure(m.pod.get(), {c}, "ClaimBeingDeleted",
                      "ResourceClaim " + c->metadata.name + " is being deleted");
        return false;
      }
      (c->status.allocation ? m.allocated : m.to_allocate).push_back(c);
    }
  }
  return true;
}

group::MemberOutcome Controller::TryGroupMember(GroupMember& m, const group::Domain* dom,
                                                const std::string& prefer) {
  const api::Pod& p = *m.pod;
  if (Status v = feasibility::ValidatePod(p); !v.ok()) {
    return {false, "", "invalid scheduling constraints: " + v.message()};
  }
  auto filtered = FilterNodes(&p, cache_.Nodes(), m.allocated, cache_);
  if (filtered.fit.empty()) {
    return {false, "", "cannot schedule pod: " + filtered.Summary(cache_.Nodes().size())};
  }
  std::vector<ClaimPtr> planned = m.to_allocate;
  if (m.claims.planned_extended) planned.push_back(m.claims.planned_extended);
  if (planned.empty()) {  // every claim allocated already (an earlier, interrupted decision)
    m.node = filtered.fit.front()->metadata.name;
    for (const auto& n : filtered.fit) {
      if (n->metadata.name == prefer) m.node = prefer;
    }
    cache_.NominatePod(PodKey(p), m.node);
    return {true, m.node, ""};
  }
  std::vector<ClaimPtr> asked;
  asked.reserve(planned.size());
  for (const auto& c : planned) {
    asked.push_back(
        dom ? std::make_shared<const api::ResourceClaim>(group::Constrained(*c, dom->selector))
            : c);
  }
  AllocateResponse resp =
      allocator_.Allocate(AllocateRequest{PodKey(p), asked, filtered.fit, prefer});
  if (resp.kind != AllocateResponse::Kind::kAllocated) return {false, "", resp.message};
  m.node = resp.node;
  m.in_flight = planned;
  const bool may_pin = options_.pin_node && feasibility::CoversPod(p);
  m.pin = false;
  for (const auto& r : resp.results) m.pin = m.pin || SelectsOnlyNode(r.node_selector, m.node);
  for (const auto& c : m.allocated) {
    m.pin = m.pin || SelectsOnlyNode(c->status.allocation->node_selector, m.node);
  }
  m.pin = m.pin && may_pin;
  if (m.claims.planned_extended) resp.results.pop_back();  // kube-scheduler writes that one
  m.results = std::move(resp.results);
  cache_.NominatePod(PodKey(p), m.node);
  return {true, m.node, ""};
}

StatusOr<Result> Controller::GroupDoesNotFit(const group::GroupRef& g,
                                             const std::vector<GroupMember>& members,
                                             const group::PlanOutcome& out,
                                             const std::vector<group::Domain>& domains,
                                             double secs) {
  std::string msg =
      "cannot place the group: " +
      group::DescribeFailure(g, out, domains, PodKey(*members[out.failed_member].pod));
  if (metrics_) {
    metrics_->ObserveAllocation(metrics::AllocationResult::kUnschedulable, secs);
    metrics_->IncPending(metrics::PendingReason::kDevicesUnavailable);
  }
  for (const auto& m : members) ReportFailure(m.pod.get(), {}, "FailedAllocation", msg);
  auto rolled = RollBackGroup(g, members);
  if (!rolled.ok()) return rolled.status();
  NoteGroupFailure(g, members.size());
  for (const auto& m : members) {
    Park(QueueKey("pod", m.pod->metadata.namespace_, m.pod->metadata.name));
  }
  return Result{};
}

StatusOr<Result> Controller::CommitGroup(const group::GroupRef& g,
                                         std::vector<GroupMember>& members,
                                         const std::vector<size_t>& placed) {
  Status st;
  size_t written = 0;
  for (size_t i : placed) {
    GroupMember& m = members[i];
    if (m.to_allocate.empty()) {
      ++written;
      continue;
    }
    std::vector<std::optional<api::ResourceClaimConsumerReference>> reserve;
    for (size_t k = 0; m.pin && k < m.claims.claims.size(); ++k) {
      if (std::ranges::find(m.to_allocate, m.claims.claims[k]) != m.to_allocate.end()) {
        reserve.emplace_back(m.claims.bind_to[k]);
      }
    }
    st = WriteAllocations(reserve, m.to_allocate, m.results);
    if (!st.ok()) break;
    if (++written == static_cast<size_t>(options_.testing_exit_after_group_writes)) {
      spdlog::warn("{}: exiting after {} member write(s) (testing)", g.display, written);
      spdlog::shutdown();
      std::_Exit(86);
    }
  }
  {
    std::lock_guard<std::mutex> l(alloc_mu_);
    for (size_t i : placed) {
      for (const auto& c : members[i].to_allocate) allocating_.erase(ClaimKey(*c));
      if (!members[i].to_allocate.empty()) allocator_.Settle(members[i].to_allocate, st.ok());
    }
  }
  if (!st.ok()) {
    // No partial group: what was written goes again.
    for (size_t i : placed) {
      cache_.ClearNomination(PodKey(*members[i].pod));
      if (members[i].claims.planned_extended) {
        std::lock_guard<std::mutex> l(alloc_mu_);
        allocator_.Settle({members[i].claims.planned_extended}, false);
      }
      for (auto& c : members[i].to_allocate) {
        c = cache_.GetClaim(c->metadata.namespace_, c->metadata.name);
      }
      members[i].allocated = members[i].to_allocate;
    }
    auto rolled = RollBackGroup(g, members);
    if (!rolled.ok()) spdlog::warn("{}: rollback: {}", g.display, rolled.status().ToString());
    if (metrics_ && k8s::IsConflict(st)) {
      metrics_->ObserveAllocation(metrics::AllocationResult::kConflict, 0);
      metrics_->IncPending(metrics::PendingReason::kWriteConflict);
    }
    return st.WithPrefix(g.display);
  }
  for (size_t i : placed) {
    if (members[i].claims.planned_extended) {
      HoldPlannedExtended(*members[i].pod, members[i].claims.planned_extended);
    }
  }
  NoteGroupPlaced(g.key);
  if (options_.binding_conditions) {
    for (size_t i : placed) {
      // Released together: while one member waits for its devices, all wait.
      if (auto held = HoldForBindingConditions(*members[i].pod, members[i].claims)) return *held;
    }
  }
  if (options_.release_after_observed) {
    std::vector<ClaimPtr> current;
    for (size_t i : placed) {
      for (const auto& c : members[i].claims.claims) {
        current.push_back(cache_.GetClaim(c->metadata.namespace_, c->metadata.name));
      }
    }
    (void)cache_.WaitClaimsObserved(current, clock_, clock_.Now() + options_.observe_timeout);
  }
  for (size_t i : placed) {
    GroupMember& m = members[i];
    PodPtr latest = cache_.GetPod(m.pod->metadata.namespace_, m.pod->metadata.name);
    const api::Pod& target =
        latest && latest->metadata.uid == m.pod->metadata.uid ? *latest : *m.pod;
    auto gate = writer_.RemoveSchedulingGate(target, kSchedulingGate, m.pin ? m.node : "");
    if (!gate.ok()) {
      if (k8s::IsNotFound(gate.status())) continue;
      // The others are released already; this one is allocated and its next sync releases it.
      return WriteError(gate.status(), "remove scheduling gate of " + PodKey(*m.pod));
    }
    if (*gate) cache_.AssumePod(*gate);
  }
  return Result{};
}

StatusOr<size_t> Controller::RollBackGroup(const group::GroupRef& g,
                                           const std::vector<GroupMember>& members) {
  std::set<std::string> gated, gated_uids;
  for (const auto& m : members) {
    gated.insert(PodKey(*m.pod));
    gated_uids.insert(m.pod->metadata.uid);
  }
  size_t n = 0;
  for (const auto& m : members) {
    std::string names;
    for (const auto& c : m.allocated) {
      if (!c || !c->status.allocation) continue;
      // Reserved only for gated members (a pinned member's claim is reserved for it at once).
      bool others = false;
      for (const auto& r : c->status.reserved_for) {
        others = others || r.resource != "pods" || !gated_uids.count(r.uid);
      }
      if (others) continue;
      auto a = c->metadata.annotations.find(std::string(kAllocationAnnotation));
      if (a != c->metadata.annotations.end() && a->second == kImmediateAllocation) continue;
      bool ours = true;
      for (const auto& p : cache_.PodsForClaim(c->metadata.namespace_, c->metadata.name)) {
        ours = ours && gated.count(PodKey(*p)) > 0;
      }
      if (!ours) continue;
      api::ResourceClaim copy = *c;
      copy.status.allocation.reset();
      copy.status.devices.clear();
      copy.status.reserved_for.clear();
      auto updated = writer_.UpdateClaimStatus(copy);
      if (!updated.ok()) {
        if (k8s::IsNotFound(updated.status())) continue;
        return updated.status().WithPrefix("deallocate " + ClaimKey(*c));
      }
      cache_.AssumeClaim(*updated);
      names += (names.empty() ? "" : ", ") + c->metadata.name;
      ++n;
    }
    if (!names.empty()) {
      events_.Record(PodTarget(*m.pod), "Warning", "DeallocatedIncompleteGroup",
                     "deallocated ResourceClaim(s) " + names + ": " + g.display +
                         " cannot be placed as a whole, and no device stays with part of it");
    }
  }
  return n;
}

std::optional<std::string> Controller::GroupDomainInUse(const group::GroupRef& g,
                                                        const std::vector<PodPtr>& members) const {
  std::vector<SlicePtr> slices;
  for (const auto& p : members) {
    if (p->metadata.deletion_timestamp || IsPodDone(*p)) continue;
    for (const auto& pc : p->spec.resource_claims) {
      auto r = ResolveClaimName(*p, pc);
      if (!r.ok() || !r->name) continue;
      ClaimPtr c = cache_.GetClaim(p->metadata.namespace_, *r->name);
      if (!c || !c->status.allocation) continue;
      for (const auto& d : c->status.allocation->devices.results) {
        if (slices.empty()) slices = cache_.Slices();
        auto v = group::DeviceDomain(slices, g.match_attribute, d.driver, d.pool, d.device);
        if (v) return v;
      }
    }
  }
  return std::nullopt;
}

std::optional<std::string> Controller::HeldForGroup(const std::string& own_group) {
  bool ended = false;
  std::optional<std::string> held;
  {
    std::lock_guard<std::mutex> l(alloc_mu_);
    if (!reservation_ || reservation_->group_key == own_group) return std::nullopt;
    const auto now = clock_.Now();
    bool waiting = false;
    for (const auto& p : cache_.GroupMembers(reservation_->group_key)) {
      waiting = waiting || (IsGatedUnbound(*p) && !p->metadata.deletion_timestamp);
    }
    if (!waiting || now - reservation_->start >= options_.group_reserve_max) {
      spdlog::info("{}: reservation ends ({})", reservation_->display,
                   waiting ? "time limit reached; it waits at the back again" : "group gone");
      if (waiting) group_waits_[reservation_->group_key] = GroupWait{now, 0, 0};
      reservation_.reset();
      ended = true;
    } else {
      held = reservation_->display +
             " has waited longer than the group reservation threshold "
             "and reserves capacity: other allocations wait until it is placed";
    }
  }
  if (ended) OnAllocationInputsChanged();
  return held;
}

void Controller::NoteGroupFailure(const group::GroupRef& g, size_t gated) {
  std::lock_guard<std::mutex> l(alloc_mu_);
  const auto now = clock_.Now();
  auto it = group_waits_.try_emplace(g.key, GroupWait{now, 0, 0}).first;
  it->second.wakeups = wakeups_.load();
  it->second.gated = gated;
  if (!reservation_ && now - it->second.since >= options_.group_reserve_after) {
    reservation_ = Reservation{g.key, g.display, now};
    spdlog::info("{}: waiting since {} s; it reserves capacity now", g.display,
                 std::chrono::duration_cast<std::chrono::seconds>(now - it->second.since).count());
  }
}

void Controller::NoteGroupPlaced(const std::string& group_key) {
  bool ended = false;
  {
    std::lock_guard<std::mutex> l(alloc_mu_);
    group_waits_.erase(group_key);
    if (reservation_ && reservation_->group_key == group_key) {
      reservation_.reset();
      ended = true;
    }
  }
  if (ended) OnAllocationInputsChanged();
}

}  // namespace draco::reconcilers
