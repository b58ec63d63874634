// Workqueue metrics hooks (client-go util/workqueue/metrics.go).
//
// The queue never depends on a metrics library. A MetricsProvider creates the per-queue metrics;
// the default is a no-op provider. controller/metrics plugs in a Prometheus-backed provider that
// registers the usual series, labelled by queue name:
//   workqueue_depth, workqueue_adds_total, workqueue_queue_duration_seconds,
//   workqueue_work_duration_seconds, workqueue_unfinished_work_seconds,
//   workqueue_longest_running_processor_seconds, workqueue_retries_total.
//
// Metric objects are called from any thread that uses the queue and must be thread-safe. The
// provider must outlive every queue created with it.
#pragma once

#include <memory>
#include <string>

namespace draco::k8s::workqueue {

class GaugeMetric {
 public:
  virtual ~GaugeMetric() = default;
  virtual void Inc() = 0;
  virtual void Dec() = 0;
};

class SettableGaugeMetric {
 public:
  virtual ~SettableGaugeMetric() = default;
  virtual void Set(double value) = 0;
};

class CounterMetric {
 public:
  virtual ~CounterMetric() = default;
  virtual void Inc() = 0;
};

// Observations are in seconds.
class HistogramMetric {
 public:
  virtual ~HistogramMetric() = default;
  virtual void Observe(double seconds) = 0;
};

class MetricsProvider {
 public:
  virtual ~MetricsProvider() = default;
  virtual std::shared_ptr<GaugeMetric> NewDepthMetric(const std::string& name) = 0;
  virtual std::shared_ptr<CounterMetric> NewAddsMetric(const std::string& name) = 0;
  virtual std::shared_ptr<HistogramMetric> NewLatencyMetric(const std::string& name) = 0;
  virtual std::shared_ptr<HistogramMetric> NewWorkDurationMetric(const std::string& name) = 0;
  virtual std::shared_ptr<SettableGaugeMetric> NewUnfinishedWorkSecondsMetric(
      const std::string& name) = 0;
  virtual std::shared_ptr<SettableGaugeMetric> NewLongestRunningProcessorSecondsMetric(
      const std::string& name) = 0;
  virtual std::shared_ptr<CounterMetric> NewRetriesMetric(const std::string& name) = 0;
};

// The default: every metric is a no-op. Process-wide singleton, never destroyed.
MetricsProvider& NoopMetricsProvider();

}  // namespace draco::k8s::workqueue
