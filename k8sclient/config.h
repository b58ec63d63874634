// RestConfig: how to reach and authenticate to one API server, and where it comes from.
//
// A RestConfig is a plain value (thread-compatible). It is produced by LoadKubeconfig() (the
// kubeconfig format: clusters, users, contexts, current-context) or InClusterConfig() (a pod's
// service account), and consumed by NewRestClient(). All certificate material is held as PEM text
// so that file-based and inline ("-data") variants look the same downstream. TLS always verifies
// the server against `ca_pem` (or the system roots when it is empty) unless the kubeconfig
// explicitly sets insecure-skip-tls-verify, which logs a warning.
//
// Loading never throws; malformed input is an InvalidArgument/NotFound Status naming the field.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace draco::k8s {

class ProtoSchema;  // proto_json.h

// users[].user.exec: a client.authentication.k8s.io/v1 credential plugin.
struct ExecConfig {
  std::string command;
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;
  std::string api_version = "client.authentication.k8s.io/v1";
  // Pass the cluster (server, CA) to the plugin in KUBERNETES_EXEC_INFO.
  bool provide_cluster_info = false;
  std::string interactive_mode = "IfAvailable";
};

// Impersonate-* headers (users[].user.as, as-uid, as-groups, as-user-extra).
struct ImpersonationConfig {
  std::string user;
  std::string uid;
  std::vector<std::string> groups;
  std::map<std::string, std::vector<std::string>> extra;
};

struct RestConfig {
  // Base URL, e.g. "https://127.0.0.1:6443". No trailing slash.
  std::string host;
  // Namespace of the selected context ("" when unset); informational for callers.
  std::string namespace_name;

  // PEM bundle of CAs trusted for the server. Empty: the system default roots.
  std::string ca_pem;
  // Client certificate (chain) and key, PEM. Both or neither.
  std::string client_cert_pem;
  std::string client_key_pem;
  bool insecure_skip_tls_verify = false;

  // Bearer token, used as is.
  std::string bearer_token;
  // File holding a bearer token; re-read periodically and after a 401 (projected tokens rotate).
  // Takes precedence over bearer_token when both are set (client-go does the same).
  std::string bearer_token_file;
  std::optional<ExecConfig> exec;
  // HTTP basic auth (legacy); only when no token is configured.
  std::string username;
  std::string password;

  ImpersonationConfig impersonate;

  // Client-side rate limit for all requests of one client (client-go defaults 5/10).
  double qps = 5.0;
  int burst = 10;
  // Per-request timeout for non-watch requests (inactivity timeout of the connection); 0 = none.
  std::chrono::milliseconds timeout = std::chrono::seconds(30);
  std::string user_agent = "draco-k8sclient/0.1";
  // Requests other than LISTs and watches go over the direct transport (http_transport.h: the
  // calling thread writes and reads a pooled keep-alive connection); false = all over cpprestsdk.
  bool direct_transport = true;
  // Reads (GET, LIST, watch) and the answers to writes of the group/versions this schema serves
  // come in protobuf, transcoded to JSON text (proto_json.h); null: JSON only. Request bodies
  // are JSON either way.
  std::shared_ptr<const ProtoSchema> protobuf;
  // Transient failures (429/5xx with Retry-After, connection errors on reads) are retried up to
  // this many times.
  int max_retries = 10;
  // Upper bound on one retry wait (the server's Retry-After is honoured up to this).
  std::chrono::milliseconds max_retry_wait = std::chrono::seconds(10);

  // Called once per HTTP attempt (retries count separately; a watch counts its opening request)
  // on the calling thread, after the response or transport failure. For metrics: must be
  // thread-safe, cheap and must not call back into the client. Unset = no observation.
  struct RequestEvent {
    std::string_view method;          // "GET", "POST", "PUT", "PATCH", "DELETE"
    int code = 0;                     // HTTP status; 0 when no response arrived (transport error)
    double latency_seconds = 0;       // request sent -> response headers and body read
    double rate_limiter_seconds = 0;  // time spent waiting for the client-side rate limiter
    bool protobuf = false;            // the response was Kubernetes protobuf (see `protobuf`)
  };
  std::function<void(const RequestEvent&)> observer;
};

// Loads `path` and selects `context` (the kubeconfig's current-context when empty). Relative file
// references resolve against the kubeconfig's directory.
StatusOr<RestConfig> LoadKubeconfig(const std::string& path, const std::string& context = "");
// Same, from YAML text; relative paths resolve against `base_dir`.
StatusOr<RestConfig> ParseKubeconfig(const std::string& yaml, const std::string& context,
                                     const std::string& base_dir);

// Environment and filesystem a pod sees; injectable for tests.
struct InClusterEnv {
  std::string service_host;  // KUBERNETES_SERVICE_HOST
  std::string service_port;  // KUBERNETES_SERVICE_PORT
  std::string sa_dir = "/var/run/secrets/kubernetes.io/serviceaccount";
};
// Reads KUBERNETES_SERVICE_HOST/PORT from the process environment.
InClusterEnv InClusterEnvFromProcess();
// The service-account config: host from env, CA from sa_dir/ca.crt, bearer_token_file
// sa_dir/token (re-read as it rotates), namespace from sa_dir/namespace.
StatusOr<RestConfig> InClusterConfig(const InClusterEnv& env = InClusterEnvFromProcess());

// Where a client's configuration comes from when no kubeconfig is given (a --kubeconfig flag wins
// over all of them), in the order DefaultConfig tries them: controller-runtime's order. For help
// texts; config_test checks DefaultConfigFrom against it.
inline constexpr std::string_view kDefaultConfigOrder =
    "$KUBECONFIG, then in-cluster, then ~/.kube/config";

// What DefaultConfigFrom looks at (DefaultConfig reads it from the process).
struct ConfigSources {
  std::string kubeconfig_env;  // $KUBECONFIG (a ':'-separated list; its first file is used)
  InClusterEnv in_cluster;     // used when in_cluster.service_host is set
  std::string home;            // $HOME, for ~/.kube/config
};
// kDefaultConfigOrder: $KUBECONFIG (first entry) when set, else in-cluster when
// KUBERNETES_SERVICE_HOST is set, else ~/.kube/config.
StatusOr<RestConfig> DefaultConfigFrom(const ConfigSources& sources,
                                       const std::string& context = "");
// DefaultConfigFrom with the process's $KUBECONFIG, in-cluster environment and $HOME.
StatusOr<RestConfig> DefaultConfig(const std::string& context = "");

// Helpers shared with the client (exposed for tests).
StatusOr<std::string> ReadFileToString(const std::string& path);
StatusOr<std::string> Base64Decode(std::string_view in);

}  // namespace draco::k8s
