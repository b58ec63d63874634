#include "controller/reconcilers/worker.h"

#include <gtest/gtest.h>
#include <prometheus/registry.h>

namespace draco::reconcilers {
namespace {

TEST(WorkerTest, AppliesReconcileContract) {
  FakeClock clock;
  k8s::workqueue::QueueOptions qo;
  qo.clock = &clock;
  k8s::workqueue::RateLimitingQueue q(qo);
  prometheus::Registry registry;
  metrics::ControllerMetrics m(registry, {"pod"});
  std::vector<std::string> seen;
  int calls = 0;
  Worker w(
      q,
      [&](const Request& r) -> StatusOr<Result> {
        seen.push_back(r.name);
        ++calls;
        if (r.name == "fail") return UnavailableError("boom");
        if (r.name == "terminal") return TerminalError("bad input");
        if (r.name == "throw") throw std::runtime_error("oops");
        return Result{};
      },
      clock, &m);
  q.Add("pod:ns/ok");
  q.Add("pod:ns/fail");
  q.Add("pod:ns/terminal");
  q.Add("pod:ns/throw");
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(w.ProcessNext());
  EXPECT_EQ(q.NumRequeues("pod:ns/fail"), 1);
  EXPECT_EQ(q.NumRequeues("pod:ns/throw"), 1);
  EXPECT_EQ(q.NumRequeues("pod:ns/terminal"), 0);
  EXPECT_EQ(q.NumRequeues("pod:ns/ok"), 0);
  EXPECT_EQ(q.Len(), 0);  // failures wait for their backoff
  q.ShutDown();
  EXPECT_FALSE(w.ProcessNext());
  EXPECT_EQ(calls, 4);
}

}  // namespace
}  // namespace draco::reconcilers
