#include "controller/metrics/rest_client_metrics.h"

#include <sstream>

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

namespace draco::metrics {
namespace {

std::string Scrape(prometheus::Registry& r) {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, r.Collect());
  return out.str();
}

TEST(RestClientMetricsTest, CountsByCodeAndMethodAndRecordsLatencies) {
  prometheus::Registry registry;
  RestClientMetrics m(registry, "127.0.0.1:6443");
  m.Observe("PUT", 200, 0.010, 0);
  m.Observe("PUT", 200, 0.020, 0.5);
  m.Observe("PUT", 409, 0.003, 0);
  m.Observe("GET", 0, 1.0, 0);
  std::string s = Scrape(registry);
  EXPECT_NE(
      s.find(R"(rest_client_requests_total{code="200",host="127.0.0.1:6443",method="PUT"} 2)"),
      std::string::npos)
      << s;
  EXPECT_NE(
      s.find(R"(rest_client_requests_total{code="409",host="127.0.0.1:6443",method="PUT"} 1)"),
      std::string::npos);
  EXPECT_NE(
      s.find(R"(rest_client_requests_total{code="<error>",host="127.0.0.1:6443",method="GET"} 1)"),
      std::string::npos);
  EXPECT_NE(
      s.find(R"(rest_client_request_duration_seconds_count{host="127.0.0.1:6443",verb="PUT"} 3)"),
      std::string::npos);
  EXPECT_NE(
      s.find(
          R"(rest_client_rate_limiter_duration_seconds_sum{host="127.0.0.1:6443",verb="PUT"} 0.5)"),
      std::string::npos);
}

}  // namespace
}  // namespace draco::metrics
