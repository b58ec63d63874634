#include "controller/metrics/workqueue_metrics.h"

#include <sstream>

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

namespace draco::metrics {
namespace {

TEST(WorkqueueMetricsProviderTest, CreatesNamedSeriesAtZeroAndCounts) {
  prometheus::Registry registry;
  WorkqueueMetricsProvider p(registry);
  auto depth = p.NewDepthMetric("draco");
  auto adds = p.NewAddsMetric("draco");
  auto retries = p.NewRetriesMetric("draco");
  auto latency = p.NewLatencyMetric("draco");
  depth->Inc();
  depth->Inc();
  depth->Dec();
  adds->Inc();
  latency->Observe(0.5);
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, registry.Collect());
  std::string text = out.str();
  EXPECT_NE(text.find("workqueue_depth{name=\"draco\"} 1"), std::string::npos) << text;
  EXPECT_NE(text.find("workqueue_adds_total{name=\"draco\"} 1"), std::string::npos);
  EXPECT_NE(text.find("workqueue_retries_total{name=\"draco\"} 0"), std::string::npos);
  EXPECT_NE(text.find("workqueue_queue_duration_seconds_count{name=\"draco\"} 1"),
            std::string::npos);
}

}  // namespace
}  // namespace draco::metrics
