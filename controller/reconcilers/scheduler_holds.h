// Scheduler holds: the devices a scheduler may be handing out at this moment, which draco must not
// allocate to anyone else (issue #21, "one allocator per device").
//
// draco is the only allocator of the pods it gates. Everything else with DRA demand that is not
// bound yet is in a scheduler's hands, and kube-scheduler's DynamicResources plugin (or another
// scheduler) allocates its devices itself: pods created before draco was installed, pods in
// namespaces the chart does not gate, DRA-backed extended-resource pods that the gate does not
// cover, pods draco released whose claims the safety net gave back, and an extended-resource pod
// after draco released it (kube-scheduler writes its special claim). Neither allocator sees the
// other's choice before it is written, so without a protocol one device can end up in two claims.
//
// The protocol: while such a pod waits (InSchedulersHands) with a claim unallocated, draco holds,
// on every node its node filter accepts for the pod, the devices the pod's scheduler would choose
// there. kube-scheduler's allocator is first fit in upstream's order, and draco's allocator
// without AllocationPolicies gives upstream's results on identical inputs (the differential tests
// prove it), so the first allocation per node is exactly kube-scheduler's candidate; further
// rounds per node (kRoundsPerNode) cover a scheduler whose view differs a little (a deallocation
// it has not seen yet). Held devices count as in use for every draco decision until the pod's
// claims are allocated (by whoever), the pod is bound, gated, finished or gone. A pod that cannot
// be allocated on any node in draco's view holds nothing (its scheduler cannot place it either),
// so an unschedulable pod does not block draco. Holds are computed for all waiting pods together,
// in pod-key order, each seeing the devices held for the ones before it (a scheduler places pods
// one after another).
//
// What this does not cover, by construction: a scheduler whose claim cache has not yet seen an
// allocation draco wrote before the pod appeared (its view lags the API server) may still choose
// that device. The auditor finds such a double booking and repairs it while one side is still
// gated (Controller::RepairDoubleAllocations), and reports it otherwise.
//
// Thread-compatible: pure functions of their arguments.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "controller/allocator/allocator.h"
#include "controller/api/types.h"
#include "controller/reconcilers/cluster_cache.h"

namespace draco::reconcilers {

// Allocations tried per pod and node (see above).
inline constexpr int kRoundsPerNode = 2;

// True when `pod` is in a scheduler's hands and may make it allocate devices: not bound, not
// being deleted or finished, without any scheduling gate (a gated pod is not scheduled; draco's
// own are draco's to allocate), and asking for DRA devices (spec.resourceClaims, or requests for
// extended resources that a DeviceClass may serve).
bool InSchedulersHands(const api::Pod& pod);

// A pod in a scheduler's hands with claims still to be allocated.
struct WaitingPod {
  PodPtr pod;
  std::vector<ClaimPtr> unallocated;  // its claims (and planned special claim) without allocation
  std::vector<ClaimPtr> allocated;    // its claims already allocated
};

// The pods of `pods` (the cache's SchedulerPods(), in pod-key order) that still wait for devices,
// in the same order, and in `key` what their holds depend on (pod and claim UIDs and
// resourceVersions).
std::vector<WaitingPod> WaitingForScheduler(const ClusterCache& cache,
                                            const std::vector<PodPtr>& pods, std::string* key);

struct SchedulerHolds {
  // Claims of the waiting pods as their scheduler may allocate them, each with the held devices
  // in status.allocation; UIDs "scheduler-hold/<pod uid>/<claim>/<node>/<round>". Never written.
  std::vector<api::ResourceClaim> claims;
  std::vector<std::string> pods;  // "ns/name" of the pods that hold devices, sorted
  size_t devices = 0;             // device results in `claims`
  // Identifies the held devices (driver/pool/device of every result, sorted, with the pod).
  std::string fingerprint;
};

// The holds for `waiting` (WaitingForScheduler): `snapshot` is the allocator snapshot of the
// cache's classes and slices, `allocated` every claim with an allocation, committed or in flight;
// `config` the allocator configuration (its AllocationPolicies are ignored: the scheduler applies
// none). Nodes come from the cache, filtered per pod with draco's node filter (node_fit.h).
SchedulerHolds ComputeSchedulerHolds(const ClusterCache& cache, alloc::Allocator::Config config,
                                     const std::shared_ptr<const alloc::Snapshot>& snapshot,
                                     const std::vector<const api::ResourceClaim*>& allocated,
                                     const std::vector<WaitingPod>& waiting);

// A short text for Events: "3 device(s) held for 2 pod(s) another scheduler is placing (ns/a,
// ns/b)", or "" without holds.
std::string DescribeHolds(const SchedulerHolds& holds);

}  // namespace draco::reconcilers
