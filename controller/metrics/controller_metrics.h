// ControllerMetrics: every Prometheus series the draco controller exports, in one place.
//
// Overview. The controller's code never touches prometheus-cpp directly; it calls the small typed
// methods below (ObserveReconcile, ObserveAllocation, ...). Names follow controller-runtime and
// client-go so existing dashboards work: `draco_reconcile_total{controller,result}`,
// `draco_reconcile_errors_total`, `draco_reconcile_time_seconds`, `draco_allocation_attempts_total
// {result}`, `draco_allocation_duration_seconds`, `draco_claim_allocation_latency_seconds`,
// `draco_resource_claim_creates_total{status}`, `draco_double_allocated_devices`,
// `draco_scheduler_held_devices`, `draco_double_allocation_repairs_total{outcome}`,
// `draco_released_unschedulable_total`, `draco_binding_conditions_deallocations_total{reason}`,
// `leader_election_master_status{name}`, `draco_claim_lifecycle_owner{owner}`,
// `draco_claim_lifecycle_switches_total{to}`, `draco_build_info{version,revision,platform}`
// (always 1, base/version.h). Every series whose
// label values are known up front is created at construction with value 0, so dashboards show no
// gaps. Inventory gauges (claims and devices per driver and pool) are produced on scrape by
// InventoryCollector.
//
// Ownership. ControllerMetrics registers its families in the Registry it is given; the registry
// must outlive it. Thread-safety: all methods are thread-safe (prometheus-cpp metrics are atomic
// and Family::Add is locked). Nothing blocks.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

namespace draco::metrics {

// Outcome of one reconcile (controller-runtime's result label).
enum class ReconcileResult { kSuccess, kError, kRequeueAfter, kTerminalError };
std::string_view ReconcileResultName(ReconcileResult r);

// Outcome of one allocation attempt for a pod or claim.
enum class AllocationResult {
  kSuccess,        // allocation written
  kUnschedulable,  // no node / no devices fit
  kConflict,       // lost an optimistic-concurrency race (409) or claim allocated elsewhere
  kError,          // fatal input (bad CEL, missing class) or API failure
};
std::string_view AllocationResultName(AllocationResult r);

// Why an allocation attempt left a pod or claim pending (the "why pending" series). A fixed set:
// the label's cardinality is the number of enumerators.
enum class PendingReason {
  kNoNodeFits,          // no node passes the pod's node constraints and allocated claims
  kDevicesUnavailable,  // nodes fit, but no set of free devices satisfies the claims
  kAllocationError,     // fatal input (bad CEL, missing DeviceClass)
  kWriteConflict,       // the allocation lost an optimistic-concurrency race
  kClaimBeingDeleted,   // a claim of the pod is being deleted
  kInvalidConstraints,  // the pod's scheduling constraints are invalid
  kGroupIncomplete,     // a group member waits for the group's other members to exist
  kWaitingForGroup,     // another group reserves capacity (ControllerOptions::group_reserve_after)
};
std::string_view PendingReasonName(PendingReason r);

class ControllerMetrics {
 public:
  // `controllers` are the controller names pre-initialised in the reconcile series.
  ControllerMetrics(prometheus::Registry& registry, const std::vector<std::string>& controllers);

  void ObserveReconcile(std::string_view controller, ReconcileResult result, double seconds);
  void IncReconcilePanic(std::string_view controller);
  // Allocator run (compute) time and outcome.
  void ObserveAllocation(AllocationResult result, double seconds);
  // An attempt that left a pod or claim pending: draco_pending_attempts_total{reason}.
  void IncPending(PendingReason reason);
  // Time from the claim's creation to its allocation being written.
  void ObserveClaimAllocationLatency(double seconds);
  void IncClaimCreate(bool success);
  void SetDoubleAllocatedDevices(double n);
  // Devices held for pods another scheduler is placing (reconcilers/scheduler_holds.h).
  void SetSchedulerHeldDevices(double n);
  // A device found in two claims: repaired (a gated pod's claim deallocated) or only reported.
  void IncDoubleAllocationRepair(bool repaired);
  // A pod draco released was reported unschedulable by its scheduler and draco deallocated its
  // claims (the safety net, see Controller::RecoverUnschedulable).
  void IncReleasedUnschedulable();
  // draco deallocated a gated pod's claim to allocate it again because a device binding
  // condition failed (timeout=false) or did not become True in time (timeout=true).
  void IncBindingConditionsDeallocation(bool timeout);
  void SetLeader(std::string_view lease_name, bool leading);
  // Who owns the claim lifecycle ("undecided", "draco" or "upstream", see
  // reconcilers/claim_lifecycle.h): draco_claim_lifecycle_owner{owner} is 1 for `owner`, 0 for
  // the others; a change from a decided owner counts in draco_claim_lifecycle_switches_total{to}.
  void SetClaimLifecycleOwner(std::string_view owner);

 private:
  prometheus::Registry& registry_;
  prometheus::Family<prometheus::Counter>& reconcile_total_;
  prometheus::Family<prometheus::Counter>& reconcile_errors_;
  prometheus::Family<prometheus::Counter>& reconcile_panics_;
  prometheus::Family<prometheus::Histogram>& reconcile_time_;
  prometheus::Family<prometheus::Counter>& allocation_attempts_;
  prometheus::Family<prometheus::Histogram>& allocation_duration_;
  prometheus::Family<prometheus::Counter>& pending_attempts_;
  prometheus::Histogram& claim_allocation_latency_;
  prometheus::Family<prometheus::Counter>& claim_creates_;
  prometheus::Gauge& double_allocated_;
  prometheus::Gauge& scheduler_held_;
  prometheus::Family<prometheus::Counter>& double_repairs_;
  prometheus::Counter& released_unschedulable_;
  prometheus::Family<prometheus::Counter>& binding_deallocations_;
  prometheus::Family<prometheus::Gauge>& leader_;
  prometheus::Family<prometheus::Gauge>& lifecycle_owner_;
  prometheus::Family<prometheus::Counter>& lifecycle_switches_;
  std::mutex lifecycle_mu_;
  std::string lifecycle_now_;  // guarded by lifecycle_mu_
};

// Use of one shared counter of a pool: the sum of `capacity` over the pool's counter sets of that
// name, and what the devices allocated in the pool consume of it (admin-access uses consume
// nothing; a device shared by several claims consumes once). Values are Quantity values as floats.
struct CounterInventory {
  std::string counter_set;
  std::string counter;
  double capacity = 0;
  double used = 0;
};

// One row of the device inventory: devices of one (driver, pool).
struct PoolInventory {
  std::string driver;
  std::string pool;
  int64_t allocated = 0;
  int64_t free = 0;
  std::vector<CounterInventory> counters;
};

// Upper bound on the counter rows exported per scrape (each row is two series). ResourceSlice
// validation bounds a pool's counters (8 counter sets x 32 counters per slice); this bounds the
// whole cluster. Rows beyond it are counted in draco_counter_series_dropped.
inline constexpr size_t kMaxCounterRows = 2048;

// Snapshot produced on every scrape.
struct Inventory {
  std::vector<PoolInventory> pools;
  // Claims by (allocated, source); source is "resource_claim_template" or "" (user-created).
  int64_t claims_allocated_template = 0;
  int64_t claims_allocated_user = 0;
  int64_t claims_unallocated_template = 0;
  int64_t claims_unallocated_user = 0;
};

// A Collectable that calls `snapshot` on each scrape and exports
//   draco_devices{driver,pool,state="allocated"|"free"},
//   draco_counter_capacity{driver,pool,counter_set,counter},
//   draco_counter_used{driver,pool,counter_set,counter},
//   draco_counter_series_dropped and
//   draco_resource_claims{allocated="true"|"false",source}.
// Cardinality: two device series per pool (pools are per node for node-local drivers), two series
// per counter of a pool's counter sets, at most kMaxCounterRows counter rows in all (the rest are
// dropped and counted), and four claim series. `snapshot` is called on the scraping thread and
// must be thread-safe.
class InventoryCollector : public prometheus::Collectable {
 public:
  explicit InventoryCollector(std::function<Inventory()> snapshot)
      : snapshot_(std::move(snapshot)) {}
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  std::function<Inventory()> snapshot_;
};

// Histogram buckets for API and reconcile latencies: 1ms .. ~16s, exponential.
const std::vector<double>& LatencyBuckets();

}  // namespace draco::metrics
