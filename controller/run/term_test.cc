#include "controller/run/term.h"

#include <thread>

#include <gtest/gtest.h>

#include "k8sclient/testing/fake_http_server.h"

namespace draco::run {
namespace {

using namespace std::chrono_literals;
using k8s::testing::FakeHttpServer;
using k8s::testing::HttpRequest;
using k8s::testing::HttpResponse;

int VersionGets(const FakeHttpServer& server) {
  int n = 0;
  for (const auto& r : server.requests()) n += r.method == "GET" && r.path == "/version";
  return n;
}

bool Eventually(const std::function<bool()>& pred) {
  for (int i = 0; i < 5000 && !pred(); ++i) std::this_thread::sleep_for(1ms);
  return pred();
}

// The next term's client is connected before it is needed, its connection is reused by the
// term's first request, it is kept alive while waiting, and a replacement is prepared after Take.
TEST(WarmClientsTest, PreparesConnectedClientsAhead) {
  FakeHttpServer server([](const HttpRequest&) {
    HttpResponse r;
    r.body = "{}";
    return r;
  });
  ASSERT_TRUE(server.Start());
  k8s::RestConfig config;
  config.host = server.url();
  FakeClock clock;
  WarmClients warm(config, clock, 15s);
  ASSERT_TRUE(Eventually([&] { return VersionGets(server) == 1; }));
  EXPECT_EQ(server.connections(), 1);
  // cpprestsdk hands the connection back to its pool only after the response has been consumed,
  // a moment after the server counted the GET; a term starts long after that, the test at once.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  auto c = warm.Take();
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_TRUE((*c)->Create(k8s::kConfigMaps, "ns", R"({"metadata":{"name":"x"}})", {}).ok());
  // The replacement connects on its own; the taken client reused the warm connection.
  ASSERT_TRUE(Eventually([&] { return VersionGets(server) == 2; }));
  EXPECT_EQ(server.connections(), 2);
  // While waiting, the prepared client is kept alive.
  while (clock.Waiters() == 0) std::this_thread::yield();
  clock.Step(15s);
  ASSERT_TRUE(Eventually([&] { return VersionGets(server) == 3; }));
}

}  // namespace
}  // namespace draco::run
