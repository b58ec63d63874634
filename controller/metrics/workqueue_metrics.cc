#include "controller/metrics/workqueue_metrics.h"

namespace draco::metrics {
namespace {

// client-go's workqueue buckets: 1e-8 .. 1e1 seconds, factor 10.
const std::vector<double>& WorkqueueBuckets() {
  static const std::vector<double> kBuckets = {1e-8, 1e-7, 1e-6, 1e-5, 1e-4,
                                               1e-3, 1e-2, 1e-1, 1,    10};
  return kBuckets;
}

class Gauge final : public k8s::workqueue::GaugeMetric, public k8s::workqueue::SettableGaugeMetric {
 public:
  explicit Gauge(prometheus::Gauge& g) : g_(g) {}
  void Inc() override { g_.Increment(); }
  void Dec() override { g_.Decrement(); }
  void Set(double v) override { g_.Set(v); }

 private:
  prometheus::Gauge& g_;
};

class Counter final : public k8s::workqueue::CounterMetric {
 public:
  explicit Counter(prometheus::Counter& c) : c_(c) {}
  void Inc() override { c_.Increment(); }

 private:
  prometheus::Counter& c_;
};

class Histogram final : public k8s::workqueue::HistogramMetric {
 public:
  explicit Histogram(prometheus::Histogram& h) : h_(h) {}
  void Observe(double s) override { h_.Observe(s); }

 private:
  prometheus::Histogram& h_;
};

}  // namespace

WorkqueueMetricsProvider::WorkqueueMetricsProvider(prometheus::Registry& r)
    : depth_(prometheus::BuildGauge()
                 .Name("workqueue_depth")
                 .Help("Current depth of workqueue")
                 .Register(r)),
      adds_(prometheus::BuildCounter()
                .Name("workqueue_adds_total")
                .Help("Total number of adds handled by workqueue")
                .Register(r)),
      queue_duration_(prometheus::BuildHistogram()
                          .Name("workqueue_queue_duration_seconds")
                          .Help("How long in seconds an item stays in workqueue before being "
                                "requested")
                          .Register(r)),
      work_duration_(prometheus::BuildHistogram()
                         .Name("workqueue_work_duration_seconds")
                         .Help("How long in seconds processing an item from workqueue takes")
                         .Register(r)),
      unfinished_(prometheus::BuildGauge()
                      .Name("workqueue_unfinished_work_seconds")
                      .Help("How many seconds of work has been done that is in progress and "
                            "hasn't been observed by work_duration")
                      .Register(r)),
      longest_(prometheus::BuildGauge()
                   .Name("workqueue_longest_running_processor_seconds")
                   .Help("How many seconds has the longest running processor for workqueue "
                         "been running")
                   .Register(r)),
      retries_(prometheus::BuildCounter()
                   .Name("workqueue_retries_total")
                   .Help("Total number of retries handled by workqueue")
                   .Register(r)) {}

std::shared_ptr<k8s::workqueue::GaugeMetric> WorkqueueMetricsProvider::NewDepthMetric(
    const std::string& name) {
  return std::make_shared<Gauge>(depth_.Add({{"name", name}}));
}
std::shared_ptr<k8s::workqueue::CounterMetric> WorkqueueMetricsProvider::NewAddsMetric(
    const std::string& name) {
  return std::make_shared<Counter>(adds_.Add({{"name", name}}));
}
std::shared_ptr<k8s::workqueue::HistogramMetric> WorkqueueMetricsProvider::NewLatencyMetric(
    const std::string& name) {
  return std::make_shared<Histogram>(queue_duration_.Add({{"name", name}}, WorkqueueBuckets()));
}
std::shared_ptr<k8s::workqueue::HistogramMetric> WorkqueueMetricsProvider::NewWorkDurationMetric(
    const std::string& name) {
  return std::make_shared<Histogram>(work_duration_.Add({{"name", name}}, WorkqueueBuckets()));
}
std::shared_ptr<k8s::workqueue::SettableGaugeMetric>
WorkqueueMetricsProvider::NewUnfinishedWorkSecondsMetric(const std::string& name) {
  return std::make_shared<Gauge>(unfinished_.Add({{"name", name}}));
}
std::shared_ptr<k8s::workqueue::SettableGaugeMetric>
WorkqueueMetricsProvider::NewLongestRunningProcessorSecondsMetric(const std::string& name) {
  return std::make_shared<Gauge>(longest_.Add({{"name", name}}));
}
std::shared_ptr<k8s::workqueue::CounterMetric> WorkqueueMetricsProvider::NewRetriesMetric(
    const std::string& name) {
  return std::make_shared<Counter>(retries_.Add({{"name", name}}));
}

}  // namespace draco::metrics
