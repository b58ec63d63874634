// WorkqueueMetricsProvider: the Prometheus side of k8sclient/workqueue's MetricsProvider, with
// client-go / controller-runtime series names, labelled by queue name:
//   workqueue_depth, workqueue_adds_total, workqueue_queue_duration_seconds,
//   workqueue_work_duration_seconds, workqueue_unfinished_work_seconds,
//   workqueue_longest_running_processor_seconds, workqueue_retries_total.
// Series are created (at zero) when a queue asks for them, i.e. when the queue is constructed.
// Thread-safe. The registry must outlive the provider, and the provider every queue using it.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "k8sclient/workqueue/metrics.h"

namespace draco::metrics {

class WorkqueueMetricsProvider : public k8s::workqueue::MetricsProvider {
 public:
  explicit WorkqueueMetricsProvider(prometheus::Registry& registry);

  std::shared_ptr<k8s::workqueue::GaugeMetric> NewDepthMetric(const std::string& name) override;
  std::shared_ptr<k8s::workqueue::CounterMetric> NewAddsMetric(const std::string& name) override;
  std::shared_ptr<k8s::workqueue::HistogramMetric> NewLatencyMetric(
      const std::string& name) override;
  std::shared_ptr<k8s::workqueue::HistogramMetric> NewWorkDurationMetric(
      const std::string& name) override;
  std::shared_ptr<k8s::workqueue::SettableGaugeMetric> NewUnfinishedWorkSecondsMetric(
      const std::string& name) override;
  std::shared_ptr<k8s::workqueue::SettableGaugeMetric> NewLongestRunningProcessorSecondsMetric(
      const std::string& name) override;
  std::shared_ptr<k8s::workqueue::CounterMetric> NewRetriesMetric(const std::string& name) override;

 private:
  prometheus::Family<prometheus::Gauge>& depth_;
  prometheus::Family<prometheus::Counter>& adds_;
  prometheus::Family<prometheus::Histogram>& queue_duration_;
  prometheus::Family<prometheus::Histogram>& work_duration_;
  prometheus::Family<prometheus::Gauge>& unfinished_;
  prometheus::Family<prometheus::Gauge>& longest_;
  prometheus::Family<prometheus::Counter>& retries_;
};

}  // namespace draco::metrics
