// FlagUsage (run.h): the `draco run --help` text, one entry per flag with its default. Kept apart
// from run.cc's parsing so that flags added by separate concerns (webhook_flags.h and the like)
// append their own usage blocks here.
#include <string>

#include "controller/admission/webhook_flags.h"
#include "controller/allocator/features.h"
#include "controller/run/run.h"
#include "controller/server/metrics_flags.h"

namespace draco::run {

std::string FlagUsage() {
  Flags d;
  std::string u;
  u += "usage: draco run [flags]\n\n";
  u += "Runs the DRA controller: claim lifecycle, allocation before scheduling, cleanup.\n\n";
  // k8s::DefaultConfig's order, which run_test checks against kDefaultConfigOrder.
  u += "  --kubeconfig PATH                  kubeconfig (default: $KUBECONFIG, then in-cluster,\n"
       "                                     then ~/.kube/config)\n";
  u += "  --context NAME                     kubeconfig context (default: current-context)\n";
  u += "  --leader-elect BOOL                Lease leader election (default true)\n";
  u += "  --leader-elect-namespace NS        Lease namespace (default $POD_NAMESPACE or "
       "kube-system)\n";
  u += "  --leader-elect-lease-name NAME     Lease name (default " + d.leader_elect_lease_name +
       ")\n";
  auto secs = [](std::chrono::milliseconds v) { return std::to_string(v.count() / 1000) + "s"; };
  auto mins = [](std::chrono::milliseconds v) { return std::to_string(v.count() / 60000) + "m"; };
  u += "  --leader-elect-lease-duration D    how long standbys wait after the last renewal they "
       "saw\n"
       "                                     before taking over (default " +
       secs(d.leader_elect_lease_duration) + ")\n";
  u +=
      "  --leader-elect-renew-deadline D    the leader stops writing and gives up leadership when\n"
      "                                     it has not renewed for this long (default " +
      secs(d.leader_elect_renew_deadline) + ")\n";
  u += "  --leader-elect-retry-period D      between renewals and acquisition attempts (default " +
       secs(d.leader_elect_retry_period) + ")\n";
  u += "  --metrics-bind-address ADDR        /metrics (default " + d.metrics_bind_address +
       "; 0 = off)\n";
  u += "  --health-probe-bind-address ADDR   /healthz, /readyz (default " +
       d.health_probe_bind_address + "; 0 = off)\n";
  u += "    (ADDR :PORT listens on 127.0.0.1 only; 0.0.0.0:PORT on every address, as in a pod)\n";
  u += "  --healthz-initial-sync-timeout D   /healthz fails when an informer has not synced this\n"
       "                                     long after start-up (default " +
       mins(d.healthz_initial_sync_timeout) + ")\n";
  u += "  --healthz-watch-down-timeout D     ... when a synced informer's watch has been down\n"
       "                                     (listing, reconnecting) this long (default " +
       mins(d.healthz_watch_down_timeout) + ")\n";
  u += "  --healthz-stuck-worker-timeout D   ... when a worker has been busy with one item this\n"
       "                                     long (default " +
       mins(d.healthz_stuck_worker_timeout) +
       "); and, with leader election, when the leader\n"
       "                                     has not renewed within the lease duration or a\n"
       "                                     standby has not tried to acquire within the lease\n"
       "                                     duration plus the renew deadline\n";
  u += "  --kube-api-qps N                   client QPS (default " +
       std::to_string(static_cast<int>(d.kube_api_qps)) + ")\n";
  u += "  --kube-api-burst N                 client burst (default " +
       std::to_string(d.kube_api_burst) + ")\n";
  u += "  --workers N                        reconcile workers (default " +
       std::to_string(d.workers) + ")\n";
  u += "  --http-threads N                   HTTP transport I/O threads (default " +
       std::to_string(d.http_threads) + ")\n";
  u += "  --http-transport direct|cpprestsdk requests and watches on the calling thread (direct,\n"
       "                                     default) or all through cpprestsdk; LISTs always\n"
       "                                     use cpprestsdk\n";
  u += "  --api-encoding protobuf|json       read built-in kinds as protobuf (default; JSON for a\n"
       "                                     kind whose protobuf is not understood) or as JSON\n";
  u += "  --allocate BOOL                    allocate claims (default true; false = lifecycle "
       "only)\n";
  u += "  --pin-allocated-node BOOL          when an allocation is node-local, release the pod\n"
       "                                     with that node as required node affinity, so\n"
       "                                     kube-scheduler checks one node (default true)\n";
  u += "  --binding-timeout D                how long a gated pod waits for its devices' binding\n"
       "                                     conditions before draco allocates its claim again\n"
       "                                     (default " +
       secs(d.binding_timeout) + "; use kube-scheduler's bindingTimeout)\n";
  u +=
      "  --claim-lifecycle MODE             who creates claims from templates, records them in\n"
      "                                     pod status, releases and deletes them: auto (probe\n"
      "                                     whether kube-controller-manager's resourceclaim\n"
      "                                     controller runs, as on managed clusters, and leave it\n"
      "                                     to it then), draco or upstream (default " +
      d.claim_lifecycle + ")\n";
  u += "  --claim-lifecycle-probe-interval D how often auto mode probes again (default " +
       secs(d.claim_lifecycle_probe_interval) + ")\n";
  u += "  --groups BOOL                      place pod groups (PodGroup gangs, draco.dev/group,\n"
       "                                     LeaderWorkerSet, JobSet, Kueue) all-or-nothing\n"
       "                                     (default true)\n";
  u += "  --group-reserve-after D            a group that has not fit for this long reserves\n"
       "                                     capacity: other allocations wait (default " +
       secs(d.group_reserve_after) + ")\n";
  u += "  --group-reserve-max D              longest reservation; then the group waits at the\n"
       "                                     back again (default " +
       secs(d.group_reserve_max) + ")\n";
  u += "  --allocation-policy-recheck-interval SECONDS\n"
       "                                     look for the AllocationPolicy CRD again while it is\n"
       "                                     not installed (default " +
       std::to_string(d.allocation_policy_recheck_seconds) + ")\n";
  u += "  --feature-gates A=true,B=false     DRA feature gates with kube-scheduler's names; the\n"
       "                                     defaults are the API server version's (known: " +
       alloc::FeatureGateNames() + ")\n";
  u += "  -v N                               log verbosity as klog's: 0-3 info, 4-5 debug, 6 and\n"
       "                                     up trace with one line per API request (method,\n"
       "                                     URL, code, latency) (default 0)\n";
  u += "  --log-format text|json             log format (default text)\n";
  u += admission::WebhookFlagUsage();
  u += server::MetricsServingFlagUsage();
  return u;
}

}  // namespace draco::run
