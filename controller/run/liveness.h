// Liveness of `draco run`: the checks of /healthz (Kubernetes style, server::ProbeRoute), each
// failing only when the process is wedged in a way a restart repairs, so that the kubelet's
// livenessProbe restarts it. /readyz keeps its own meaning (informers synced, webhook ready).
//
//   informers        an informer that has not synced `initial_sync_timeout` after start-up, or a
//                    synced one whose watch has been down (listing, backing off, reconnecting)
//                    for longer than `watch_down_timeout`
//   workers          a worker busy with one work-queue item for longer than `stuck_worker_timeout`
//                    (the running term's queue: Queue::OldestInFlight); idle workers pass
//   leader-election  (with --leader-elect) as leader: no successful renewal of the Lease within
//                    the lease duration; otherwise: no acquire attempt within the lease duration
//                    plus the renew deadline (the elector's loop is stuck, e.g. behind a term
//                    that does not finish)
//
// Each failure names the informer, the work-queue key or the Lease and how long. The startup
// grace of `informers` is measured from the Liveness's creation (process start-up).
//
// Thread-safety: all methods are thread-safe; the checks run on the HTTP server's threads while
// the term and the election runnable attach and detach what they check. Attached objects must
// stay valid until they are detached (SetQueue(nullptr), SetElector(nullptr)).
#pragma once

#include <chrono>
#include <mutex>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "controller/reconcilers/informers.h"
#include "controller/server/http_server.h"
#include "k8sclient/leaderelection/leader_elector.h"
#include "k8sclient/workqueue/queue.h"

namespace draco::run {

struct LivenessOptions {
  // draco run --healthz-initial-sync-timeout: generous, for the initial LIST of a big cluster.
  Clock::Duration initial_sync_timeout = std::chrono::minutes(10);
  // draco run --healthz-watch-down-timeout: the reflector's backoff caps at 30 s, so a watch down
  // this long means the API server refused or was unreachable for all of it.
  Clock::Duration watch_down_timeout = std::chrono::minutes(5);
  // draco run --healthz-stuck-worker-timeout: a reconcile takes milliseconds to seconds; API
  // requests time out and the allocator stops at 10 s.
  Clock::Duration stuck_worker_timeout = std::chrono::minutes(5);
};

class Liveness {
 public:
  // `clock` must outlive this; start-up is now.
  Liveness(Clock& clock, LivenessOptions options);

  // The running term's queue (ControllerTerm), or nullptr between terms.
  void SetQueue(const k8s::workqueue::Queue* queue);
  // The leader elector with its timings, or nullptr (no --leader-elect; shutting down).
  void SetElector(const k8s::LeaderElector* elector, Clock::Duration lease_duration,
                  Clock::Duration renew_deadline);

  // The checks for ProbeRoute("/healthz", ...): informers, workers and (once an elector was set)
  // leader-election. `informers` must outlive the returned checks.
  std::vector<server::Check> Checks(const reconcilers::Informers& informers);

  // The individual checks (exposed for tests).
  Status CheckInformers(const std::vector<reconcilers::Informers::InformerHealth>& health) const;
  Status CheckWorkers() const;
  Status CheckLeaderElection() const;

 private:
  Clock& clock_;
  const LivenessOptions options_;
  const Clock::TimePoint started_;
  mutable std::mutex mu_;
  const k8s::workqueue::Queue* queue_ = nullptr;
  const k8s::LeaderElector* elector_ = nullptr;
  Clock::Duration lease_duration_{};
  Clock::Duration renew_deadline_{};
};

}  // namespace draco::run
