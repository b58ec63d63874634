// `draco run`: the controller process. Flags (kube conventions):
//   --kubeconfig PATH              kubeconfig (default: $KUBECONFIG, in-cluster, ~/.kube/config)
//   --context NAME                 kubeconfig context
//   --leader-elect[=true|false]    Lease-based leader election (default true)
//   --leader-elect-namespace NS    namespace of the Lease (default $POD_NAMESPACE or kube-system)
//   --leader-elect-lease-name N    Lease name (default draco)
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
//   -v N / --v N                   log verbosity (0 info, 1-3 debug, 4+ trace)
//   --log-format text|json         log format (default text)
//   --webhook-*                    the admission webhook (controller/admission/webhook_flags.h)
// Lifecycle: informers start at once (a standby replica keeps a warm cache); on becoming leader
// the controller resyncs everything and starts the workers. SIGTERM/SIGINT: stop the workers
// after their current item (within a 2 s grace; then API requests still retrying are cancelled),
// release the lease, exit 0. Lost leadership: exit 1 at once (the
// kube-controller-manager convention; the restarted process rejoins the election).
#pragma once

#include <optional>
#include <string>

#include "controller/admission/webhook_flags.h"
#include "k8sclient/base/status.h"

namespace draco::run {

struct Flags {
  std::string kubeconfig;
  std::string context;
  bool leader_elect = true;
  std::string leader_elect_namespace;
  std::string leader_elect_lease_name = "draco";
  std::string metrics_bind_address = "127.0.0.1:8080";
  std::string health_probe_bind_address = "127.0.0.1:8081";
  double kube_api_qps = 100;
  int kube_api_burst = 200;
  int workers = 32;
  int http_threads = 4;
  bool allocate = true;
  bool pin_allocated_node = true;
  // kube-scheduler DRA gate overrides on top of the server version's defaults.
  std::string feature_gates;
  int verbosity = 0;
  std::string log_format = "text";
  // How often to look again for the AllocationPolicy CRD while it is not installed.
  int allocation_policy_recheck_seconds = 30;
  // The admission webhook (off unless --webhook-bind-address is set).
  admission::WebhookFlags webhook;
  bool help = false;  // --help / -h: print FlagUsage() and exit 0
};

// One line per flag with its default, for --help.
std::string FlagUsage();

// Parses argv (after the subcommand). "--flag=value" and "--flag value" forms; booleans also as
// bare "--flag". Unknown flags and bad values are InvalidArgument with a one-line message.
StatusOr<Flags> ParseFlags(int argc, char** argv);

// Configures spdlog: level from verbosity, text or JSON lines (one object per line, message and
// logger fields JSON-escaped).
Status SetupLogging(int verbosity, const std::string& format);

// Entry point for `draco run`. Returns the process exit code.
int RunMain(int argc, char** argv);

}  // namespace draco::run
