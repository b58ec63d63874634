// Informers: the shared informers draco runs (ResourceClaims, ResourceClaimTemplates,
// DeviceClasses, ResourceSlices, DeviceTaintRules, Pods, Nodes, and for kube-scheduler's volume
// and namespace-aware filters PersistentVolumes, PersistentVolumeClaims, StorageClasses, CSINodes
// and Namespaces; scheduling.k8s.io PodGroups with DRAWorkloadResourceClaims), plus an optional one
// for draco.dev/v1alpha1 AllocationPolicies, and the bridge from their events to the ClusterCache
// and the Controller's hooks.
//
// AllocationPolicies are optional: the CRD may not be installed. Start() probes the resource with
// a one-item LIST on a background thread; 404 means "no CRD": policies are off (every class is
// FirstFit without limits), the informers count as synced, and the probe is repeated every
// `policy_probe_interval` so a CRD installed later is picked up without a restart. Any other
// error (403, 5xx) is logged and retried at the same interval, and the informers do not count as
// synced until the probe has an answer (a missing RBAC rule must not silently disable quotas).
// A policy that fails to decode is logged and gets a Warning Event; its last good version stays
// in effect. If the CRD is deleted while watched, the informer keeps retrying and the last known
// policies stay in effect.
//
// Each event is decoded once (controller/api for pods, claims, templates, nodes; the allocator's
// model for slices, classes and taint rules), stored in the cache (which maintains the indexes
// and the allocated-devices view), then handed to the controller, which only enqueues keys.
// Objects that fail to decode are logged and skipped (they cannot be acted on).
//
// Threading: the informers' handler threads call into the cache and controller, both thread-safe.
// Start() returns at once; WaitForSync() blocks; Stop() joins every informer thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "controller/reconcilers/cluster_cache.h"
#include "controller/reconcilers/controller.h"
#include "controller/reconcilers/interfaces.h"
#include "k8sclient/cache/lister_watcher.h"
#include "k8sclient/cache/shared_informer.h"

namespace draco::reconcilers {

inline const k8s::GroupVersionResource kResourceClaimTemplatesGvr{"resource.k8s.io", "v1",
                                                                  "resourceclaimtemplates"};
inline const k8s::GroupVersionResource kDeviceClassesGvr{"resource.k8s.io", "v1", "deviceclasses"};
inline const k8s::GroupVersionResource kResourceSlicesGvr{"resource.k8s.io", "v1",
                                                          "resourceslices"};
inline const k8s::GroupVersionResource kDeviceTaintRulesGvr{"resource.k8s.io", "v1",
                                                            "devicetaintrules"};
inline const k8s::GroupVersionResource kPersistentVolumesGvr{"", "v1", "persistentvolumes"};
inline const k8s::GroupVersionResource kPersistentVolumeClaimsGvr{"", "v1",
                                                                  "persistentvolumeclaims"};
inline const k8s::GroupVersionResource kStorageClassesGvr{"storage.k8s.io", "v1", "storageclasses"};
inline const k8s::GroupVersionResource kCSINodesGvr{"storage.k8s.io", "v1", "csinodes"};
inline const k8s::GroupVersionResource kAllocationPoliciesGvr{"draco.dev", "v1alpha1",
                                                              "allocationpolicies"};

class Informers {
 public:
  // All references must outlive this object. `controller` may be null (cache only, e.g. on a
  // standby replica before it leads); SetController() attaches it later. DeviceTaintRules are
  // watched only with `watch_device_taint_rules` (servers before 1.37 do not serve them in v1),
  // PodGroups (scheduling.k8s.io/v1beta1) only with `watch_pod_groups` (the server serves them
  // and DRAWorkloadResourceClaims is on).
  Informers(k8s::RestClient& client, ClusterCache& cache, Clock& clock,
            Clock::Duration policy_probe_interval = std::chrono::seconds(30),
            bool watch_device_taint_rules = true, bool watch_pod_groups = false);
  ~Informers();
  Informers(const Informers&) = delete;
  Informers& operator=(const Informers&) = delete;

  // Both setters wait for the event handlers still using the previous controller/sink, so the
  // previous one may be destroyed once they return (a new leadership term replaces both).
  void SetController(Controller* controller);
  // Optional: where Warning Events about undecodable AllocationPolicies go. Must outlive its use.
  void SetEventSink(EventSink* sink);
  void Start();
  bool WaitForSync(Clock::Duration timeout);
  // Brings the cache's claims and pods up to a consistent read of the API server (a quorum LIST of
  // each, paged): every listed object newer than the cached one replaces it, and a cached one the
  // list lacks whose resourceVersion is older than the list's is dropped (deleted meanwhile). A new
  // leadership term calls it before its workers start: the informers count as synced from their
  // first list on, and after an API-server outage their watches may still be re-listing, so
  // without it a term could allocate from a view older than the previous term's last write
  // (which the Lease's fence put before this term's start) or miss a pod in a scheduler's hands
  // (scheduler_holds.h). Returns the number of objects changed.
  StatusOr<size_t> CatchUp();
  bool HasSynced() const;
  void Stop();

  // One informer as a liveness check sees it.
  struct InformerHealth {
    std::string name;  // the resource, e.g. "resourceclaims"
    bool synced = false;
    // SharedInformer::WatchDownSince(): nullopt while its watch is open.
    std::optional<Clock::TimePoint> watch_down_since;
  };
  // One entry per informer; the AllocationPolicy one while it is watched, or, while the CRD probe
  // has no answer yet, as not synced with no watch. Thread-safe.
  std::vector<InformerHealth> Health() const;

  // State of the optional AllocationPolicy informer.
  enum class PolicyState { kProbing, kAbsent, kWatching };
  PolicyState policy_state() const;

 private:
  void Add(const k8s::GroupVersionResource& gvr, k8s::cache::ResourceEventHandler handler);
  void OnPod(const k8s::ObjectPtr& obj, bool deleted);
  void OnClaim(const k8s::ObjectPtr& obj, bool deleted);
  void OnTemplate(const k8s::ObjectPtr& obj, bool deleted);
  void OnClass(const k8s::ObjectPtr& obj, bool deleted);
  void OnSlice(const k8s::ObjectPtr& obj, bool deleted);
  void OnTaintRule(const k8s::ObjectPtr& obj, bool deleted);
  void OnNode(const k8s::ObjectPtr& obj, bool deleted);
  void OnPolicy(const k8s::ObjectPtr& obj, bool deleted);
  void OnPersistentVolume(const k8s::ObjectPtr& obj, bool deleted);
  void OnPersistentVolumeClaim(const k8s::ObjectPtr& obj, bool deleted);
  void OnStorageClass(const k8s::ObjectPtr& obj, bool deleted);
  void OnCSINode(const k8s::ObjectPtr& obj, bool deleted);
  void OnNamespace(const k8s::ObjectPtr& obj, bool deleted);
  void OnPodGroup(const k8s::ObjectPtr& obj, bool deleted);
  void InputsChanged();
  void ProbePolicies();
  k8s::cache::ResourceEventHandler Handler(void (Informers::*fn)(const k8s::ObjectPtr&, bool));

  k8s::RestClient& client_;
  ClusterCache& cache_;
  Clock& clock_;
  // What is attached, read under a shared lock for each handler call so that SetController() and
  // SetEventSink() can wait for the calls using the previous ones.
  struct Attached {
    std::shared_lock<std::shared_mutex> lock;
    Controller* controller;
    EventSink* events;
  };
  Attached Attach() const;
  mutable std::shared_mutex attach_mu_;
  Controller* controller_ = nullptr;
  std::vector<std::unique_ptr<k8s::cache::ListWatch>> lws_;
  std::vector<std::unique_ptr<k8s::cache::SharedInformer>> informers_;
  std::vector<int> handler_ids_;  // informers_[i]'s handler, whose sync means "cache filled"

  // The optional policy informer (created by the probe thread once the CRD is served).
  const Clock::Duration policy_probe_interval_;
  EventSink* events_ = nullptr;
  mutable std::mutex policy_mu_;
  std::condition_variable policy_cv_;
  bool stopping_ = false;
  PolicyState policy_state_ = PolicyState::kProbing;
  bool policy_was_absent_ = false;
  int policy_handler_id_ = -1;
  std::unique_ptr<k8s::cache::ListWatch> policy_lw_;
  std::unique_ptr<k8s::cache::SharedInformer> policy_informer_;
  std::thread probe_thread_;
};

}  // namespace draco::reconcilers
