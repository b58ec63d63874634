// LifecycleProbe: asks the cluster whether kube-controller-manager's resourceclaim controller
// runs, for ClaimLifecycle's auto mode (claim_lifecycle.h).
//
// A probe creates, in draco's namespace, a pod that can never run (scheduling gate
// draco.dev/lifecycle-probe, which nobody removes; label draco.dev/lifecycle-probe=true, which
// makes draco's own controller ignore it) with one claim from the template
// draco-lifecycle-probe (created when missing; its device class need not exist: nothing ever
// allocates the claim). Upstream's controller creates claims for every pod that is not being
// deleted, gated or not, usually within a second. The probe watches the cache for a claim owned
// by its pod; it ends when one appears or after `timeout`, reports to
// ClaimLifecycle::ProbeFinished, and deletes the pod (the garbage collector deletes the claim).
// The next probe starts `interval` later; a pod that waits for upstream's claim asks for one
// sooner (RequestSoon). Left-over probe pods of earlier terms are deleted. While probes cannot
// start (Failing), a pod that waited 30 s for a claim from an existing template stands in for
// the probe (Controller::WaitForLifecycle).
//
// Writes: one pod create and one pod delete per probe, plus the template once. Needs RBAC to
// create and delete pods and create resourceclaimtemplates in `namespace` (the chart grants it).
//
// Driven through the controller's work queue (key kQueueKey, so never two syncs at once): Sync()
// returns when to run again. Thread-safe (RequestSoon may be called from any thread).
#pragma once

#include <atomic>
#include <mutex>
#include <string>

#include "base/clock.h"
#include "controller/reconcilers/claim_lifecycle.h"
#include "controller/reconcilers/cluster_cache.h"
#include "controller/reconcilers/interfaces.h"
#include "controller/reconcilers/reconciler.h"

namespace draco::reconcilers {

inline constexpr std::string_view kProbeLabel = "draco.dev/lifecycle-probe";
inline constexpr std::string_view kProbeTemplate = "draco-lifecycle-probe";

// True for draco's probe pods (by label), which the controller leaves alone.
bool IsLifecycleProbe(const api::Pod& pod);

struct ProbeOptions {
  std::string namespace_ = "kube-system";
  Clock::Duration interval = std::chrono::seconds(30);
  Clock::Duration timeout = std::chrono::seconds(3);
  Clock::Duration poll = std::chrono::milliseconds(200);
};

class LifecycleProbe {
 public:
  // All references must outlive the probe.
  LifecycleProbe(ClaimLifecycle& lifecycle, ClusterCache& cache, ApiWriter& writer, Clock& clock,
                 ProbeOptions options);

  // The work-queue key that runs Sync.
  std::string QueueKey() const;
  // One step: start a probe when one is due, or check the running one. Errors (the pod or the
  // template refused) are logged and retried by the worker with backoff.
  StatusOr<Result> Sync();
  // Makes the next probe due now (it still waits for a running one to end).
  void RequestSoon();
  // The last three probes could not start (the pod or template refused: RBAC, admission).
  bool Failing() const { return failures_.load() >= 3; }

  // The pod a new probe creates (exposed for tests).
  api::Pod ProbePod() const;
  api::ResourceClaimTemplate ProbeTemplate() const;

 private:
  Status Start();
  void Finish(bool claim_seen);
  void DeleteLeftovers();

  ClaimLifecycle& lifecycle_;
  ClusterCache& cache_;
  ApiWriter& writer_;
  Clock& clock_;
  const ProbeOptions options_;
  std::atomic<int> failures_{0};  // probes in a row that could not start
  std::mutex mu_;                 // guards next_
  Clock::TimePoint next_{};
  // Owned by the (single) Sync caller.
  bool running_ = false;
  bool template_ready_ = false;
  std::string pod_name_, pod_uid_;
  Clock::TimePoint started_{};
};

}  // namespace draco::reconcilers
