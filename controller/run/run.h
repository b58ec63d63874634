// `draco run`: the controller process. Flags (kube conventions):
//   --kubeconfig PATH              kubeconfig (default: $KUBECONFIG, in-cluster, ~/.kube/config)
//   --context NAME                 kubeconfig context
//   --leader-elect[=true|false]    Lease-based leader election (default true)
//   --leader-elect-namespace NS    namespace of the Lease (default $POD_NAMESPACE or kube-system)
//   --leader-elect-lease-name N    Lease name (default draco)
//   --leader-elect-lease-duration D / --leader-elect-renew-deadline D / --leader-elect-retry-period
//   D
//                                  election timings (default 15s / 10s / 2s)
//   --metrics-bind-address ADDR    /metrics listener (default 127.0.0.1:8080; "0" disables)
//   --health-probe-bind-address A  /healthz /readyz listener (default 127.0.0.1:8081; "0" off)
//   --kube-api-qps Q / --kube-api-burst B   client rate limit (default 100 / 200)
//   --workers N                    reconcile threads (default 32)
//   --http-threads N               HTTP transport I/O threads shared by all requests (default 4)
//   --allocate[=true|false]        allocate gated pods and immediate claims (default true)
//   --pin-allocated-node[=BOOL]    add the node of node-local allocations as required node
//                                  affinity when releasing the pod (default true)
//   --feature-gates A=B,...        DRA feature gates (kube-scheduler names); defaults follow the
//                                  API server's version
//   -v N / --v N                   log verbosity as klog: 0-3 info, 4-5 debug, 6+ trace with one
//                                  line per API request (LogLevelFor)
//   --log-format text|json         log format (default text)
//   --webhook-*                    the admission webhook (controller/admission/webhook_flags.h)
//   --metrics-secure, --metrics-cert-dir   /metrics over HTTPS for callers the API server
//                                  authenticates and authorizes (controller/server/metrics_flags.h)
// Lifecycle: informers start at once (a standby replica keeps a warm cache); on becoming leader
// the controller resyncs everything and starts the workers, writing through a client fenced by
// the renew deadline (leadership.h). SIGTERM/SIGINT: with leader election, writes stop at once
// and the lease is released (the standby leads within a retry period or at once through its
// lease watch), then the workers are joined; without, workers finish their current item within a
// 2 s grace, then API requests still retrying are cancelled. Exit 0. Lost leadership: writes stop
// at the renew deadline, the controller is torn down and the replica campaigns again (no exit).
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "base/status.h"
#include "controller/admission/webhook_flags.h"
#include "controller/server/metrics_flags.h"

namespace draco::run {

struct Flags {
  // Fields are grouped by type (strings, durations, numbers, booleans) so the struct has no
  // padding holes (clang-analyzer-optin.performance.Padding).
  std::string kubeconfig;
  std::string context;
  std::string leader_elect_namespace;
  std::string leader_elect_lease_name = "draco";
  std::string metrics_bind_address = "127.0.0.1:8080";
  std::string health_probe_bind_address = "127.0.0.1:8081";
  // kube-scheduler DRA gate overrides on top of the server version's defaults.
  std::string feature_gates;
  std::string log_format = "text";
  // --claim-lifecycle auto|draco|upstream (reconcilers/claim_lifecycle.h): who creates, records,
  // releases and deletes claims; auto probes whether kube-controller-manager's resourceclaim
  // controller runs.
  std::string claim_lifecycle = "auto";
  // $POD_NAME (the downward API), read by ParseFlags; the replica's identity when set.
  std::string pod_name;
  // The admission webhook (off unless --webhook-bind-address is set).
  admission::WebhookFlags webhook;
  // --metrics-secure, --metrics-cert-dir (controller/server/metrics_flags.h).
  server::MetricsServingFlags metrics_serving;
  // Go duration strings on the command line ("15s"); lease > renew deadline > 1.2 x retry.
  std::chrono::milliseconds leader_elect_lease_duration{15000};
  std::chrono::milliseconds leader_elect_renew_deadline{10000};
  std::chrono::milliseconds leader_elect_retry_period{2000};
  // How long a gated pod waits for its devices' binding conditions after the allocation before
  // draco allocates again (kube-scheduler's DynamicResourcesArgs.bindingTimeout, default 10m).
  std::chrono::milliseconds binding_timeout{600000};
  // All-or-nothing groups (ControllerOptions::groups, group_reserve_after/max).
  std::chrono::milliseconds group_reserve_after{120000};
  std::chrono::milliseconds group_reserve_max{600000};
  // How often the auto claim lifecycle probes (LifecycleProbe's interval).
  std::chrono::milliseconds claim_lifecycle_probe_interval{30000};
  // /healthz thresholds (liveness.h LivenessOptions): an informer not synced this long after
  // start-up, a synced informer's watch down this long, a worker busy with one item this long.
  std::chrono::milliseconds healthz_initial_sync_timeout{600000};
  std::chrono::milliseconds healthz_watch_down_timeout{300000};
  std::chrono::milliseconds healthz_stuck_worker_timeout{300000};
  double kube_api_qps = 100;
  int kube_api_burst = 200;
  int workers = 32;
  int http_threads = 4;
  int verbosity = 0;
  // How often to look again for the AllocationPolicy CRD while it is not installed.
  int allocation_policy_recheck_seconds = 30;
  // $DRACO_TESTING_EXIT_AFTER_GROUP_WRITES, read by ParseFlags (ControllerOptions, e2e only).
  int testing_exit_after_group_writes = 0;
  bool leader_elect = true;
  bool allocate = true;
  bool pin_allocated_node = true;
  bool groups = true;
  // --http-transport direct|cpprestsdk: RestConfig::direct_transport.
  bool direct_transport = true;
  // --api-encoding protobuf|json: RestConfig::protobuf set to KubeProtoSchema() or not.
  bool protobuf = true;
  bool help = false;  // --help / -h: print FlagUsage() and exit 0
};

// One line per flag with its default, for --help.
std::string FlagUsage();

// Parses argv (after the subcommand). "--flag=value" and "--flag value" forms; booleans also as
// bare "--flag". Unknown flags and bad values are InvalidArgument with a one-line message.
// Also reads $POD_NAME, $POD_NAMESPACE and $DRACO_TESTING_EXIT_AFTER_GROUP_WRITES; call it at
// start-up, before threads start.
StatusOr<Flags> ParseFlags(int argc, char** argv);

// The klog convention for -v: 0-3 info (state changes, warnings, errors; the chart's default 2),
// 4-5 debug (per-object decisions, requeues), 6 and up trace, which includes one log line per API
// request from the REST client (method, URL, code, latency).
enum class LogLevel { kInfo, kDebug, kTrace };
LogLevel LogLevelFor(int verbosity);

// Configures spdlog: level from verbosity (LogLevelFor), text or JSON lines (one object per line,
// message and logger fields JSON-escaped).
Status SetupLogging(int verbosity, const std::string& format);

// Entry point for `draco run`. Returns the process exit code.
int RunMain(int argc, char** argv);

}  // namespace draco::run
