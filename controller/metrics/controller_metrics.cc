#include "controller/metrics/controller_metrics.h"

#include <array>

#include <prometheus/metric_family.h>

#include "base/version.h"

namespace draco::metrics {
namespace {

constexpr auto kReconcileResults = std::to_array<ReconcileResult>(
    {ReconcileResult::kSuccess, ReconcileResult::kError, ReconcileResult::kRequeueAfter,
     ReconcileResult::kTerminalError});
constexpr auto kAllocationResults =
    std::to_array<AllocationResult>({AllocationResult::kSuccess, AllocationResult::kUnschedulable,
                                     AllocationResult::kConflict, AllocationResult::kError});

constexpr auto kPendingReasons = std::to_array<PendingReason>(
    {PendingReason::kNoNodeFits, PendingReason::kDevicesUnavailable,
     PendingReason::kAllocationError, PendingReason::kWriteConflict,
     PendingReason::kClaimBeingDeleted, PendingReason::kInvalidConstraints,
     PendingReason::kGroupIncomplete, PendingReason::kWaitingForGroup});

prometheus::ClientMetric GaugeValue(double v) {
  prometheus::ClientMetric m;
  m.gauge.value = v;
  return m;
}

}  // namespace

std::string_view ReconcileResultName(ReconcileResult r) {
  switch (r) {
    case ReconcileResult::kSuccess:
      return "success";
    case ReconcileResult::kError:
      return "error";
    case ReconcileResult::kRequeueAfter:
      return "requeue_after";
    case ReconcileResult::kTerminalError:
      return "terminal_error";
  }
  return "unknown";
}

std::string_view AllocationResultName(AllocationResult r) {
  switch (r) {
    case AllocationResult::kSuccess:
      return "success";
    case AllocationResult::kUnschedulable:
      return "unschedulable";
    case AllocationResult::kConflict:
      return "conflict";
    case AllocationResult::kError:
      return "error";
  }
  return "unknown";
}

std::string_view PendingReasonName(PendingReason r) {
  switch (r) {
    case PendingReason::kNoNodeFits:
      return "no_node_fits";
    case PendingReason::kDevicesUnavailable:
      return "devices_unavailable";
    case PendingReason::kAllocationError:
      return "allocation_error";
    case PendingReason::kWriteConflict:
      return "write_conflict";
    case PendingReason::kClaimBeingDeleted:
      return "claim_being_deleted";
    case PendingReason::kInvalidConstraints:
      return "invalid_scheduling_constraints";
    case PendingReason::kGroupIncomplete:
      return "group_incomplete";
    case PendingReason::kWaitingForGroup:
      return "waiting_for_group";
  }
  return "unknown";
}

const std::vector<double>& LatencyBuckets() {
  static const std::vector<double> kBuckets = [] {
    std::vector<double> b;
    for (double v = 0.001; v < 20; v *= 2) b.push_back(v);
    return b;
  }();
  return kBuckets;
}

ControllerMetrics::ControllerMetrics(prometheus::Registry& registry,
                                     const std::vector<std::string>& controllers)
    : registry_(registry),
      reconcile_total_(prometheus::BuildCounter()
                           .Name("draco_reconcile_total")
                           .Help("Total number of reconciliations per controller and result")
                           .Register(registry)),
      reconcile_errors_(prometheus::BuildCounter()
                            .Name("draco_reconcile_errors_total")
                            .Help("Total number of reconciliation errors per controller")
                            .Register(registry)),
      reconcile_panics_(prometheus::BuildCounter()
                            .Name("draco_reconcile_panics_total")
                            .Help("Reconciliations that threw an exception (caught by the worker)")
                            .Register(registry)),
      reconcile_time_(prometheus::BuildHistogram()
                          .Name("draco_reconcile_time_seconds")
                          .Help("Length of time per reconciliation per controller")
                          .Register(registry)),
      allocation_attempts_(prometheus::BuildCounter()
                               .Name("draco_allocation_attempts_total")
                               .Help("Allocation attempts for pods and claims by result")
                               .Register(registry)),
      allocation_duration_(prometheus::BuildHistogram()
                               .Name("draco_allocation_duration_seconds")
                               .Help("Time the allocator spent per attempt, by result")
                               .Register(registry)),
      pending_attempts_(prometheus::BuildCounter()
                            .Name("draco_pending_attempts_total")
                            .Help("Allocation attempts that left a pod or claim pending, by reason")
                            .Register(registry)),
      claim_allocation_latency_(
          prometheus::BuildHistogram()
              .Name("draco_claim_allocation_latency_seconds")
              .Help("Time from a claim's creation until draco wrote its allocation")
              .Register(registry)
              .Add({}, LatencyBuckets())),
      claim_creates_(prometheus::BuildCounter()
                         .Name("draco_resource_claim_creates_total")
                         .Help("ResourceClaims created from templates, by status")
                         .Register(registry)),
      double_allocated_(
          prometheus::BuildGauge()
              .Name("draco_double_allocated_devices")
              .Help("Devices currently allocated to two claims that may not share them "
                    "(auditor; must be 0)")
              .Register(registry)
              .Add({})),
      scheduler_held_(prometheus::BuildGauge()
                          .Name("draco_scheduler_held_devices")
                          .Help("Devices draco keeps free because a scheduler may be giving them "
                                "to a pod draco does not gate (scheduler holds)")
                          .Register(registry)
                          .Add({})),
      double_repairs_(prometheus::BuildCounter()
                          .Name("draco_double_allocation_repairs_total")
                          .Help("Devices found in two claims: repaired (a gated pod's claim "
                                "deallocated and allocated again) or reported (both in use)")
                          .Register(registry)),
      released_unschedulable_(
          prometheus::BuildCounter()
              .Name("draco_released_unschedulable_total")
              .Help("Pods draco released that their scheduler reported unschedulable and whose "
                    "claims draco deallocated so that they can be placed elsewhere")
              .Register(registry)
              .Add({})),
      binding_deallocations_(prometheus::BuildCounter()
                                 .Name("draco_binding_conditions_deallocations_total")
                                 .Help("Claims of gated pods that draco deallocated to allocate "
                                       "them again: a device binding condition failed or timed "
                                       "out")
                                 .Register(registry)),
      leader_(prometheus::BuildGauge()
                  .Name("leader_election_master_status")
                  .Help("1 while this replica holds the named lease, else 0")
                  .Register(registry)),
      lifecycle_owner_(prometheus::BuildGauge()
                           .Name("draco_claim_lifecycle_owner")
                           .Help("1 for who creates, records, releases and deletes claims: "
                                 "draco, upstream (kube-controller-manager's resourceclaim "
                                 "controller) or undecided (draco is probing)")
                           .Register(registry)),
      lifecycle_switches_(prometheus::BuildCounter()
                              .Name("draco_claim_lifecycle_switches_total")
                              .Help("Changes of the claim lifecycle's owner after it was first "
                                    "decided, by new owner")
                              .Register(registry)) {
  for (const char* o : {"undecided", "draco", "upstream"}) {
    lifecycle_owner_.Add({{"owner", o}}).Set(0);
    if (std::string_view(o) != "undecided") lifecycle_switches_.Add({{"to", o}});
  }
  for (const auto& c : controllers) {
    for (ReconcileResult r : kReconcileResults) {
      reconcile_total_.Add({{"controller", c}, {"result", std::string(ReconcileResultName(r))}});
    }
    reconcile_errors_.Add({{"controller", c}});
    reconcile_panics_.Add({{"controller", c}});
    reconcile_time_.Add({{"controller", c}}, LatencyBuckets());
  }
  for (AllocationResult r : kAllocationResults) {
    std::string name(AllocationResultName(r));
    allocation_attempts_.Add({{"result", name}});
    allocation_duration_.Add({{"result", name}}, LatencyBuckets());
  }
  for (PendingReason r : kPendingReasons) {
    pending_attempts_.Add({{"reason", std::string(PendingReasonName(r))}});
  }
  claim_creates_.Add({{"status", "success"}});
  claim_creates_.Add({{"status", "failure"}});
  binding_deallocations_.Add({{"reason", "failed"}});
  binding_deallocations_.Add({{"reason", "timeout"}});
  double_repairs_.Add({{"outcome", "repaired"}});
  double_repairs_.Add({{"outcome", "reported"}});
  // The build, as kubernetes_build_info: constant 1, the facts in the labels (base/version.h).
  prometheus::BuildGauge()
      .Name("draco_build_info")
      .Help("1, labelled with the version, source revision and platform of this draco binary")
      .Register(registry)
      .Add({{"version", std::string(Version())},
            {"revision", std::string(Revision())},
            {"platform", std::string(Platform())}})
      .Set(1);
}

void ControllerMetrics::ObserveReconcile(std::string_view controller, ReconcileResult result,
                                         double seconds) {
  std::string c(controller);
  reconcile_total_.Add({{"controller", c}, {"result", std::string(ReconcileResultName(result))}})
      .Increment();
  if (result == ReconcileResult::kError || result == ReconcileResult::kTerminalError) {
    reconcile_errors_.Add({{"controller", c}}).Increment();
  }
  reconcile_time_.Add({{"controller", c}}, LatencyBuckets()).Observe(seconds);
}

void ControllerMetrics::IncReconcilePanic(std::string_view controller) {
  reconcile_panics_.Add({{"controller", std::string(controller)}}).Increment();
}

void ControllerMetrics::ObserveAllocation(AllocationResult result, double seconds) {
  std::string name(AllocationResultName(result));
  allocation_attempts_.Add({{"result", name}}).Increment();
  allocation_duration_.Add({{"result", name}}, LatencyBuckets()).Observe(seconds);
}

void ControllerMetrics::IncPending(PendingReason reason) {
  pending_attempts_.Add({{"reason", std::string(PendingReasonName(reason))}}).Increment();
}

void ControllerMetrics::ObserveClaimAllocationLatency(double seconds) {
  claim_allocation_latency_.Observe(seconds);
}

void ControllerMetrics::IncClaimCreate(bool success) {
  claim_creates_.Add({{"status", success ? "success" : "failure"}}).Increment();
}

void ControllerMetrics::SetDoubleAllocatedDevices(double n) { double_allocated_.Set(n); }

void ControllerMetrics::SetSchedulerHeldDevices(double n) { scheduler_held_.Set(n); }

void ControllerMetrics::IncDoubleAllocationRepair(bool repaired) {
  double_repairs_.Add({{"outcome", repaired ? "repaired" : "reported"}}).Increment();
}

void ControllerMetrics::IncReleasedUnschedulable() { released_unschedulable_.Increment(); }

void ControllerMetrics::IncBindingConditionsDeallocation(bool timeout) {
  binding_deallocations_.Add({{"reason", timeout ? "timeout" : "failed"}}).Increment();
}

void ControllerMetrics::SetClaimLifecycleOwner(std::string_view owner) {
  std::lock_guard<std::mutex> l(lifecycle_mu_);
  if (!lifecycle_now_.empty() && lifecycle_now_ != "undecided" && lifecycle_now_ != owner) {
    lifecycle_switches_.Add({{"to", std::string(owner)}}).Increment();
  }
  if (!lifecycle_now_.empty()) lifecycle_owner_.Add({{"owner", lifecycle_now_}}).Set(0);
  lifecycle_now_ = std::string(owner);
  lifecycle_owner_.Add({{"owner", lifecycle_now_}}).Set(1);
}

void ControllerMetrics::SetLeader(std::string_view lease_name, bool leading) {
  leader_.Add({{"name", std::string(lease_name)}}).Set(leading ? 1 : 0);
}

std::vector<prometheus::MetricFamily> InventoryCollector::Collect() const {
  Inventory inv = snapshot_ ? snapshot_() : Inventory{};
  prometheus::MetricFamily devices;
  devices.name = "draco_devices";
  devices.help = "Devices published in ResourceSlices per driver, pool and state";
  devices.type = prometheus::MetricType::Gauge;
  for (const auto& p : inv.pools) {
    for (auto [state, v] : {std::pair{"allocated", p.allocated}, std::pair{"free", p.free}}) {
      prometheus::ClientMetric m = GaugeValue(static_cast<double>(v));
      m.label = {{"driver", p.driver}, {"pool", p.pool}, {"state", state}};
      devices.metric.push_back(std::move(m));
    }
  }
  prometheus::MetricFamily capacity;
  capacity.name = "draco_counter_capacity";
  capacity.help = "Shared counters a pool's ResourceSlices declare, per counter set and counter";
  capacity.type = prometheus::MetricType::Gauge;
  prometheus::MetricFamily used;
  used.name = "draco_counter_used";
  used.help = "Shared counters consumed by the devices allocated in a pool";
  used.type = prometheus::MetricType::Gauge;
  size_t rows = 0, dropped = 0;
  for (const auto& p : inv.pools) {
    for (const auto& c : p.counters) {
      if (rows == kMaxCounterRows) {
        ++dropped;
        continue;
      }
      ++rows;
      std::vector<prometheus::ClientMetric::Label> labels = {{"driver", p.driver},
                                                             {"pool", p.pool},
                                                             {"counter_set", c.counter_set},
                                                             {"counter", c.counter}};
      prometheus::ClientMetric cap = GaugeValue(c.capacity);
      cap.label = labels;
      capacity.metric.push_back(std::move(cap));
      prometheus::ClientMetric u = GaugeValue(c.used);
      u.label = std::move(labels);
      used.metric.push_back(std::move(u));
    }
  }
  prometheus::MetricFamily dropped_family;
  dropped_family.name = "draco_counter_series_dropped";
  dropped_family.help = "Counter rows left out of draco_counter_capacity/used (cardinality bound)";
  dropped_family.type = prometheus::MetricType::Gauge;
  dropped_family.metric.push_back(GaugeValue(static_cast<double>(dropped)));
  prometheus::MetricFamily claims;
  claims.name = "draco_resource_claims";
  claims.help = "ResourceClaims in the cache by allocation state and source";
  claims.type = prometheus::MetricType::Gauge;
  struct Row {
    const char* allocated;
    const char* source;
    int64_t v;
  };
  for (const Row& r : {Row{"true", "resource_claim_template", inv.claims_allocated_template},
                       Row{"true", "", inv.claims_allocated_user},
                       Row{"false", "resource_claim_template", inv.claims_unallocated_template},
                       Row{"false", "", inv.claims_unallocated_user}}) {
    prometheus::ClientMetric m = GaugeValue(static_cast<double>(r.v));
    m.label = {{"allocated", r.allocated}, {"source", r.source}};
    claims.metric.push_back(std::move(m));
  }
  std::vector<prometheus::MetricFamily> out;
  out.push_back(std::move(devices));
  out.push_back(std::move(capacity));
  out.push_back(std::move(used));
  out.push_back(std::move(dropped_family));
  out.push_back(std::move(claims));
  return out;
}

}  // namespace draco::metrics
