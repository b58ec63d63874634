#include "k8sclient/workqueue/metrics.h"

namespace draco::k8s::workqueue {
namespace {

class Noop final : public GaugeMetric,
                   public SettableGaugeMetric,
                   public CounterMetric,
                   public HistogramMetric {
 public:
  void Inc() override {}
  void Dec() override {}
  void Set(double) override {}
  void Observe(double) override {}
};

class NoopProvider final : public MetricsProvider {
 public:
  std::shared_ptr<GaugeMetric> NewDepthMetric(const std::string&) override { return noop_; }
  std::shared_ptr<CounterMetric> NewAddsMetric(const std::string&) override { return noop_; }
  std::shared_ptr<HistogramMetric> NewLatencyMetric(const std::string&) override { return noop_; }
  std::shared_ptr<HistogramMetric> NewWorkDurationMetric(const std::string&) override {
    return noop_;
  }
  std::shared_ptr<SettableGaugeMetric> NewUnfinishedWorkSecondsMetric(const std::string&) override {
    return noop_;
  }
  std::shared_ptr<SettableGaugeMetric> NewLongestRunningProcessorSecondsMetric(
      const std::string&) override {
    return noop_;
  }
  std::shared_ptr<CounterMetric> NewRetriesMetric(const std::string&) override { return noop_; }

 private:
  std::shared_ptr<Noop> noop_ = std::make_shared<Noop>();
};

}  // namespace

MetricsProvider& NoopMetricsProvider() {
  static auto* provider = new NoopProvider();  // NOLINT(cppcoreguidelines-owning-memory)
  return *provider;
}

}  // namespace draco::k8s::workqueue
