// Informers: the seven shared informers draco runs (ResourceClaims, ResourceClaimTemplates,
// DeviceClasses, ResourceSlices, DeviceTaintRules, Pods, Nodes) and the bridge from their events
// to the ClusterCache and the Controller's hooks.
//
// Each event is decoded once (controller/api for pods, claims, templates, nodes; the allocator's
// model for slices, classes and taint rules), stored in the cache (which maintains the indexes
// and the allocated-devices view), then handed to the controller, which only enqueues keys.
// Objects that fail to decode are logged and skipped (they cannot be acted on).
//
// Threading: the informers' handler threads call into the cache and controller, both thread-safe.
// Start() returns at once; WaitForSync() blocks; Stop() joins every informer thread.
#pragma once

#include <memory>
#include <vector>

#include "controller/reconcilers/cluster_cache.h"
#include "controller/reconcilers/controller.h"
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

class Informers {
 public:
  // All references must outlive this object. `controller` may be null (cache only, e.g. on a
  // standby replica before it leads); SetController() attaches it later.
  Informers(k8s::RestClient& client, ClusterCache& cache, Clock& clock);
  ~Informers();

  void SetController(Controller* controller);
  void Start();
  bool WaitForSync(Clock::Duration timeout);
  bool HasSynced() const;
  void Stop();

 private:
  void Add(const k8s::GroupVersionResource& gvr, k8s::cache::ResourceEventHandler handler);
  void OnPod(const k8s::ObjectPtr& obj, bool deleted);
  void OnClaim(const k8s::ObjectPtr& obj, bool deleted);
  void OnTemplate(const k8s::ObjectPtr& obj, bool deleted);
  void OnClass(const k8s::ObjectPtr& obj, bool deleted);
  void OnSlice(const k8s::ObjectPtr& obj, bool deleted);
  void OnTaintRule(const k8s::ObjectPtr& obj, bool deleted);
  void OnNode(const k8s::ObjectPtr& obj, bool deleted);
  void InputsChanged();

  k8s::RestClient& client_;
  ClusterCache& cache_;
  Clock& clock_;
  std::atomic<Controller*> controller_{nullptr};
  std::vector<std::unique_ptr<k8s::cache::ListWatch>> lws_;
  std::vector<std::unique_ptr<k8s::cache::SharedInformer>> informers_;
};

}  // namespace draco::reconcilers
