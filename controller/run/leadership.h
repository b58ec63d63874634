// How `draco run` leads: terms, handovers and shutdown (internal to controller/run).
//
// A replica campaigns for the Lease; each won term gets a FencedClient (its writes stop at the
// elector's ValidUntil(); on_stopped_leading closes it, aborting requests in flight) over a client
// that WarmClients prepared in advance, and a ControllerTerm. A lost term is torn down (the fence
// is already shut) and the replica campaigns again; it does not exit. SIGTERM/SIGINT: the queue
// stops taking work, the fence is shut (with leader election at once, so nothing is written after
// the Lease is released; without, after the drain grace), the elector releases the Lease through
// its own client (never cancelled by the drain), then the workers are joined.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "controller/metrics/controller_metrics.h"
#include "controller/run/term.h"
#include "k8sclient/leaderelection/fenced_client.h"
#include "k8sclient/leaderelection/leader_elector.h"

namespace draco::run {

// Process state shared by the signal thread, the elector callbacks and the main thread.
struct RunState {
  std::mutex mu;
  std::condition_variable cv;
  bool stop = false;                         // SIGTERM/SIGINT
  bool leading = false;                      // the elector's view: a term has started and not ended
  bool term_active = false;                  // the main thread runs (or tears down) a term
  std::shared_ptr<k8s::FencedClient> fence;  // the writes of the current term
  // "Lease NS/NAME as IDENTITY" with leader election (StartElector), for the shutdown log lines.
  std::string lease;
};

// Builds the elector (timings from `flags`); its callbacks open and close terms in `st`.
// nullptr after logging when the configuration is invalid. All references must outlive it.
std::unique_ptr<k8s::LeaderElector> StartElector(const Flags& flags, const std::string& identity,
                                                 k8s::RestClient& lease_client, Clock& clock,
                                                 WarmClients& warm,
                                                 metrics::ControllerMetrics& metrics, RunState& st);
// The elector thread: campaigns again after each lost term once the main thread has torn it
// down; returns after Stop().
void ElectorLoop(k8s::LeaderElector& elector, RunState& st);
// The main thread: runs a ControllerTerm for each term until `st.stop`; returns the running
// term (or nullptr) for Shutdown().
std::unique_ptr<ControllerTerm> RunTerms(const TermDeps& deps, reconcilers::Informers& informers,
                                         RunState& st);
// The shutdown sequence above. `client` is cancelled when the drain grace runs out.
// Shutdown, first phase (the controller runnable's begin_stop): the queue takes no more work and,
// with leader election, the write fence closes before the Lease is released. Logged at info, in
// this order: "stopping workers", "write fence closed" and (from the elector's on_released)
// "released Lease" or "could not release Lease", each naming the Lease and the holder identity,
// so that two replicas' logs show the handover during a rolling update.
void BeginShutdown(ControllerTerm* term, bool leader_elect, RunState& st);
// Second phase (its wait): the workers drain (requests are cancelled after kShutdownDrainGrace)
// and the fence closes.
void FinishShutdown(ControllerTerm* term, k8s::RestClient& client, RunState& st);

}  // namespace draco::run
