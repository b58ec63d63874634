#include "controller/metrics/rest_client_metrics.h"

namespace draco::metrics {
namespace {

// client-go's request-latency buckets.
const prometheus::Histogram::BucketBoundaries& LatencyBuckets() {
  static const prometheus::Histogram::BucketBoundaries kBuckets = {
      0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60};
  return kBuckets;
}

}  // namespace

RestClientMetrics::RestClientMetrics(prometheus::Registry& registry, std::string host)
    : host_(std::move(host)),
      requests_(prometheus::BuildCounter()
                    .Name("rest_client_requests_total")
                    .Help("Number of HTTP requests, partitioned by status code, method, and host.")
                    .Register(registry)),
      duration_(prometheus::BuildHistogram()
                    .Name("rest_client_request_duration_seconds")
                    .Help("Request latency in seconds. Broken down by verb, and host.")
                    .Register(registry)),
      limiter_(prometheus::BuildHistogram()
                   .Name("rest_client_rate_limiter_duration_seconds")
                   .Help("Client side rate limiter latency in seconds. Broken down by verb, and "
                         "host.")
                   .Register(registry)) {}

void RestClientMetrics::Observe(std::string_view method, int code, double latency_seconds,
                                double rate_limiter_seconds) {
  std::string m(method);
  std::string c = code == 0 ? "<error>" : std::to_string(code);
  prometheus::Counter* counter;
  prometheus::Histogram* lat;
  prometheus::Histogram* lim;
  {
    std::lock_guard<std::mutex> l(mu_);
    auto& slot = counters_[{m, c}];
    if (slot == nullptr) {
      slot = &requests_.Add({{"code", c}, {"host", host_}, {"method", m}});
    }
    counter = slot;
    auto& h = histograms_[m];
    if (h.first == nullptr) {
      h.first = &duration_.Add({{"host", host_}, {"verb", m}}, LatencyBuckets());
      h.second = &limiter_.Add({{"host", host_}, {"verb", m}}, LatencyBuckets());
    }
    lat = h.first;
    lim = h.second;
  }
  counter->Increment();
  lat->Observe(latency_seconds);
  lim->Observe(rate_limiter_seconds);
}

}  // namespace draco::metrics
