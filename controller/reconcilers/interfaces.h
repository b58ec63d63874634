// The narrow seams of the reconcilers: where they write (ApiWriter), where they report
// (EventSink), how they ask for more work (Enqueuer) and how they allocate (ClaimAllocator).
// Production implementations: RestApiWriter (api_writer.h), AsyncEventRecorder (event_recorder.h),
// QueueEnqueuer (worker.h, built in controller/run/term.cc), SnapshotAllocator
// (snapshot_allocator.h). Tests use fakes.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "controller/api/types.h"
#include "controller/reconcilers/object_ptrs.h"

namespace draco::reconcilers {

// All API writes of the reconcilers. Every method blocks until the API server answered and is
// thread-safe. Errors are the RestClient's (k8sclient/api_error.h predicates apply: IsConflict,
// IsNotFound, ...).
class ApiWriter {
 public:
  virtual ~ApiWriter() = default;
  // POST; `claim` carries generateName.
  virtual StatusOr<ClaimPtr> CreateClaim(const api::ResourceClaim& claim) = 0;
  // PUT with metadata.resourceVersion (409 on a stale version). Changes metadata/spec only.
  virtual StatusOr<ClaimPtr> UpdateClaim(const api::ResourceClaim& claim) = 0;
  // PUT .../status with metadata.resourceVersion.
  virtual StatusOr<ClaimPtr> UpdateClaimStatus(const api::ResourceClaim& claim) = 0;
  // DELETE with a UID precondition (a re-created claim of the same name is left alone).
  virtual Status DeleteClaim(const std::string& ns, const std::string& name,
                             const std::string& uid) = 0;
  // Sets pods/status resourceClaimStatuses to `statuses`, the complete list (this controller is its
  // only writer): a JSON patch guarded by a test of the pod's UID (never written to a re-created
  // pod of the same name). The result is what upstream's server-side apply gives, at less cost
  // for the API server (no apply merge; issue #18).
  virtual StatusOr<PodPtr> ApplyPodClaimStatuses(
      const api::Pod& pod, const std::vector<api::PodResourceClaimStatus>& statuses) = 0;
  // Sets status.nominatedNodeName to `node` and, unless `statuses` is null, resourceClaimStatuses
  // to `*statuses`, in one JSON patch of pods/status guarded like ApplyPodClaimStatuses. For a
  // gated pod draco pinned to `node`, just before its gate comes off: kube-scheduler sets the same
  // nominatedNodeName in its binding cycle before PreBind (NominatedNodeNameForExpectation) and
  // skips that pod write when the pod already has it; it also tries the nominated node first.
  virtual StatusOr<PodPtr> NominatePod(const api::Pod& pod,
                                       const std::vector<api::PodResourceClaimStatus>* statuses,
                                       const std::string& node) = 0;
  // Removes scheduling gate `gate` (JSON patch guarded by a test of the entry). Returns nullptr
  // when the gate is not there. When `pin_node` is not empty, the same patch ANDs a required node
  // affinity requirement `metadata.name In [pin_node]` into the pod (guarded by a test of the
  // pod's resourceVersion), so kube-scheduler's NodeAffinity PreFilter narrows its search to that
  // node. Callers pin only when the claims' allocation already restricts the pod to `pin_node`,
  // which makes the requirement redundant for the pod's placement. If the API server refuses the
  // affinity (and the pod had not changed), the gate is removed without it.
  virtual StatusOr<PodPtr> RemoveSchedulingGate(const api::Pod& pod, std::string_view gate,
                                                const std::string& pin_node) = 0;
  // Live GET; nullptr when the pod does not exist.
  virtual StatusOr<PodPtr> GetPodLive(const std::string& ns, const std::string& name) = 0;
  // Server-side apply of podgroups/status resourceClaimStatuses (scheduling.k8s.io/v1beta1):
  // `statuses` is the complete set this field manager owns.
  virtual StatusOr<PodGroupPtr> ApplyPodGroupClaimStatuses(
      const api::PodGroup& group,
      const std::vector<api::PodGroupResourceClaimStatus>& statuses) = 0;
  // Live GET of a PodGroup; nullptr when it (or the PodGroup API) does not exist.
  virtual StatusOr<PodGroupPtr> GetPodGroupLive(const std::string& ns, const std::string& name) = 0;
  // The claim lifecycle probe's writes (lifecycle_probe.h): POST a pod (generateName), DELETE it
  // with a UID precondition, POST a ResourceClaimTemplate (AlreadyExists is the caller's to judge).
  virtual StatusOr<PodPtr> CreatePod(const api::Pod& pod) = 0;
  virtual Status DeletePod(const std::string& ns, const std::string& name,
                           const std::string& uid) = 0;
  virtual Status CreateClaimTemplate(const api::ResourceClaimTemplate& tmpl) = 0;
};

// The object an Event is about.
struct EventTarget {
  std::string api_version;  // "v1" or "resource.k8s.io/v1"
  std::string kind;         // "Pod" or "ResourceClaim"
  std::string namespace_name;
  std::string name;
  std::string uid;
};

// Records Kubernetes Events. Must not block the caller on the API server. Thread-safe.
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void Record(const EventTarget& target, std::string_view type, std::string_view reason,
                      std::string message) = 0;
};

// Adds keys to the work queue ("pod:ns/name", "claim:ns/name"). Thread-safe, non-blocking.
class Enqueuer {
 public:
  virtual ~Enqueuer() = default;
  virtual void Add(const std::string& key) = 0;
  virtual void AddAfter(const std::string& key, Clock::Duration delay) = 0;
  // Like Add, but the key is handed to a worker before every key added with Add
  // (k8s::workqueue::Queue::AddUrgent): for short work others wait on, such as the claims of a
  // pod that finished (they free devices).
  virtual void AddUrgent(const std::string& key) { Add(key); }
  // Like AddUrgent, but ahead of every other urgent key (k8s::workqueue::Queue::AddNext): work
  // that completes what others started, such as releasing a pod whose allocation is confirmed.
  virtual void AddNext(const std::string& key) { AddUrgent(key); }
};

// What the controller asks of the allocator: allocate `claims` (unallocated, pod order) on one of
// `candidates` (already filtered for the pod: fit, readiness, taints, affinity, resources, and
// the node selectors of the pod's already-allocated claims).
struct AllocateRequest {
  std::string pod_key;  // "" for a standalone (immediate) claim
  std::vector<ClaimPtr> claims;
  std::vector<NodePtr> candidates;
  // A candidate to try first (a group member goes where the previous member went), or "".
  std::string prefer_node;
};

struct AllocateResponse {
  enum class Kind { kAllocated, kUnschedulable, kError };
  Kind kind = Kind::kUnschedulable;
  std::string node;                            // kAllocated: the chosen node
  std::vector<api::AllocationResult> results;  // kAllocated: one per claim
  std::string message;                         // explanation (kUnschedulable, kError)
};

// Not thread-safe: the controller serialises calls (one allocation decision at a time, which is
// also what keeps two workers from handing out the same device). A successful Allocate marks the
// devices as in use immediately (in flight) and keeps them marked, whatever happens to the
// snapshot behind it, until Settle() is called for those claims: once their writes are in the
// cache (written), or to free the devices again (not written).
class ClaimAllocator {
 public:
  virtual ~ClaimAllocator() = default;
  virtual AllocateResponse Allocate(const AllocateRequest& request) = 0;
  // Ends the in-flight state of `claims` from one successful Allocate. written=true: their
  // allocations are in the ClusterCache now (assumed after the writes). written=false: some write
  // failed; whatever the cache does not show as allocated is free again.
  virtual void Settle(const std::vector<ClaimPtr>& claims, bool written) = 0;
  // Devices currently held for pods another scheduler is placing (scheduler_holds.h). Thread-safe:
  // read by event handlers to decide whether a pod's or claim's change may end a hold.
  virtual size_t HeldDevices() const { return 0; }
};

}  // namespace draco::reconcilers
