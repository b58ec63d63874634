#include "controller/run/run.h"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <charconv>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <random>
#include <thread>

#include <prometheus/registry.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "base/version.h"
#include "controller/admission/webhook.h"
#include "controller/allocator/allocator.h"
#include "controller/allocator/features.h"
#include "controller/metrics/controller_metrics.h"
#include "controller/metrics/rest_client_metrics.h"
#include "controller/metrics/workqueue_metrics.h"
#include "controller/reconcilers/api_writer.h"
#include "controller/reconcilers/cluster_cache.h"
#include "controller/reconcilers/controller.h"
#include "controller/reconcilers/informers.h"
#include "controller/reconcilers/snapshot_allocator.h"
#include "controller/reconcilers/worker.h"
#include "controller/run/leadership.h"
#include "controller/run/liveness.h"
#include "controller/run/manager.h"
#include "controller/run/proto_schema.h"
#include "controller/run/runnables.h"
#include "controller/run/server_profile.h"
#include "controller/run/term.h"
#include "controller/server/http_server.h"
#include "k8sclient/config.h"
#include "k8sclient/leaderelection/leader_elector.h"
#include "k8sclient/rest_client_impl.h"
#include "k8sclient/workqueue/rate_limiting_queue.h"

namespace draco::run {
namespace {

using namespace std::chrono_literals;

StatusOr<bool> ParseBool(const std::string& v) {
  if (v == "true" || v == "1") return true;
  if (v == "false" || v == "0") return false;
  return InvalidArgumentError("bad boolean '" + v + "'");
}

// A Go time.Duration string: a sequence of decimal numbers with units ("15s", "1m30s", "1.5s",
// "500ms"; units ns, us, ms, s, m, h). Must be positive.
StatusOr<std::chrono::milliseconds> ParseDuration(const std::string& v) {
  static constexpr auto kUnits = std::to_array<std::pair<std::string_view, double>>(
      {{"ns", 1e-6}, {"us", 1e-3}, {"ms", 1}, {"s", 1e3}, {"m", 60e3}, {"h", 3600e3}});
  double total = 0;
  size_t i = 0;
  if (v.empty()) return InvalidArgumentError("empty duration");
  while (i < v.size()) {
    size_t start = i;
    while (i < v.size() && (std::isdigit(static_cast<unsigned char>(v[i])) || v[i] == '.')) ++i;
    if (i == start) return InvalidArgumentError("bad duration '" + v + "' (e.g. 15s, 1500ms)");
    double n = 0;
    try {
      n = std::stod(v.substr(start, i - start));
    } catch (...) {
      return InvalidArgumentError("bad duration '" + v + "'");
    }
    size_t ustart = i;
    while (i < v.size() && std::isalpha(static_cast<unsigned char>(v[i]))) ++i;
    std::string_view unit(v.data() + ustart, i - ustart);
    bool known = false;
    for (const auto& [name, ms] : kUnits) {
      if (unit == name) {
        total += n * ms;
        known = true;
      }
    }
    if (!known) return InvalidArgumentError("bad duration '" + v + "' (units ns us ms s m h)");
  }
  if (total < 1) return InvalidArgumentError("duration '" + v + "' must be at least 1ms");
  return std::chrono::milliseconds(static_cast<int64_t>(total));
}

template <typename T>
StatusOr<T> ParseNumber(const std::string& v) {
  T out{};
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || p != v.data() + v.size()) {
    return InvalidArgumentError("bad number '" + v + "'");
  }
  return out;
}

// JSON-escapes the log payload (spdlog custom flag %*).
class JsonMessageFlag : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    for (char c : std::string_view(msg.payload.data(), msg.payload.size())) {
      switch (c) {
        case '"':
          dest.append(std::string_view("\\\""));
          break;
        case '\\':
          dest.append(std::string_view("\\\\"));
          break;
        case '\n':
          dest.append(std::string_view("\\n"));
          break;
        case '\t':
          dest.append(std::string_view("\\t"));
          break;
        default:
          if (static_cast<unsigned char>(c) < 0x20) {
            std::array<char, 8> buf{};
            std::snprintf(buf.data(), buf.size(), "\\u%04x", c);
            dest.append(std::string_view(buf.data()));
          } else {
            dest.push_back(c);
          }
      }
    }
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<JsonMessageFlag>();
  }
};

// `pod_name` ($POD_NAME), else the host name; then a random suffix.
std::string Identity(const std::string& pod_name) {
  std::array<char, 256> host{};
  gethostname(host.data(), host.size() - 1);
  std::random_device rd;
  std::array<char, 16> suffix{};
  std::snprintf(suffix.data(), suffix.size(), "%08x", rd());
  return (pod_name.empty() ? std::string(host.data()) : pod_name) + "_" + suffix.data();
}

// The API clients of `draco run`: the controller's (rate limited by --kube-api-qps/burst) and
// leader election's own (never starved by the controller, a timeout below the renew deadline), both
// reporting rest_client_* metrics into `registry`.
struct Clients {
  k8s::RestConfig config;
  std::shared_ptr<prometheus::Registry> registry;
  std::string identity;
  std::unique_ptr<k8s::RestClient> client;
  std::unique_ptr<k8s::RestClient> lease;
};

StatusOr<Clients> BuildClients(const Flags& flags, Clock& clock) {
  Clients out;
  auto config = flags.kubeconfig.empty() ? k8s::DefaultConfig(flags.context)
                                         : k8s::LoadKubeconfig(flags.kubeconfig, flags.context);
  if (!config.ok()) return config.status().WithPrefix("cannot load client configuration");
  out.config = std::move(*config);
  out.registry = std::make_shared<prometheus::Registry>();
  std::string api_host = out.config.host;
  if (auto p = api_host.find("://"); p != std::string::npos) api_host = api_host.substr(p + 3);
  auto rest_metrics = std::make_shared<metrics::RestClientMetrics>(*out.registry, api_host);
  out.config.observer = [rest_metrics](const k8s::RestConfig::RequestEvent& e) {
    rest_metrics->Observe(e.method, e.code, e.latency_seconds, e.rate_limiter_seconds);
  };
  out.config.qps = flags.kube_api_qps;
  out.config.direct_transport = flags.direct_transport;
  if (flags.protobuf) out.config.protobuf = KubeProtoSchema(/*drop_managed_fields=*/true);
  out.config.burst = flags.kube_api_burst;
  // client-go's form (base/version.h) with the replica's identity (Lease holder, Event
  // reportingInstance) appended as rest.AddUserAgent does, so an API server's audit log tells
  // the replicas' requests apart: "draco/0.1.0 (linux/amd64) kubernetes/3f2a9c1/<identity>".
  out.identity = Identity(flags.pod_name);
  out.config.user_agent = UserAgent("draco") + "/" + out.identity;
  auto client = k8s::NewRestClient(out.config, clock);
  if (!client.ok()) return client.status().WithPrefix("cannot build API client");
  out.client = std::move(*client);
  k8s::RestConfig lease_config = out.config;
  lease_config.qps = 5;
  lease_config.burst = 10;
  lease_config.timeout =
      std::min<std::chrono::milliseconds>(4s, flags.leader_elect_renew_deadline / 2);
  lease_config.max_retries = 0;
  auto lease = k8s::NewRestClient(lease_config, clock);
  if (!lease.ok()) return lease.status().WithPrefix("cannot build lease client");
  out.lease = std::move(*lease);
  return out;
}

// Sets flag `name` (without dashes) to `v`; `arg` is the flag as written, for messages.
Status SetFlag(Flags& f, const std::string& name, const std::string& v, const std::string& arg) {
  Status st;
  auto set_bool = [&](bool& out) {
    auto b = ParseBool(v);
    if (!b.ok()) return b.status().WithPrefix("--" + name);
    out = *b;
    return OkStatus();
  };
  // A Go duration of at least one second.
  auto set_duration_1s = [&](std::chrono::milliseconds& out) {
    auto d = ParseDuration(v);
    if (!d.ok()) return d.status().WithPrefix("--" + name);
    if (*d < std::chrono::seconds(1)) {
      return InvalidArgumentError("--" + name + " must be at least 1s");
    }
    out = *d;
    return OkStatus();
  };
  if (name == "kubeconfig") {
    f.kubeconfig = v;
  } else if (name == "context") {
    f.context = v;
  } else if (name == "leader-elect") {
    st = set_bool(f.leader_elect);
  } else if (name == "allocate") {
    st = set_bool(f.allocate);
  } else if (name == "pin-allocated-node") {
    st = set_bool(f.pin_allocated_node);
  } else if (name == "groups") {
    st = set_bool(f.groups);
  } else if (name == "leader-elect-namespace") {
    f.leader_elect_namespace = v;
  } else if (name == "leader-elect-lease-name") {
    f.leader_elect_lease_name = v;
  } else if (name == "leader-elect-lease-duration" || name == "leader-elect-renew-deadline" ||
             name == "leader-elect-retry-period") {
    auto d = ParseDuration(v);
    if (!d.ok()) return d.status().WithPrefix("--" + name);
    (name == "leader-elect-lease-duration"   ? f.leader_elect_lease_duration
     : name == "leader-elect-renew-deadline" ? f.leader_elect_renew_deadline
                                             : f.leader_elect_retry_period) = *d;
  } else if (name == "binding-timeout") {
    st = set_duration_1s(f.binding_timeout);
  } else if (name == "claim-lifecycle") {
    auto m = reconcilers::ParseLifecycleMode(v);
    if (!m.ok()) return m.status().WithPrefix("--claim-lifecycle");
    f.claim_lifecycle = v;
  } else if (name == "claim-lifecycle-probe-interval") {
    st = set_duration_1s(f.claim_lifecycle_probe_interval);
  } else if (name == "group-reserve-after") {
    st = set_duration_1s(f.group_reserve_after);
  } else if (name == "group-reserve-max") {
    st = set_duration_1s(f.group_reserve_max);
  } else if (name == "healthz-initial-sync-timeout") {
    st = set_duration_1s(f.healthz_initial_sync_timeout);
  } else if (name == "healthz-watch-down-timeout") {
    st = set_duration_1s(f.healthz_watch_down_timeout);
  } else if (name == "healthz-stuck-worker-timeout") {
    st = set_duration_1s(f.healthz_stuck_worker_timeout);
  } else if (name == "metrics-bind-address") {
    f.metrics_bind_address = v;
  } else if (name == "health-probe-bind-address") {
    f.health_probe_bind_address = v;
  } else if (name == "kube-api-qps") {
    auto n = ParseNumber<double>(v);
    if (!n.ok() || *n <= 0) return InvalidArgumentError("--kube-api-qps must be > 0");
    f.kube_api_qps = *n;
  } else if (name == "kube-api-burst") {
    auto n = ParseNumber<int>(v);
    if (!n.ok() || *n <= 0) return InvalidArgumentError("--kube-api-burst must be > 0");
    f.kube_api_burst = *n;
  } else if (name == "workers") {
    auto n = ParseNumber<int>(v);
    if (!n.ok() || *n <= 0 || *n > 1000) {
      return InvalidArgumentError("--workers must be in 1..1000");
    }
    f.workers = *n;
  } else if (name == "http-transport") {
    if (v != "direct" && v != "cpprestsdk") {
      return InvalidArgumentError("--http-transport must be direct or cpprestsdk");
    }
    f.direct_transport = v == "direct";
  } else if (name == "api-encoding") {
    if (v != "protobuf" && v != "json") {
      return InvalidArgumentError("--api-encoding must be protobuf or json");
    }
    f.protobuf = v == "protobuf";
  } else if (name == "http-threads") {
    auto n = ParseNumber<int>(v);
    if (!n.ok() || *n <= 0 || *n > 256) {
      return InvalidArgumentError("--http-threads must be in 1..256");
    }
    f.http_threads = *n;
  } else if (name == "allocation-policy-recheck-interval") {
    auto n = ParseNumber<int>(v);
    if (!n.ok() || *n < 1 || *n > 3600) {
      return InvalidArgumentError("--allocation-policy-recheck-interval must be 1..3600 seconds");
    }
    f.allocation_policy_recheck_seconds = *n;
  } else if (name == "v") {
    auto n = ParseNumber<int>(v);
    if (!n.ok() || *n < 0) return InvalidArgumentError("-v must be a number >= 0");
    f.verbosity = *n;
  } else if (name == "feature-gates") {
    alloc::Features scratch = alloc::DefaultFeatures();
    st = alloc::ApplyFeatureGates(v, alloc::kNewestKnownMinor, scratch).WithPrefix("--" + name);
    f.feature_gates = v;
  } else if (name == "log-format") {
    if (v != "text" && v != "json") return InvalidArgumentError("--log-format: text or json");
    f.log_format = v;
  } else if (admission::IsWebhookFlag(name)) {
    st = admission::SetWebhookFlag(name, v, f.webhook);
  } else if (server::IsMetricsServingFlag(name)) {
    st = server::SetMetricsServingFlag(name, v, f.metrics_serving);
  } else {
    return InvalidArgumentError("unknown flag " + arg);
  }
  return st;
}

// Blocks SIGTERM and SIGINT in the calling thread, and so in every thread it starts later (they
// inherit the mask); RunMain's main thread takes them with sigwait. Returns the set.
sigset_t BlockShutdownSignals() {
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGINT);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
  return sigs;
}

}  // namespace

StatusOr<Flags> ParseFlags(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h" || arg == "-help") {
      f.help = true;
      continue;
    }
    if (arg.rfind('-', 0) != 0) return InvalidArgumentError("unexpected argument '" + arg + "'");
    std::string name = arg.substr(arg.rfind("--", 0) == 0 ? 2 : 1);
    std::optional<std::string> value;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    const bool is_bool = name == "leader-elect" || name == "allocate" ||
                         name == "pin-allocated-node" || name == "groups" ||
                         server::IsMetricsServingBoolFlag(name);
    if (!value && !is_bool) {
      if (i + 1 >= argc) return InvalidArgumentError("flag --" + name + " needs a value");
      value = argv[++i];
    }
    if (Status st = SetFlag(f, name, value.value_or("true"), arg); !st.ok()) return st;
  }
  if (f.leader_elect_lease_duration <= f.leader_elect_renew_deadline) {
    return InvalidArgumentError(
        "--leader-elect-lease-duration must be greater than --leader-elect-renew-deadline");
  }
  if (f.leader_elect_renew_deadline * 10 <= f.leader_elect_retry_period * 12) {
    return InvalidArgumentError(
        "--leader-elect-renew-deadline must be greater than 1.2 x --leader-elect-retry-period");
  }
  if (f.leader_elect_namespace.empty()) {
    // NOLINTNEXTLINE(concurrency-mt-unsafe): read at start-up, before threads start
    const char* ns = std::getenv("POD_NAMESPACE");
    f.leader_elect_namespace = ns && *ns ? ns : "kube-system";
  }
  // NOLINTNEXTLINE(concurrency-mt-unsafe): read at start-up, before threads start
  if (const char* pod = std::getenv("POD_NAME"); pod != nullptr) f.pod_name = pod;
  // NOLINTNEXTLINE(concurrency-mt-unsafe): read at start-up, before threads start
  if (const char* n = std::getenv("DRACO_TESTING_EXIT_AFTER_GROUP_WRITES")) {
    f.testing_exit_after_group_writes = std::atoi(n);
  }
  return f;
}

LogLevel LogLevelFor(int verbosity) {
  if (verbosity >= 6) return LogLevel::kTrace;
  if (verbosity >= 4) return LogLevel::kDebug;
  return LogLevel::kInfo;
}

Status SetupLogging(int verbosity, const std::string& format) {
  auto logger = spdlog::stderr_logger_mt("draco");
  if (format == "json") {
    auto f = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
    f->add_flag<JsonMessageFlag>('*').set_pattern(
        R"({"ts":"%Y-%m-%dT%H:%M:%S.%fZ","level":"%l","logger":"%n","msg":"%*"})");
    logger->set_formatter(std::move(f));
  } else {
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%fZ %^%L%$ %v", spdlog::pattern_time_type::utc);
  }
  switch (LogLevelFor(verbosity)) {
    case LogLevel::kInfo:
      logger->set_level(spdlog::level::info);
      break;
    case LogLevel::kDebug:
      logger->set_level(spdlog::level::debug);
      break;
    case LogLevel::kTrace:
      logger->set_level(spdlog::level::trace);
      break;
  }
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
  return OkStatus();
}

int RunMain(int argc, char** argv) {
  auto flags = ParseFlags(argc, argv);
  if (!flags.ok()) {
    std::cerr << "draco run: " << flags.status().message() << "\n"
              << "run 'draco run --help' for the flags\n";
    return 2;
  }
  if (flags->help) {
    std::cout << FlagUsage();
    return 0;
  }
  (void)SetupLogging(flags->verbosity, flags->log_format);

  // Signals are handled by one thread (sigwait); block them before any thread starts.
  const sigset_t sigs = BlockShutdownSignals();

  if (Status st = k8s::SetTransportThreads(flags->http_threads); !st.ok()) {
    spdlog::error("--http-threads: {}", st.ToString());
    return 1;
  }
  Clock& clock = RealClock::Get();
  auto clients = BuildClients(*flags, clock);
  if (!clients.ok()) {
    spdlog::error("{}", clients.status().ToString());
    return 1;
  }
  auto& registry = clients->registry;
  auto& client = clients->client;
  auto& lease_client = clients->lease;
  const std::string& identity = clients->identity;
  const k8s::RestConfig* config = &clients->config;

  metrics::ControllerMetrics metrics(*registry, {"pod", "claim", "podgroup"});
  metrics::WorkqueueMetricsProvider wq_metrics(*registry);
  reconcilers::ClusterCache cache;
  auto inventory =
      std::make_shared<metrics::InventoryCollector>([&cache] { return cache.Inventory(); });

  k8s::Discovery discovery(*client);
  StatusOr<ServerProfile> profile = DiscoverServer(discovery, flags->feature_gates);
  if (!profile.ok()) {
    spdlog::error("cannot use the API server: {}", profile.status().ToString());
    return 1;
  }
  spdlog::info("API server: {}", profile->Summary());
  if (profile->features.workload_resource_claims && !profile->pod_groups) {
    spdlog::warn(
        "DRAWorkloadResourceClaims is on but the API server does not serve "
        "scheduling.k8s.io/v1beta1 PodGroups (GenericWorkload off?): PodGroup claims are ignored");
  }
  reconcilers::Informers informers(
      *client, cache, clock, std::chrono::seconds(flags->allocation_policy_recheck_seconds),
      profile->device_taint_rules,
      profile->pod_groups && (profile->features.workload_resource_claims || flags->groups));
  WarmClients warm(*config, clock);
  alloc::Features features = profile->features;
  features.workload_resource_claims = features.workload_resource_claims && profile->pod_groups;
  reconcilers::ClaimLifecycle lifecycle(*reconcilers::ParseLifecycleMode(flags->claim_lifecycle),
                                        clock);
  metrics.SetClaimLifecycleOwner(reconcilers::LifecycleOwnerName(lifecycle.Owner()));
  spdlog::info("claim lifecycle: --claim-lifecycle={} ({})", flags->claim_lifecycle,
               lifecycle.Reason());
  Liveness liveness(clock, {flags->healthz_initial_sync_timeout, flags->healthz_watch_down_timeout,
                            flags->healthz_stuck_worker_timeout});
  TermDeps deps{*flags,    clock,      cache,    informers, metrics,
                lifecycle, wq_metrics, features, identity,  &liveness};
  RunState st;
  Manager mgr;
  // Every replica serves the webhook and the probes, leader or not.
  std::unique_ptr<admission::Webhook> webhook;
  mgr.Add(WebhookRunnable(*flags, *client, clock, webhook));
  std::vector<std::unique_ptr<server::HttpServer>> servers;
  mgr.Add(ServersRunnable(*flags, servers, informers, liveness, webhook, {registry, inventory}));
  mgr.Add(Runnable{"informers",
                   [&] {
                     informers.Start();
                     spdlog::info("draco starting: workers={} qps={} burst={} leader-elect={} ({})",
                                  flags->workers, flags->kube_api_qps, flags->kube_api_burst,
                                  flags->leader_elect, VersionLine());
                     return OkStatus();
                   },
                   nullptr,
                   [&] {
                     // Nothing needs the API server any more; LISTs must not retry either.
                     client->Cancel();
                     informers.Stop();
                   }});
  std::unique_ptr<k8s::LeaderElector> elector;
  std::thread elector_thread;
  mgr.Add(ElectionRunnable(*flags, identity, *lease_client, clock, warm, metrics, liveness, st,
                           elector, elector_thread));
  std::unique_ptr<ControllerTerm> term;
  std::thread terms_thread;
  mgr.Add(Runnable{"controller",
                   [&] {
                     terms_thread = std::thread([&] { term = RunTerms(deps, informers, st); });
                     return OkStatus();
                   },
                   [&] {
                     {
                       std::lock_guard<std::mutex> l(st.mu);
                       st.stop = true;
                       st.cv.notify_all();
                     }
                     terms_thread.join();  // RunTerms returns the running term at once
                     BeginShutdown(term.get(), flags->leader_elect, st);
                   },
                   [&] { FinishShutdown(term.get(), *client, st); }});
  std::unique_ptr<server::SecureMetricsServer> secure_metrics;
  mgr.Add(SecureMetricsRunnable(*flags, *client, clock, {registry, inventory}, secure_metrics));
  if (Status s = mgr.Start(); !s.ok()) {
    spdlog::error("{}", s.ToString());
    return 1;
  }
  int sig = 0;
  sigwait(&sigs, &sig);
  spdlog::info("received signal {}, shutting down", sig);
  mgr.Stop();
  spdlog::info("stopped");
  return 0;
}

}  // namespace draco::run
