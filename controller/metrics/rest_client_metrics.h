// RestClientMetrics: client-go's rest_client_* series for draco's API traffic.
//   rest_client_requests_total{code,host,method}            counter; code "<error>" when no
//                                                           response arrived
//   rest_client_request_duration_seconds{host,verb}         histogram of request latency
//   rest_client_rate_limiter_duration_seconds{host,verb}    histogram of client-side throttling
// Fed from k8sclient's RestConfig::observer (run.cc bridges the two, so this module does not
// depend on k8sclient). Thread-safe; Observe() is cheap (a mutex-guarded lookup of cached series).
// The registry must outlive this object.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

namespace draco::metrics {

class RestClientMetrics {
 public:
  // `host` is the API server's host:port (label value, as client-go uses the URL host).
  RestClientMetrics(prometheus::Registry& registry, std::string host);

  // One HTTP attempt: method ("GET"...), HTTP code (0 = transport error), latency and the time
  // spent in the client's rate limiter, both in seconds.
  void Observe(std::string_view method, int code, double latency_seconds,
               double rate_limiter_seconds);

 private:
  const std::string host_;
  prometheus::Family<prometheus::Counter>& requests_;
  prometheus::Family<prometheus::Histogram>& duration_;
  prometheus::Family<prometheus::Histogram>& limiter_;
  std::mutex mu_;
  std::map<std::pair<std::string, std::string>, prometheus::Counter*> counters_;
  std::map<std::string, std::pair<prometheus::Histogram*, prometheus::Histogram*>> histograms_;
};

}  // namespace draco::metrics
