// The parts of `draco run` that live for one leadership term (or for the whole process without
// leader election), and the write clients they use.
//
// ControllerTerm: the work queue, the API writer and Event recorder (writing through the term's
// client), the allocator, the controller with a full resync, its workers and the auditor. It
// attaches the controller to the Informers (which outlive terms: a standby keeps a warm cache)
// and detaches it again in Join(). In the auto claim lifecycle mode it runs the LifecycleProbe;
// when the owner changes it requeues everything and records the owner, the reason and the time
// in annotations draco.dev/claim-lifecycle{,-reason,-since} of draco's Lease (with leader
// election), where `kubectl draco status` reads them.
//
// WarmClients: builds each term's write client ahead of time and keeps it connected (a GET of
// /version every keep_alive), so that the first write of a new term does not wait for a new
// client's connection and TLS handshake (seconds on a busy machine: most of a handover).
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "base/clock.h"
#include "controller/allocator/features.h"
#include "controller/metrics/controller_metrics.h"
#include "controller/metrics/workqueue_metrics.h"
#include "controller/reconcilers/api_writer.h"
#include "controller/reconcilers/controller.h"
#include "controller/reconcilers/event_recorder.h"
#include "controller/reconcilers/informers.h"
#include "controller/reconcilers/snapshot_allocator.h"
#include "controller/reconcilers/worker.h"
#include "controller/run/run.h"
#include "k8sclient/config.h"
#include "k8sclient/rest_client.h"
#include "k8sclient/workqueue/rate_limiting_queue.h"

namespace draco::run {

class Liveness;

// What every term shares. All references must outlive the terms.
struct TermDeps {
  const Flags& flags;
  Clock& clock;
  reconcilers::ClusterCache& cache;
  reconcilers::Informers& informers;
  metrics::ControllerMetrics& metrics;
  // Who owns the claim lifecycle; lives as long as the process (a new term starts from what
  // the last one found).
  reconcilers::ClaimLifecycle& lifecycle;
  metrics::WorkqueueMetricsProvider& wq_metrics;
  alloc::Features features;
  std::string identity;  // reportingInstance of Events
  // Where the term's work queue is attached for the /healthz workers check (may be null).
  Liveness* liveness = nullptr;
};

class ControllerTerm {
 public:
  // Builds the controller writing through `writes` (which must outlive the term), enqueues
  // everything and starts flags.workers workers. The informers' caches should be synced.
  ControllerTerm(const TermDeps& deps, k8s::RestClient& writes);
  ~ControllerTerm();  // BeginStop() and Join()
  ControllerTerm(const ControllerTerm&) = delete;
  ControllerTerm& operator=(const ControllerTerm&) = delete;

  // No new work: the queue shuts down; workers finish their current item. Non-blocking.
  void BeginStop();
  // Waits for the workers and the auditor and detaches from the informers. Idempotent.
  void Join();

 private:
  // The lifecycle's change callback holds this, not the term: Join() detaches it.
  struct LifecycleHook {
    std::mutex mu;
    ControllerTerm* term = nullptr;
  };
  // Metric, requeue of everything and (with `record`, and leader election) the Lease annotations.
  void OnLifecycleChange(reconcilers::LifecycleOwner owner, const std::string& reason,
                         bool record = true);
  // Auto mode: start from the owner the Lease records (ClaimLifecycle::Restore); whether it did.
  bool RestoreLifecycle();

  const TermDeps& deps_;
  k8s::RestClient& writes_;
  std::shared_ptr<LifecycleHook> hook_;
  std::unique_ptr<reconcilers::LifecycleProbe> probe_;
  std::unique_ptr<k8s::workqueue::RateLimitingQueue> queue_;
  std::unique_ptr<reconcilers::QueueEnqueuer> enqueuer_;
  std::unique_ptr<reconcilers::RestApiWriter> writer_;
  std::unique_ptr<reconcilers::AsyncEventRecorder> recorder_;
  std::unique_ptr<reconcilers::SnapshotAllocator> allocator_;
  std::unique_ptr<reconcilers::Controller> controller_;
  std::unique_ptr<reconcilers::Worker> worker_;
  std::thread auditor_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  bool joined_ = false;
};

class WarmClients {
 public:
  // Starts preparing the first client at once. `clock` must outlive this.
  WarmClients(k8s::RestConfig config, Clock& clock,
              Clock::Duration keep_alive = std::chrono::seconds(15));
  ~WarmClients();
  WarmClients(const WarmClients&) = delete;
  WarmClients& operator=(const WarmClients&) = delete;

  // The prepared client (waits while the first one is still being built); preparation of the
  // next one starts in the background. Errors are those of NewRestClient.
  StatusOr<std::shared_ptr<k8s::RestClient>> Take();

 private:
  void Loop();

  const k8s::RestConfig config_;
  Clock& clock_;
  const Clock::Duration keep_alive_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::shared_ptr<k8s::RestClient> next_;
  Status next_error_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace draco::run
