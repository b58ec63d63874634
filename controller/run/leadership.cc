#include "controller/run/leadership.h"

#include <spdlog/spdlog.h>

namespace draco::run {
namespace {

using namespace std::chrono_literals;

// How long `draco run` without leader election lets workers finish their current item after
// SIGTERM/SIGINT before it cancels the API requests still in progress.
constexpr std::chrono::milliseconds kShutdownDrainGrace{2000};

}  // namespace

std::unique_ptr<k8s::LeaderElector> StartElector(const Flags& flags, const std::string& identity,
                                                 k8s::RestClient& lease_client, Clock& clock,
                                                 WarmClients& warm,
                                                 metrics::ControllerMetrics& metrics,
                                                 RunState& st) {
  k8s::LeaderElectionConfig le;
  le.lease_namespace = flags.leader_elect_namespace;
  le.lease_name = flags.leader_elect_lease_name;
  le.identity = identity;
  le.lease_duration = flags.leader_elect_lease_duration;
  le.renew_deadline = flags.leader_elect_renew_deadline;
  le.retry_period = flags.leader_elect_retry_period;
  // The elector is created below; the callbacks run only after that.
  auto elector = std::make_shared<k8s::LeaderElector*>(nullptr);
  const std::string lease_name = le.lease_name;
  const std::string lease = "Lease " + le.lease_namespace + "/" + le.lease_name + " as " + identity;
  le.on_started_leading = [&st, &warm, &clock, &metrics, elector, lease_name, lease] {
    auto c = warm.Take();
    if (!c.ok()) {
      spdlog::error("cannot build the write client of the term: {}", c.status().ToString());
      std::lock_guard<std::mutex> l(st.mu);
      st.stop = true;
      st.cv.notify_all();
      return;
    }
    k8s::LeaderElector* e = *elector;
    auto fence = std::make_shared<k8s::FencedClient>(*c, clock, [e] { return e->ValidUntil(); });
    metrics.SetLeader(lease_name, true);
    spdlog::info("became leader: {}; writes allowed until the renew deadline", lease);
    std::lock_guard<std::mutex> l(st.mu);
    st.fence = std::move(fence);
    st.leading = true;
    st.cv.notify_all();
  };
  le.on_stopped_leading = [&st, &metrics, lease_name] {
    metrics.SetLeader(lease_name, false);
    std::lock_guard<std::mutex> l(st.mu);
    if (st.fence) st.fence->Close();  // aborts the term's writes in flight
    if (!st.stop) spdlog::error("leadership lost: writes stopped; campaigning again");
    st.leading = false;
    st.cv.notify_all();
  };
  le.on_new_leader = [](const std::string& holder) {
    spdlog::info("leader is now {}", holder.empty() ? "(none)" : holder);
  };
  le.on_released = [lease](const Status& released) {
    if (released.ok()) {
      spdlog::info("released {}: another replica may lead at once", lease);
    } else {
      spdlog::warn("could not release {} (another replica leads once it expires): {}", lease,
                   released.ToString());
    }
  };
  {
    std::lock_guard<std::mutex> l(st.mu);
    st.lease = lease;
  }
  spdlog::info(
      "leader election: lease {}/{} as {} (lease {} ms, renew deadline {} ms, retry {} ms)",
      le.lease_namespace, le.lease_name, le.identity, le.lease_duration / 1ms,
      le.renew_deadline / 1ms, le.retry_period / 1ms);
  metrics.SetLeader(lease_name, false);
  auto e = k8s::LeaderElector::New(lease_client, clock, le);
  if (!e.ok()) {
    spdlog::error("{}", e.status().message());
    return nullptr;
  }
  *elector = e->get();
  return std::move(*e);
}

void ElectorLoop(k8s::LeaderElector& elector, RunState& st) {
  while (true) {
    elector.Run();
    std::unique_lock<std::mutex> l(st.mu);
    st.cv.wait(l, [&] { return st.stop || !st.term_active; });
    if (st.stop) return;
  }
}

std::unique_ptr<ControllerTerm> RunTerms(const TermDeps& deps, reconcilers::Informers& informers,
                                         RunState& st) {
  while (true) {
    std::shared_ptr<k8s::FencedClient> fence;
    {
      std::unique_lock<std::mutex> l(st.mu);
      st.cv.wait(l, [&] { return st.stop || (st.leading && !st.term_active); });
      if (st.stop) return nullptr;
      st.term_active = true;
      fence = st.fence;
    }
    spdlog::info("leading: waiting for informer caches");
    bool go = false;
    while (true) {
      const bool synced = informers.WaitForSync(100ms);
      std::lock_guard<std::mutex> l(st.mu);
      if (st.stop || !st.leading) break;
      if (synced) {
        go = true;
        break;
      }
    }
    // The informers count as synced since their first list; after an outage their watches may
    // still be re-listing. A consistent read brings claims and pods (what is allocated, who waits)
    // before anything is allocated, so no term decides on a view older than the last term's
    // writes. Retried while leading; a failure is not a reason to act on a stale view.
    while (go) {
      auto caught_up = informers.CatchUp();
      if (caught_up.ok()) {
        spdlog::info("leading: claims and pods caught up with a consistent read ({} changed)",
                     *caught_up);
        break;
      }
      spdlog::warn("leading: {}; retrying", caught_up.status().ToString());
      std::unique_lock<std::mutex> l(st.mu);
      st.cv.wait_for(l, 500ms, [&] { return st.stop || !st.leading; });
      if (st.stop || !st.leading) go = false;
    }
    std::unique_ptr<ControllerTerm> term;
    if (go) term = std::make_unique<ControllerTerm>(deps, *fence);
    {
      std::unique_lock<std::mutex> l(st.mu);
      st.cv.wait(l, [&] { return st.stop || !st.leading; });
      if (st.stop) return term;
    }
    // Lost: the fence is shut already, so the workers' writes fail at once.
    term.reset();
    std::lock_guard<std::mutex> l(st.mu);
    st.fence.reset();
    st.term_active = false;
    st.cv.notify_all();
  }
}

void BeginShutdown(ControllerTerm* term, bool leader_elect, RunState& st) {
  spdlog::info("stopping workers");
  if (term) term->BeginStop();
  std::shared_ptr<k8s::FencedClient> fence;
  std::string lease;
  {
    std::lock_guard<std::mutex> l(st.mu);
    fence = st.fence;
    lease = st.lease;
  }
  // With leader election, nothing may be written once the Lease is released: shut the fence
  // before the release (the election runnable's begin_stop, next) so that the next leader starts
  // at once.
  if (leader_elect && fence) {
    fence->Close();
    spdlog::info("write fence closed: no more writes under {}", lease);
  }
}

void FinishShutdown(ControllerTerm* term, k8s::RestClient& client, RunState& st) {
  std::shared_ptr<k8s::FencedClient> fence;
  {
    std::lock_guard<std::mutex> l(st.mu);
    fence = st.fence;
  }
  // Workers finish their current item while the API server answers. A worker still busy after
  // kShutdownDrainGrace is stuck in retries (the API server is unreachable or refusing): cancel
  // every request then, so that shutdown never waits out retry backoffs (minutes with a dead API
  // server). What a cancelled write did or did not do is repaired by the next leader's resync.
  std::mutex drain_mu;
  std::condition_variable drain_cv;
  bool drained = false;
  std::thread drain_watchdog([&] {
    std::unique_lock<std::mutex> l(drain_mu);
    if (!drain_cv.wait_for(l, kShutdownDrainGrace, [&] { return drained; })) {
      spdlog::warn("still draining {} ms after the signal; cancelling API requests",
                   kShutdownDrainGrace.count());
      if (fence) fence->Close();
      client.Cancel();
    }
  });
  if (term) term->Join();
  {
    std::lock_guard<std::mutex> l(drain_mu);
    drained = true;
  }
  drain_cv.notify_all();
  drain_watchdog.join();
  if (fence) fence->Close();
}

}  // namespace draco::run
