#include "controller/run/liveness.h"

#include <atomic>
#include <latch>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "controller/reconcilers/worker.h"
#include "controller/server/testing_http_get.h"
#include "k8sclient/testing/fake_discovery_client.h"
#include "k8sclient/workqueue/rate_limiting_queue.h"

namespace draco::run {
namespace {

using namespace std::chrono_literals;
using Health = reconcilers::Informers::InformerHealth;

using ::draco::server::testing::HttpGet;

bool Eventually(const std::function<bool()>& pred) {
  for (int i = 0; i < 1000; ++i) {
    if (pred()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return pred();
}

// A worker of the real pool wedged on one item (its reconcile blocks on a latch) turns /healthz
// into 500 naming the workers check and the key once the threshold passes on the clock, and back
// into 200 when the item finishes.
TEST(LivenessTest, WedgedWorkerFailsHealthzUntilReleased) {
  FakeClock clock;
  k8s::workqueue::QueueOptions qo;
  qo.clock = &clock;
  k8s::workqueue::RateLimitingQueue queue(qo);
  std::latch started(1);
  std::latch release(1);
  std::atomic<int> done{0};
  reconcilers::Worker worker(
      queue,
      [&](const reconcilers::Request&) -> StatusOr<reconcilers::Result> {
        started.count_down();
        release.wait();
        ++done;
        return reconcilers::Result{};
      },
      clock, nullptr);
  LivenessOptions opts;
  opts.stuck_worker_timeout = 5min;
  Liveness liveness(clock, opts);
  liveness.SetQueue(&queue);
  auto server = server::HttpServer::Start(
      "127.0.0.1:0",
      {server::ProbeRoute("/healthz", {{"workers", [&] { return liveness.CheckWorkers(); }}})});
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const int port = (*server)->port();
  worker.Run(2);
  EXPECT_NE(HttpGet(port, "/healthz").find(" 200 "), std::string::npos);  // idle

  queue.Add("pod:ns/wedged");
  started.wait();
  clock.Step(4min);
  EXPECT_NE(HttpGet(port, "/healthz").find(" 200 "), std::string::npos);  // busy, not stuck
  clock.Step(2min);
  const std::string wedged = HttpGet(port, "/healthz");
  EXPECT_NE(wedged.find(" 500 "), std::string::npos) << wedged;
  EXPECT_NE(wedged.find("[-]workers failed"), std::string::npos) << wedged;
  EXPECT_NE(wedged.find("pod:ns/wedged for 360s"), std::string::npos) << wedged;

  release.count_down();
  ASSERT_TRUE(Eventually([&] { return done == 1; }));
  ASSERT_TRUE(
      Eventually([&] { return HttpGet(port, "/healthz").find(" 200 ") != std::string::npos; }));
  queue.ShutDown();
  worker.Join();
  liveness.SetQueue(nullptr);
}

TEST(LivenessTest, InformersGetAStartupGraceThenMustSyncAndKeepWatching) {
  FakeClock clock;
  LivenessOptions opts;
  opts.initial_sync_timeout = 10min;
  opts.watch_down_timeout = 5min;
  Liveness liveness(clock, opts);
  const auto t0 = clock.Now();
  std::vector<Health> h = {{"pods", false, t0}, {"nodes", true, std::nullopt}};
  clock.Step(9min);
  EXPECT_TRUE(liveness.CheckInformers(h).ok());  // still listing, within the grace
  clock.Step(2min);
  Status st = liveness.CheckInformers(h);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("pods not synced 660s after start-up"), std::string::npos)
      << st.message();
  EXPECT_EQ(st.message().find("nodes"), std::string::npos) << st.message();

  h[0] = {"pods", true, std::nullopt};
  EXPECT_TRUE(liveness.CheckInformers(h).ok());
  h[1] = {"nodes", true, clock.Now()};  // the watch ended: reconnecting
  clock.Step(5min);
  EXPECT_TRUE(liveness.CheckInformers(h).ok());
  clock.Step(1s);
  st = liveness.CheckInformers(h);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("nodes watch down for 301s"), std::string::npos) << st.message();
}

TEST(LivenessTest, StandbyElectorMustKeepTrying) {
  FakeClock clock;
  k8s::testing::FakeDiscoveryClient client;
  k8s::LeaderElectionConfig le;
  le.lease_namespace = "ns";
  le.lease_name = "draco";
  le.identity = "me";
  le.on_started_leading = [] {};
  le.on_stopped_leading = [] {};
  auto elector = k8s::LeaderElector::New(client, clock, le);
  ASSERT_TRUE(elector.ok());
  Liveness liveness(clock, {});
  EXPECT_TRUE(liveness.CheckLeaderElection().ok());  // no elector: nothing to check
  liveness.SetElector(elector->get(), 15s, 10s);
  clock.Step(25s);
  EXPECT_TRUE(liveness.CheckLeaderElection().ok());
  clock.Step(1s);  // never ran an attempt: its loop is stuck
  Status st = liveness.CheckLeaderElection();
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("no attempt to acquire the Lease for 26s"), std::string::npos)
      << st.message();
  liveness.SetElector(nullptr, {}, {});
  EXPECT_TRUE(liveness.CheckLeaderElection().ok());
}

}  // namespace
}  // namespace draco::run
