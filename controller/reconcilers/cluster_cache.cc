#include "controller/reconcilers/cluster_cache.h"

#include <algorithm>
#include <charconv>

#include "controller/api/extended_resource.h"
#include "controller/group/group.h"
#include "controller/reconcilers/extended_resource.h"
#include "controller/reconcilers/scheduler_holds.h"

namespace draco::reconcilers {
namespace {

std::string Key(const std::string& ns, const std::string& name) { return ns + "/" + name; }

std::optional<uint64_t> ParseRv(const std::string& rv) {
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(rv.data(), rv.data() + rv.size(), v);
  if (ec != std::errc() || p != rv.data() + rv.size() || rv.empty()) return std::nullopt;
  return v;
}

template <typename M>
typename M::mapped_type Find(const M& m, const std::string& k) {
  auto it = m.find(k);
  return it == m.end() ? typename M::mapped_type() : it->second;
}

}  // namespace

bool ResourceVersionOlder(const std::string& a, const std::string& b) {
  auto x = ParseRv(a), y = ParseRv(b);
  return x && y && *x < *y;
}

// ---------------------------------------------------------------------------------------------
// Pods

void ClusterCache::IndexPodLocked(const std::string& key, const api::Pod& p, int sign) {
  for (const auto& pc : p.spec.resource_claims) {
    auto r = ResolveClaimName(p, pc);
    if (!r.ok() || !r->name) continue;
    std::string ck = Key(p.metadata.namespace_, *r->name);
    if (sign > 0) {
      pods_by_claim_[ck].insert(key);
    } else {
      auto it = pods_by_claim_.find(ck);
      if (it != pods_by_claim_.end()) {
        it->second.erase(key);
        if (it->second.empty()) pods_by_claim_.erase(it);
      }
    }
  }
  if (std::string g = group::GroupKeyOf(p); !g.empty()) {
    if (sign > 0) {
      pods_by_group_[g].insert(key);
    } else if (auto it = pods_by_group_.find(g); it != pods_by_group_.end()) {
      it->second.erase(key);
      if (it->second.empty()) pods_by_group_.erase(it);
    }
  }
  if (sign < 0) {
    live_pods_.erase(key);
    scheduler_pods_.erase(key);
  }
}

bool ClusterCache::WaitsForSchedulerLocked(const api::Pod& p) const {
  if (!InSchedulersHands(p)) return false;
  auto unallocated = [this, &p](const std::string& name) {
    auto it = claims_.find(Key(p.metadata.namespace_, name));
    return it != claims_.end() && !it->second->status.allocation &&
           !it->second->metadata.deletion_timestamp;
  };
  for (const auto& pc : p.spec.resource_claims) {
    auto r = ResolveClaimName(p, pc);
    if (r.ok() && r->name && unallocated(*r->name)) return true;
    // A template claim not created yet: kube-scheduler allocates it as soon as it exists.
    if (r.ok() && r->not_created_yet) return true;
  }
  std::string ext = api::ExtendedResourceClaimName(p);
  return ext.empty() ? AsksDraExtendedResources(p) : unallocated(ext);
}

void ClusterCache::RefreshSchedulerPodLocked(const std::string& pod_key) {
  auto it = pods_.find(pod_key);
  if (it != pods_.end() && WaitsForSchedulerLocked(*it->second)) {
    scheduler_pods_.insert(pod_key);
  } else {
    scheduler_pods_.erase(pod_key);
  }
}

void ClusterCache::RefreshSchedulerPodsOfClaimLocked(const std::string& claim_key,
                                                     const api::ResourceClaim& c) {
  if (auto it = pods_by_claim_.find(claim_key); it != pods_by_claim_.end()) {
    for (const auto& k : it->second) RefreshSchedulerPodLocked(k);
  }
  std::string owner = OwnerPodName(c);  // a special extended-resource claim's pod
  if (!owner.empty()) RefreshSchedulerPodLocked(Key(c.metadata.namespace_, owner));
}

void ClusterCache::UpsertPodLocked(PodPtr pod) {
  std::string key = Key(pod->metadata.namespace_, pod->metadata.name);
  auto it = pods_.find(key);
  if (it != pods_.end()) {
    if (it->second->metadata.uid == pod->metadata.uid &&
        ResourceVersionOlder(pod->metadata.resource_version,
                             it->second->metadata.resource_version)) {
      return;
    }
    IndexPodLocked(key, *it->second, -1);
  }
  IndexPodLocked(key, *pod, +1);
  if (!pod->spec.node_name.empty() || PodReleasesClaims(*pod)) EraseNominationLocked(key);
  if (!IsPodDone(*pod)) {
    auto req = std::make_shared<const feasibility::Resources>(
        feasibility::FromResourceList(feasibility::PlacedPodRequests(*pod)));
    live_pods_[key] = LivePod{pod, std::move(req)};
  }
  pods_[key] = std::move(pod);
  RefreshSchedulerPodLocked(key);
}

void ClusterCache::UpsertPod(PodPtr pod) {
  std::unique_lock l(mu_);
  UpsertPodLocked(std::move(pod));
}

void ClusterCache::Tombstones::Add(const std::string& uid) {
  if (uid.empty() || !set.insert(uid).second) return;
  order.push_back(uid);
  if (order.size() > kMaxTombstones) {
    set.erase(order.front());
    order.pop_front();
  }
}

void ClusterCache::AssumePod(PodPtr pod) {
  std::unique_lock l(mu_);
  if (deleted_pods_.Has(pod->metadata.uid)) return;  // the answer came after the deletion
  UpsertPodLocked(std::move(pod));
}

void ClusterCache::DeletePod(const std::string& ns, const std::string& name) {
  std::unique_lock l(mu_);
  std::string key = Key(ns, name);
  auto it = pods_.find(key);
  if (it == pods_.end()) return;
  deleted_pods_.Add(it->second->metadata.uid);
  IndexPodLocked(key, *it->second, -1);
  EraseNominationLocked(key);
  pods_.erase(it);
}

void ClusterCache::NominatePod(const std::string& pod_key, const std::string& node) {
  std::unique_lock l(mu_);
  nominated_[pod_key] = node;
}

void ClusterCache::ClearNomination(const std::string& pod_key) {
  std::unique_lock l(mu_);
  EraseNominationLocked(pod_key);
}

void ClusterCache::EraseNominationLocked(const std::string& pod_key) { nominated_.erase(pod_key); }

PodPtr ClusterCache::GetPod(const std::string& ns, const std::string& name) const {
  std::shared_lock l(mu_);
  return Find(pods_, Key(ns, name));
}

std::vector<PodPtr> ClusterCache::PodsForClaim(const std::string& ns,
                                               const std::string& claim) const {
  std::shared_lock l(mu_);
  std::vector<PodPtr> out;
  auto it = pods_by_claim_.find(Key(ns, claim));
  if (it == pods_by_claim_.end()) return out;
  for (const auto& k : it->second) {
    if (auto p = Find(pods_, k)) out.push_back(std::move(p));
  }
  return out;
}

std::vector<PodPtr> ClusterCache::SchedulerPods() const {
  std::shared_lock l(mu_);
  std::vector<PodPtr> out;
  out.reserve(scheduler_pods_.size());
  for (const auto& k : scheduler_pods_) {
    if (auto p = Find(pods_, k)) out.push_back(std::move(p));
  }
  return out;
}

bool ClusterCache::HasSchedulerPods() const {
  std::shared_lock l(mu_);
  return !scheduler_pods_.empty();
}

std::vector<PodPtr> ClusterCache::Pods() const {
  std::shared_lock l(mu_);
  std::vector<PodPtr> out;
  out.reserve(pods_.size());
  for (const auto& [k, p] : pods_) out.push_back(p);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Claims

void ClusterCache::IndexClaimLocked(const std::string& key, const api::ResourceClaim& c, int sign) {
  std::string owner = OwnerPodUid(c);
  if (owner.empty()) owner = OwnerPodGroupUid(c);
  if (!owner.empty()) {
    if (sign > 0) {
      claims_by_owner_[owner].insert(key);
    } else {
      auto it = claims_by_owner_.find(owner);
      if (it != claims_by_owner_.end()) {
        it->second.erase(key);
        if (it->second.empty()) claims_by_owner_.erase(it);
      }
    }
  }
  if (!c.status.allocation) return;
  for (const auto& r : c.status.allocation->devices.results) {
    DeviceId id{r.driver, r.pool, r.device};
    auto& uses = allocated_[id];
    if (sign > 0) {
      uses.push_back(DeviceUse{key, r.admin_access.value_or(false), r.share_id.has_value()});
    } else {
      for (auto u = uses.begin(); u != uses.end(); ++u) {
        if (u->claim_key == key) {
          uses.erase(u);
          break;
        }
      }
      if (uses.empty()) allocated_.erase(id);
    }
  }
}

bool ClusterCache::UpsertClaim(ClaimPtr claim) {
  const std::string key = Key(claim->metadata.namespace_, claim->metadata.name);
  bool stored;
  {
    std::unique_lock l(mu_);
    stored = UpsertClaimLocked(std::move(claim), /*observed=*/true);
  }
  std::lock_guard<std::mutex> g(observed_mu_);  // no lost wake-up between check and wait
  auto [first, last] = observed_waiters_.equal_range(key);
  for (auto it = first; it != last; ++it) it->second->notify_one();
  return stored;
}

bool ClusterCache::WaitClaimsObserved(const std::vector<ClaimPtr>& claims, Clock& clock,
                                      Clock::TimePoint deadline) const {
  auto all = [&] {
    for (const auto& c : claims) {
      if (c && !ClaimObserved(*c)) return false;
    }
    return true;
  };
  std::unique_lock<std::mutex> l(observed_mu_);
  if (all()) return true;
  std::condition_variable cv;
  std::vector<std::string> keys;
  for (const auto& c : claims) {
    if (!c) continue;
    keys.push_back(Key(c->metadata.namespace_, c->metadata.name));
    observed_waiters_.emplace(keys.back(), &cv);
  }
  const bool observed = clock.WaitUntil(cv, l, deadline, all);
  for (const auto& k : keys) {
    auto [first, last] = observed_waiters_.equal_range(k);
    for (auto it = first; it != last; ++it) {
      if (it->second == &cv) {
        observed_waiters_.erase(it);
        break;
      }
    }
  }
  return observed;
}

bool ClusterCache::ClaimObserved(const api::ResourceClaim& claim) const {
  std::shared_lock l(mu_);
  auto it = observed_rv_.find(Key(claim.metadata.namespace_, claim.metadata.name));
  return it != observed_rv_.end() &&
         !ResourceVersionOlder(it->second, claim.metadata.resource_version);
}

bool ClusterCache::UpsertClaimLocked(ClaimPtr claim, bool observed) {
  std::string key = Key(claim->metadata.namespace_, claim->metadata.name);
  if (observed) {
    // The newest version the watch delivered (non-numeric versions: the latest one).
    auto [o, inserted] = observed_rv_.emplace(key, claim->metadata.resource_version);
    if (!inserted && !ResourceVersionOlder(claim->metadata.resource_version, o->second)) {
      o->second = claim->metadata.resource_version;
    }
  }
  auto it = claims_.find(key);
  if (it != claims_.end()) {
    if (it->second->metadata.uid == claim->metadata.uid &&
        ResourceVersionOlder(claim->metadata.resource_version,
                             it->second->metadata.resource_version)) {
      return false;
    }
    if (it->second->status.allocation && !claim->status.allocation) ++gen_.deallocations;
    if (!it->second->status.allocation && claim->status.allocation) {
      alloc_log_.emplace_back(++alloc_seq_, claim);
    }
    IndexClaimLocked(key, *it->second, -1);
  } else if (claim->status.allocation) {
    alloc_log_.emplace_back(++alloc_seq_, claim);
  }
  IndexClaimLocked(key, *claim, +1);
  const ClaimPtr& stored = claims_[key] = std::move(claim);
  RefreshSchedulerPodsOfClaimLocked(key, *stored);
  return true;
}

void ClusterCache::AssumeClaim(ClaimPtr claim) {
  std::unique_lock l(mu_);
  if (deleted_claims_.Has(claim->metadata.uid)) return;  // the answer came after the deletion
  if (claim->metadata.deletion_timestamp && claim->metadata.finalizers.empty()) {
    // The write removed the last finalizer of a deleted claim: the server removed the claim.
    auto it = claims_.find(Key(claim->metadata.namespace_, claim->metadata.name));
    if (it != claims_.end() && it->second->metadata.uid == claim->metadata.uid) {
      DeleteClaimLocked(std::string(it->first));  // a copy: `key` must outlive the entry
    }
    return;
  }
  UpsertClaimLocked(std::move(claim), /*observed=*/false);
}

void ClusterCache::DeleteClaim(const std::string& ns, const std::string& name) {
  std::unique_lock l(mu_);
  DeleteClaimLocked(Key(ns, name));
}

void ClusterCache::DeleteClaimLocked(const std::string& key) {
  observed_rv_.erase(key);
  auto it = claims_.find(key);
  if (it == claims_.end()) return;
  deleted_claims_.Add(it->second->metadata.uid);
  if (it->second->status.allocation) ++gen_.deallocations;
  IndexClaimLocked(key, *it->second, -1);
  ClaimPtr gone = std::move(it->second);
  claims_.erase(it);
  RefreshSchedulerPodsOfClaimLocked(key, *gone);
}

ClaimPtr ClusterCache::GetClaim(const std::string& ns, const std::string& name) const {
  std::shared_lock l(mu_);
  return Find(claims_, Key(ns, name));
}

std::vector<ClaimPtr> ClusterCache::ClaimsOwnedByPod(const std::string& pod_uid) const {
  std::shared_lock l(mu_);
  std::vector<ClaimPtr> out;
  auto it = claims_by_owner_.find(pod_uid);
  if (it == claims_by_owner_.end()) return out;
  for (const auto& k : it->second) {
    if (auto c = Find(claims_, k)) out.push_back(std::move(c));
  }
  return out;
}

ClaimPtr ClusterCache::FindGeneratedClaim(const std::string& pod_uid,
                                          const std::string& pod_claim_name) const {
  for (auto& c : ClaimsOwnedByPod(pod_uid)) {
    auto a = c->metadata.annotations.find(std::string(kPodClaimNameAnnotation));
    if (a != c->metadata.annotations.end() && a->second == pod_claim_name) return c;
  }
  return nullptr;
}

std::vector<ClaimPtr> ClusterCache::Claims() const {
  std::shared_lock l(mu_);
  std::vector<ClaimPtr> out;
  out.reserve(claims_.size());
  for (const auto& [k, c] : claims_) out.push_back(c);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Templates, classes, slices, taint rules, nodes

void ClusterCache::UpsertTemplate(TemplatePtr t) {
  std::unique_lock l(mu_);
  std::string key = Key(t->metadata.namespace_, t->metadata.name);
  templates_[key] = std::move(t);
}

void ClusterCache::DeleteTemplate(const std::string& ns, const std::string& name) {
  std::unique_lock l(mu_);
  templates_.erase(Key(ns, name));
}

TemplatePtr ClusterCache::GetTemplate(const std::string& ns, const std::string& name) const {
  std::shared_lock l(mu_);
  return Find(templates_, Key(ns, name));
}

SliceEntry MakeSliceEntry(SlicePtr slice) {
  SliceEntry e;
  e.name = slice->metadata.name;
  e.driver = slice->spec.driver;
  e.pool = slice->spec.pool.name;
  e.node_name = slice->spec.node_name.value_or("");
  e.device_count = static_cast<int64_t>(slice->spec.devices.size());
  e.slice = std::move(slice);
  return e;
}

void ClusterCache::UpsertClass(ClassPtr cls) {
  std::unique_lock l(mu_);
  std::string name = cls->metadata.name;
  classes_[name] = std::move(cls);
  ++gen_.inputs;
}

void ClusterCache::DeleteClass(const std::string& name) {
  std::unique_lock l(mu_);
  classes_.erase(name);
  ++gen_.inputs;
}

bool ClusterCache::HasClass(const std::string& name) const {
  std::shared_lock l(mu_);
  return classes_.count(name) > 0;
}

void ClusterCache::UpsertSlice(SliceEntry slice) {
  std::unique_lock l(mu_);
  auto it = slices_.find(slice.name);
  if (it != slices_.end()) {
    slices_by_node_[it->second.node_name].erase(it->first);
    slices_by_pool_[{it->second.driver, it->second.pool}].erase(it->first);
  }
  slices_by_node_[slice.node_name].insert(slice.name);
  slices_by_pool_[{slice.driver, slice.pool}].insert(slice.name);
  std::string name = slice.name;
  slices_[name] = std::move(slice);
  ++gen_.inputs;
}

void ClusterCache::DeleteSlice(const std::string& name) {
  std::unique_lock l(mu_);
  auto it = slices_.find(name);
  if (it == slices_.end()) return;
  slices_by_node_[it->second.node_name].erase(name);
  auto pk = std::make_pair(it->second.driver, it->second.pool);
  slices_by_pool_[pk].erase(name);
  if (slices_by_pool_[pk].empty()) slices_by_pool_.erase(pk);
  slices_.erase(it);
  ++gen_.inputs;
}

void ClusterCache::UpsertTaintRule(api::DeviceTaintRule rule) {
  std::unique_lock l(mu_);
  std::string name = rule.metadata.name;
  taint_rules_[name] = std::move(rule);
  ++gen_.inputs;
}

void ClusterCache::DeleteTaintRule(const std::string& name) {
  std::unique_lock l(mu_);
  taint_rules_.erase(name);
  ++gen_.inputs;
}

void ClusterCache::UpsertPolicy(api::AllocationPolicy policy) {
  std::unique_lock l(mu_);
  std::string name = policy.metadata.name;
  policies_[name] = std::move(policy);
  ++gen_.inputs;
}

void ClusterCache::DeletePolicy(const std::string& name) {
  std::unique_lock l(mu_);
  if (policies_.erase(name) > 0) ++gen_.inputs;
}

NodePtr ClusterCache::GetNode(const std::string& name) const {
  std::shared_lock l(mu_);
  return Find(nodes_, name);
}

std::vector<NodePtr> ClusterCache::Nodes() const {
  std::shared_lock l(mu_);
  std::vector<NodePtr> out;
  out.reserve(nodes_.size());
  for (const auto& [n, p] : nodes_) out.push_back(p);
  return out;
}

std::vector<api::DeviceClass> ClusterCache::DeviceClasses() const {
  std::shared_lock l(mu_);
  std::vector<api::DeviceClass> out;
  for (const auto& [n, c] : classes_) out.push_back(*c);
  return out;
}

std::vector<SlicePtr> ClusterCache::Slices() const {
  std::shared_lock l(mu_);
  std::vector<SlicePtr> out;
  out.reserve(slices_.size());
  for (const auto& [n, s] : slices_) {
    if (s.slice) out.push_back(s.slice);
  }
  return out;
}

std::vector<api::DeviceTaintRule> ClusterCache::TaintRules() const {
  std::shared_lock l(mu_);
  std::vector<api::DeviceTaintRule> out;
  for (const auto& [n, r] : taint_rules_) out.push_back(r);
  return out;
}

std::vector<api::AllocationPolicy> ClusterCache::Policies() const {
  std::shared_lock l(mu_);
  std::vector<api::AllocationPolicy> out;
  out.reserve(policies_.size());
  for (const auto& [n, p] : policies_) out.push_back(p);
  return out;
}

std::vector<ClaimPtr> ClusterCache::AllocationsSince(uint64_t seq, uint64_t* end) const {
  std::shared_lock l(mu_);
  std::vector<ClaimPtr> out;
  for (auto it = alloc_log_.rbegin(); it != alloc_log_.rend() && it->first > seq; ++it) {
    out.push_back(it->second);
  }
  std::reverse(out.begin(), out.end());
  *end = alloc_seq_;
  return out;
}

void ClusterCache::TrimAllocationLog(uint64_t seq) {
  std::unique_lock l(mu_);
  while (!alloc_log_.empty() && alloc_log_.front().first <= seq) alloc_log_.pop_front();
}

CacheGenerations ClusterCache::Generations() const {
  std::shared_lock l(mu_);
  return gen_;
}

}  // namespace draco::reconcilers
