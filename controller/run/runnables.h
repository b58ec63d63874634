// The runnables `draco run` adds to its Manager (manager.h) besides the informers and the
// controller terms: the admission webhook, the metrics/probe HTTP servers and leader election
// (internal to controller/run). Each captures references that must outlive the Manager.
#pragma once

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <prometheus/collectable.h>

#include "controller/admission/webhook.h"
#include "controller/metrics/controller_metrics.h"
#include "controller/reconcilers/informers.h"
#include "controller/run/leadership.h"
#include "controller/run/liveness.h"
#include "controller/run/manager.h"
#include "controller/run/run.h"
#include "controller/server/http_server.h"
#include "controller/server/secure_metrics.h"
#include "k8sclient/leaderelection/leader_elector.h"

namespace draco::run {

// The admission webhook (unless --webhook-bind-address=0), kept in `webhook`.
Runnable WebhookRunnable(const Flags& flags, k8s::RestClient& client, Clock& clock,
                         std::unique_ptr<admission::Webhook>& webhook);

// /metrics, /healthz (liveness.h's checks) and /readyz (ready: informers synced, webhook ready)
// on the metrics and health-probe addresses (one server when they are equal; none for "0"), kept
// in `servers`.
Runnable ServersRunnable(const Flags& flags,
                         std::vector<std::unique_ptr<server::HttpServer>>& servers,
                         reconcilers::Informers& informers, Liveness& liveness,
                         const std::unique_ptr<admission::Webhook>& webhook,
                         std::vector<std::shared_ptr<prometheus::Collectable>> collectables);

// With --leader-elect: the elector and its thread (begin_stop releases the Lease, wait joins),
// attached to `liveness` from start to begin_stop; without: a never-fenced client and
// `st.leading` at once.
Runnable ElectionRunnable(const Flags& flags, const std::string& identity,
                          k8s::RestClient& lease_client, Clock& clock, WarmClients& warm,
                          metrics::ControllerMetrics& metrics, Liveness& liveness, RunState& st,
                          std::unique_ptr<k8s::LeaderElector>& elector, std::thread& thread);

// With --metrics-secure: /metrics on the metrics address over HTTPS, for callers the API server
// authenticates and authorizes (secure_metrics.h; reviews through `client`), kept in `secure`
// (ServersRunnable then serves no plain /metrics). Start fails when the flags conflict
// (server::ValidateMetricsServing) or the certificate directory does not load.
Runnable SecureMetricsRunnable(const Flags& flags, k8s::RestClient& client, Clock& clock,
                               std::vector<std::shared_ptr<prometheus::Collectable>> collectables,
                               std::unique_ptr<server::SecureMetricsServer>& secure);

}  // namespace draco::run
