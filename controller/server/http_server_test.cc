#include "controller/server/http_server.h"

#include <atomic>
#include <string>

#include <gtest/gtest.h>
#include <prometheus/registry.h>

#include "controller/metrics/controller_metrics.h"
#include "controller/server/testing_http_get.h"

namespace draco::server {
namespace {

using ::draco::server::testing::HttpGet;

TEST(HttpServerTest, ServesProbesAndMetricsOnEphemeralPort) {
  std::atomic<bool> synced{false};
  auto registry = std::make_shared<prometheus::Registry>();
  metrics::ControllerMetrics m(*registry, {"pod"});
  auto server = HttpServer::Start(
      "127.0.0.1:0",
      {ProbeRoute("/healthz", {}),
       ProbeRoute("/readyz",
                  {{"informers-synced",
                    [&] { return synced ? OkStatus() : UnavailableError("caches not synced"); }}}),
       MetricsRoute({registry})});
  ASSERT_TRUE(server.ok()) << server.status();
  int port = (*server)->port();
  ASSERT_GT(port, 0);
  EXPECT_NE(HttpGet(port, "/healthz").find("200"), std::string::npos);
  std::string ready = HttpGet(port, "/readyz");
  EXPECT_NE(ready.find("500"), std::string::npos) << ready;
  EXPECT_NE(ready.find("[-]informers-synced failed: caches not synced"), std::string::npos);
  synced = true;
  EXPECT_NE(HttpGet(port, "/readyz").find("200 OK"), std::string::npos);
  std::string metrics_text = HttpGet(port, "/metrics");
  EXPECT_NE(metrics_text.find("draco_reconcile_total{controller=\"pod\",result=\"success\"} 0"),
            std::string::npos)
      << metrics_text;
  EXPECT_NE(HttpGet(port, "/nope").find("404"), std::string::npos);
}

TEST(HttpServerTest, BusyPortIsAnErrorNotACrash) {
  auto first = HttpServer::Start("127.0.0.1:0", {ProbeRoute("/healthz", {})});
  ASSERT_TRUE(first.ok());
  auto second =
      HttpServer::Start("127.0.0.1:" + std::to_string((*first)->port()), {ProbeRoute("/x", {})});
  EXPECT_FALSE(second.ok());
}

TEST(NormalizeBindAddressTest, DefaultsToLoopback) {
  EXPECT_EQ(*NormalizeBindAddress(":8080"), "127.0.0.1:8080");
  EXPECT_EQ(*NormalizeBindAddress("8081"), "127.0.0.1:8081");
  EXPECT_EQ(*NormalizeBindAddress("0.0.0.0:9"), "0.0.0.0:9");
  EXPECT_FALSE(NormalizeBindAddress("host:").ok());
}

}  // namespace
}  // namespace draco::server
