#include "controller/metrics/controller_metrics.h"

#include <sstream>

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include "base/version.h"

namespace draco::metrics {
namespace {

std::string Scrape(const prometheus::Collectable& c) {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, c.Collect());
  return out.str();
}

TEST(ControllerMetricsTest, InitialisesKnownSeriesToZero) {
  prometheus::Registry registry;
  ControllerMetrics m(registry, {"claim", "pod"});
  std::string text = Scrape(registry);
  EXPECT_NE(text.find("draco_reconcile_total{controller=\"pod\",result=\"error\"} 0"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("draco_allocation_attempts_total{result=\"unschedulable\"} 0"),
            std::string::npos);
  EXPECT_NE(text.find("draco_resource_claim_creates_total{status=\"failure\"} 0"),
            std::string::npos);
  EXPECT_NE(text.find("draco_double_allocated_devices 0"), std::string::npos);
  EXPECT_NE(text.find("draco_released_unschedulable_total 0"), std::string::npos);
}

TEST(ControllerMetricsTest, ExportsBuildInfo) {
  prometheus::Registry registry;
  ControllerMetrics m(registry, {"pod"});
  const std::string want = "draco_build_info{platform=\"" + std::string(Platform()) +
                           "\",revision=\"" + std::string(Revision()) + "\",version=\"" +
                           std::string(Version()) + "\"} 1";
  EXPECT_NE(Scrape(registry).find(want), std::string::npos) << Scrape(registry);
}

TEST(ControllerMetricsTest, CountsReleasedUnschedulablePods) {
  prometheus::Registry registry;
  ControllerMetrics m(registry, {"pod"});
  m.IncReleasedUnschedulable();
  m.IncReleasedUnschedulable();
  std::string text = Scrape(registry);
  EXPECT_NE(text.find("draco_released_unschedulable_total 2"), std::string::npos) << text;
}

TEST(ControllerMetricsTest, CountsBindingConditionDeallocationsByReason) {
  prometheus::Registry registry;
  ControllerMetrics m(registry, {"pod"});
  EXPECT_NE(
      Scrape(registry).find("draco_binding_conditions_deallocations_total{reason=\"timeout\"} 0"),
      std::string::npos);
  m.IncBindingConditionsDeallocation(/*timeout=*/false);
  m.IncBindingConditionsDeallocation(/*timeout=*/false);
  m.IncBindingConditionsDeallocation(/*timeout=*/true);
  std::string text = Scrape(registry);
  EXPECT_NE(text.find("draco_binding_conditions_deallocations_total{reason=\"failed\"} 2"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("draco_binding_conditions_deallocations_total{reason=\"timeout\"} 1"),
            std::string::npos)
      << text;
}

TEST(ControllerMetricsTest, ReconcileErrorsAreCountedTwice) {
  prometheus::Registry registry;
  ControllerMetrics m(registry, {"claim"});
  m.ObserveReconcile("claim", ReconcileResult::kError, 0.01);
  m.ObserveReconcile("claim", ReconcileResult::kSuccess, 0.01);
  m.ObserveAllocation(AllocationResult::kConflict, 0.002);
  m.SetLeader("draco", true);
  std::string text = Scrape(registry);
  EXPECT_NE(text.find("draco_reconcile_total{controller=\"claim\",result=\"error\"} 1"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("draco_reconcile_errors_total{controller=\"claim\"} 1"), std::string::npos);
  EXPECT_NE(text.find("draco_reconcile_time_seconds_count{controller=\"claim\"} 2"),
            std::string::npos);
  EXPECT_NE(text.find("draco_allocation_attempts_total{result=\"conflict\"} 1"), std::string::npos);
  EXPECT_NE(text.find("leader_election_master_status{name=\"draco\"} 1"), std::string::npos);
}

TEST(InventoryCollectorTest, ExportsPoolsAndClaimsFromSnapshot) {
  InventoryCollector c([] {
    Inventory inv;
    inv.pools.push_back({"gpu.example.com", "node-0", 3, 5, {{"gpu-0", "memory", 80, 20}}});
    inv.claims_allocated_template = 7;
    return inv;
  });
  std::string text = Scrape(c);
  EXPECT_NE(text.find("draco_devices{driver=\"gpu.example.com\",pool=\"node-0\",state=\"free\"} 5"),
            std::string::npos)
      << text;
  EXPECT_NE(
      text.find("draco_resource_claims{allocated=\"true\",source=\"resource_claim_template\"} 7"),
      std::string::npos);
  EXPECT_NE(text.find("draco_resource_claims{allocated=\"false\",source=\"\"} 0"),
            std::string::npos);
  EXPECT_NE(text.find("draco_counter_capacity{driver=\"gpu.example.com\",pool=\"node-0\","
                      "counter_set=\"gpu-0\",counter=\"memory\"} 80"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("draco_counter_used{driver=\"gpu.example.com\",pool=\"node-0\","
                      "counter_set=\"gpu-0\",counter=\"memory\"} 20"),
            std::string::npos);
  EXPECT_NE(text.find("draco_counter_series_dropped 0"), std::string::npos);
}

TEST(InventoryCollectorTest, BoundsCounterSeries) {
  InventoryCollector c([] {
    Inventory inv;
    PoolInventory p{"drv", "p", 0, 0, {}};
    for (size_t i = 0; i < kMaxCounterRows + 5; ++i) {
      p.counters.push_back({"set", "c" + std::to_string(i), 1, 0});
    }
    inv.pools.push_back(p);
    return inv;
  });
  auto families = c.Collect();
  size_t capacity_series = 0;
  for (const auto& f : families) {
    if (f.name == "draco_counter_capacity") capacity_series = f.metric.size();
  }
  EXPECT_EQ(capacity_series, kMaxCounterRows);
  EXPECT_NE(Scrape(c).find("draco_counter_series_dropped 5"), std::string::npos);
}

TEST(ControllerMetricsTest, CountsPendingAttemptsByReason) {
  prometheus::Registry registry;
  ControllerMetrics m(registry, {});
  m.IncPending(PendingReason::kDevicesUnavailable);
  m.IncPending(PendingReason::kDevicesUnavailable);
  std::string text = Scrape(registry);
  EXPECT_NE(text.find("draco_pending_attempts_total{reason=\"devices_unavailable\"} 2"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("draco_pending_attempts_total{reason=\"no_node_fits\"} 0"),
            std::string::npos);
}

}  // namespace
}  // namespace draco::metrics
