// ClusterCache: draco's typed, indexed view of the cluster, fed by the shared informers.
//
// Overview. Informer handlers decode each object once (Informers, informers.h) and call
// Upsert*/Delete* here; reconcilers only read. Besides plain lookups the cache keeps the indexes
// the lifecycle needs and the incremental views the allocator needs:
//   - claims by controlling owner pod UID (orphan lookup after a crash between create and status);
//   - pods by claim "ns/claim" (claim events wake the pods that use the claim);
//   - slices by node name and by (driver, pool);
//   - the allocated-devices view: (driver, pool, device) -> claims whose allocation uses it,
//     updated on every claim change (never recomputed per pod), which also feeds the auditor;
//   - node usage: pods (bound or nominated by draco) and their cpu/memory requests per node.
//
// Assumed writes. After draco itself writes an object (claim create, allocation, pod status), it
// calls Assume*() with the API server's response, so its own next decision sees the write before
// the informer delivers it. An informer event older than an assumed object (smaller integer
// resourceVersion) is ignored; equal or newer replaces it. This is upstream's assume cache /
// MutationCache.
//
// Thread-safety: every method is thread-safe (one shared_mutex). Returned pointers are immutable
// snapshots that stay valid after later updates. Nothing blocks beyond the lock.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/clock.h"
#include "controller/api/policy_types.h"
#include "controller/api/types.h"
#include "controller/api/workload_types.h"
#include "controller/feasibility/snapshot.h"
#include "controller/metrics/controller_metrics.h"
#include "controller/reconcilers/claim_util.h"
#include "controller/reconcilers/object_ptrs.h"

namespace draco::reconcilers {

using ClassPtr = std::shared_ptr<const api::DeviceClass>;
using SlicePtr = std::shared_ptr<const api::ResourceSlice>;

// One node-local or shared ResourceSlice, with the fields the indexes use.
struct SliceEntry {
  std::string name;
  std::string driver;
  std::string pool;
  std::string node_name;  // "" for slices not bound to one node
  int64_t device_count = 0;
  SlicePtr slice;
};
// The entry for `slice` (name, driver, pool, node name and device count taken from it).
SliceEntry MakeSliceEntry(SlicePtr slice);

struct DeviceId {
  std::string driver, pool, device;
  // NOLINTNEXTLINE(modernize-use-nullptr): clang-tidy 14 flags the 0 of the synthesized compare
  friend auto operator<=>(const DeviceId&, const DeviceId&) = default;
  std::string ToString() const { return driver + "/" + pool + "/" + device; }
};

// A device allocated to two or more claims that may not share it (two users, one of them
// exclusive; admin access does not count), with those claims ("ns/name", sorted).
struct DoubleAllocation {
  DeviceId device;
  std::vector<std::string> claims;
};

// Generations let consumers cache derived state (the allocator snapshot).
struct CacheGenerations {
  uint64_t inputs = 0;         // slices, classes, taint rules, allocation policies changed
  uint64_t deallocations = 0;  // an allocation disappeared (claim deallocated or deleted)
};

class ClusterCache {
 public:
  // ---- mutations (informer handlers) ----
  void UpsertPod(PodPtr pod);
  void DeletePod(const std::string& ns, const std::string& name);
  // Returns true if the object was stored (false: older than an assumed version).
  bool UpsertClaim(ClaimPtr claim);
  void DeleteClaim(const std::string& ns, const std::string& name);
  void UpsertTemplate(TemplatePtr t);
  void DeleteTemplate(const std::string& ns, const std::string& name);
  void UpsertClass(ClassPtr cls);
  void DeleteClass(const std::string& name);
  void UpsertSlice(SliceEntry slice);
  void DeleteSlice(const std::string& name);
  void UpsertTaintRule(api::DeviceTaintRule rule);
  void DeleteTaintRule(const std::string& name);
  // draco.dev AllocationPolicies (optional CRD); part of the allocator inputs. Only policies that
  // pass alloc::ValidatePolicy are stored (the informer checks).
  void UpsertPolicy(api::AllocationPolicy policy);
  void DeletePolicy(const std::string& name);
  void UpsertNode(NodePtr node);
  void DeleteNode(const std::string& name);
  // Objects kube-scheduler's volume and namespace-aware filters read (feasibility inputs).
  void UpsertPersistentVolume(std::shared_ptr<const api::PersistentVolume> pv);
  void DeletePersistentVolume(const std::string& name);
  void UpsertPersistentVolumeClaim(std::shared_ptr<const api::PersistentVolumeClaim> pvc);
  void DeletePersistentVolumeClaim(const std::string& ns, const std::string& name);
  void UpsertStorageClass(std::shared_ptr<const api::StorageClass> sc);
  void DeleteStorageClass(const std::string& name);
  void UpsertCSINode(std::shared_ptr<const api::CSINode> csi_node);
  void DeleteCSINode(const std::string& name);
  void UpsertNamespace(std::shared_ptr<const api::Namespace> ns);
  void DeleteNamespace(const std::string& name);
  // scheduling.k8s.io PodGroups (watched only with DRAWorkloadResourceClaims on).
  void UpsertPodGroup(PodGroupPtr group);
  void DeletePodGroup(const std::string& ns, const std::string& name);

  // ---- our own writes ----
  // Stores draco's own write result. Unlike UpsertClaim (the informer), it does not mark the
  // version as observed (see ClaimObserved). A write's answer can arrive after the watch has
  // delivered the object's deletion: an object whose UID the informer deleted recently is not
  // stored again (it would stay forever, holding its devices), and a claim answer that has a
  // deletionTimestamp and no finalizer left removes the claim (the server deleted it).
  void AssumeClaim(ClaimPtr claim);
  void AssumePod(PodPtr pod);
  // The pod was released to kube-scheduler for `node`; it counts as placed there (see
  // FeasibilitySnapshot) until it is bound, finished or deleted.
  void NominatePod(const std::string& pod_key, const std::string& node);
  void ClearNomination(const std::string& pod_key);

  // ---- reads ----
  PodPtr GetPod(const std::string& ns, const std::string& name) const;
  ClaimPtr GetClaim(const std::string& ns, const std::string& name) const;
  TemplatePtr GetTemplate(const std::string& ns, const std::string& name) const;
  NodePtr GetNode(const std::string& name) const;
  std::vector<PodPtr> PodsForClaim(const std::string& ns, const std::string& claim) const;
  // Claims whose controlling owner (a Pod, or a PodGroup) has UID `pod_uid`.
  std::vector<ClaimPtr> ClaimsOwnedByPod(const std::string& pod_uid) const;
  // The generated claim for pod claim entry `pod_claim_name` among claims controlled by the pod
  // (or PodGroup) with that UID.
  ClaimPtr FindGeneratedClaim(const std::string& pod_uid, const std::string& pod_claim_name) const;
  std::vector<NodePtr> Nodes() const;
  // Per node of `nodes` (same order): its status.allocatable as the feasibility filters read it,
  // parsed when the node was cached; null for a node version the cache does not hold.
  std::vector<std::shared_ptr<const feasibility::Resources>> NodeAllocatable(
      const std::vector<NodePtr>& nodes) const;
  PodGroupPtr GetPodGroup(const std::string& ns, const std::string& name) const;
  // Pods of namespace `ns` whose spec.schedulingGroup names PodGroup `group`.
  std::vector<PodPtr> PodGroupMembers(const std::string& ns, const std::string& group) const;
  // Pods whose group key (group::GroupKeyOf) is `group_key`, in pod-key order.
  std::vector<PodPtr> GroupMembers(const std::string& group_key) const;
  // The cluster as kube-scheduler's filters see it, for scheduling the pod `exclude_pod_key`
  // ("ns/name", left out): nodes by name, and as placed pods every pod bound to a node
  // (spec.nodeName, not finished), every pod draco released for a node and every pod
  // kube-scheduler nominated (status.nominatedNodeName), plus PVs, PVCs, StorageClasses, CSINodes
  // and Namespaces. `with_nodes` false leaves `nodes` empty for a caller that supplies its own.
  feasibility::Snapshot FeasibilitySnapshot(const std::string& exclude_pod_key,
                                            bool with_nodes = true) const;
  std::vector<PodPtr> Pods() const;
  // Pods in a scheduler's hands that may make it allocate devices now (InSchedulersHands in
  // scheduler_holds.h: unbound, ungated, not done, with DRA demand) with a claim the cache shows
  // unallocated (or extended resources without their special claim yet), in pod-key order; an
  // index kept on every pod and claim event (empty while every released pod's claims are
  // allocated, as in a burst of gated pods).
  std::vector<PodPtr> SchedulerPods() const;
  bool HasSchedulerPods() const;
  std::vector<ClaimPtr> Claims() const;
  bool HasClass(const std::string& name) const;
  // True when the informer (watch) has delivered `claim`'s resourceVersion or a newer one, i.e. a
  // version draco assumed after its own write has come back through the API server's watch.
  // Other watchers (kube-scheduler) see events in about the same order, so draco waits for this
  // before releasing a pod whose claims it just allocated.
  bool ClaimObserved(const api::ResourceClaim& claim) const;
  // Blocks until ClaimObserved() holds for every claim (by the versions passed in) or `deadline`
  // passes on `clock`; returns whether all were observed. Woken only by informer events of the
  // claims it waits for (many workers wait at once under load; waking all of them on every claim
  // event cost more CPU than the rest of the controller).
  bool WaitClaimsObserved(const std::vector<ClaimPtr>& claims, Clock& clock,
                          Clock::TimePoint deadline) const;

  // Allocator inputs (API objects; the allocator converts them into its own form), by name.
  std::vector<api::DeviceClass> DeviceClasses() const;
  std::vector<SlicePtr> Slices() const;
  std::vector<api::DeviceTaintRule> TaintRules() const;
  std::vector<api::AllocationPolicy> Policies() const;
  CacheGenerations Generations() const;
  // Claims that gained an allocation after log position `seq`, oldest first; `*end` receives the
  // newest position. Lets the allocator commit allocations made by others incrementally.
  std::vector<ClaimPtr> AllocationsSince(uint64_t seq, uint64_t* end) const;
  // Drops log entries up to `seq` (the consumer has seen them).
  void TrimAllocationLog(uint64_t seq);

  // Claims that currently use a device (allocated-devices view).
  std::vector<std::string> ClaimsUsingDevice(const DeviceId& id) const;
  // Devices allocated to two or more claims that may not share them ("driver/pool/device: a, b").
  std::vector<std::string> DoubleAllocatedDevices() const;
  std::vector<DoubleAllocation> DoubleAllocations() const;
  // The double allocations among the devices of `claim`'s allocation (as `claim` has it).
  std::vector<DoubleAllocation> DoubleAllocationsOf(const api::ResourceClaim& claim) const;
  // Inventory for the metrics collector.
  metrics::Inventory Inventory() const;

  // One claim's use of a device (the allocated-devices view).
  struct DeviceUse {
    std::string claim_key;
    bool admin_access = false;
    bool shared = false;  // result carries a shareID (allowMultipleAllocations)
  };

 private:
  // A pod that is not done, with what it occupies on a node (precomputed per pod version: the
  // snapshot is taken for every allocation and must not re-parse every pod's quantities).
  struct LivePod {
    PodPtr pod;
    std::shared_ptr<const feasibility::Resources> requests;
  };

  // UIDs of the newest kMaxTombstones objects the informer deleted.
  struct Tombstones {
    std::deque<std::string> order;
    std::unordered_set<std::string> set;
    void Add(const std::string& uid);
    bool Has(const std::string& uid) const { return set.count(uid) > 0; }
  };
  static constexpr size_t kMaxTombstones = 4096;

  bool UpsertClaimLocked(ClaimPtr claim, bool observed);
  // `key` must not refer into the claim's entry (which this erases).
  void DeleteClaimLocked(const std::string& key);
  void IndexClaimLocked(const std::string& key, const api::ResourceClaim& c, int sign);
  void IndexPodLocked(const std::string& key, const api::Pod& p, int sign);
  void UpsertPodLocked(PodPtr pod);
  // The scheduler-pods index: whether the pod waits for a scheduler to allocate something, and
  // its upkeep when the pod or one of its claims changes.
  bool WaitsForSchedulerLocked(const api::Pod& p) const;
  void RefreshSchedulerPodLocked(const std::string& pod_key);
  void RefreshSchedulerPodsOfClaimLocked(const std::string& claim_key, const api::ResourceClaim& c);
  void EraseNominationLocked(const std::string& pod_key);
  // Counter capacity and use of one pool made of the slices `names` (for Inventory).
  std::vector<metrics::CounterInventory> PoolCountersLocked(
      const std::string& driver, const std::string& pool, const std::set<std::string>& names) const;

  mutable std::shared_mutex mu_;
  std::unordered_map<std::string, PodPtr> pods_;
  std::unordered_map<std::string, ClaimPtr> claims_;
  std::unordered_map<std::string, std::string> observed_rv_;  // claim key -> watched version
  Tombstones deleted_pods_, deleted_claims_;
  // Workers blocked in WaitClaimsObserved, by claim key; each waiter has its own condition
  // variable, notified by events of the claims it registered for.
  mutable std::mutex observed_mu_;
  mutable std::unordered_multimap<std::string, std::condition_variable*> observed_waiters_;
  std::unordered_map<std::string, TemplatePtr> templates_;
  std::map<std::string, ClassPtr> classes_;
  std::map<std::string, SliceEntry> slices_;
  std::map<std::string, api::DeviceTaintRule> taint_rules_;
  std::map<std::string, api::AllocationPolicy> policies_;
  std::map<std::string, NodePtr> nodes_;
  // The parsed allocatable of each node version in nodes_ (keyed by that version).
  std::unordered_map<const api::Node*, std::shared_ptr<const feasibility::Resources>>
      node_allocatable_;
  feasibility::Snapshot storage_;  // only the PV/PVC/StorageClass/CSINode/Namespace maps
  std::unordered_map<std::string, PodGroupPtr> pod_groups_;  // ns/name

  std::unordered_map<std::string, std::set<std::string>> claims_by_owner_;  // pod uid -> keys
  std::unordered_map<std::string, std::set<std::string>> pods_by_claim_;    // ns/claim -> pods
  std::unordered_map<std::string, std::set<std::string>> pods_by_group_;    // group key -> pods
  std::map<std::string, std::set<std::string>> slices_by_node_;
  std::map<std::pair<std::string, std::string>, std::set<std::string>> slices_by_pool_;
  std::map<DeviceId, std::vector<DeviceUse>> allocated_;

  std::unordered_map<std::string, LivePod> live_pods_;      // pod key -> pod not done
  std::set<std::string> scheduler_pods_;                    // keys: WaitsForSchedulerLocked
  std::unordered_map<std::string, std::string> nominated_;  // pod key -> node draco released it to

  CacheGenerations gen_;
  std::deque<std::pair<uint64_t, ClaimPtr>> alloc_log_;
  uint64_t alloc_seq_ = 0;
};

// Integer resourceVersion ordering: true when `a` is older than `b`. Non-numeric versions are
// never considered older.
bool ResourceVersionOlder(const std::string& a, const std::string& b);

}  // namespace draco::reconcilers
