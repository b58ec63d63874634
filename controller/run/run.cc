#include "controller/run/run.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <condition_variable>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <random>
#include <thread>

#include <prometheus/registry.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "controller/admission/webhook.h"
#include "controller/allocator/features.h"
#include "controller/allocator/selector.h"
#include "controller/metrics/controller_metrics.h"
#include "controller/metrics/rest_client_metrics.h"
#include "controller/metrics/workqueue_metrics.h"
#include "controller/reconcilers/api_writer.h"
#include "controller/reconcilers/cluster_cache.h"
#include "controller/reconcilers/controller.h"
#include "controller/reconcilers/informers.h"
#include "controller/reconcilers/snapshot_allocator.h"
#include "controller/reconcilers/worker.h"
#include "controller/run/server_profile.h"
#include "controller/server/http_server.h"
#include "k8sclient/config.h"
#include "k8sclient/leaderelection/leader_elector.h"
#include "k8sclient/rest_client_impl.h"
#include "k8sclient/workqueue/rate_limiting_queue.h"

namespace draco::run {
namespace {

// How long `draco run` lets workers finish their current item after SIGTERM/SIGINT before it
// cancels the API requests still in progress.
constexpr std::chrono::milliseconds kShutdownDrainGrace{2000};

using namespace std::chrono_literals;

StatusOr<bool> ParseBool(const std::string& v) {
  if (v == "true" || v == "1") return true;
  if (v == "false" || v == "0") return false;
  return InvalidArgumentError("bad boolean '" + v + "'");
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
            char buf[8];
            std::snprintf(buf, sizeof(buf), "\\u%04x", c);
            dest.append(std::string_view(buf));
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

std::string Identity() {
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  std::random_device rd;
  char suffix[16];
  std::snprintf(suffix, sizeof(suffix), "%08x", rd());
  const char* pod = std::getenv("POD_NAME");
  return std::string(pod && *pod ? pod : host) + "_" + suffix;
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
    if (arg.rfind("-", 0) != 0) return InvalidArgumentError("unexpected argument '" + arg + "'");
    std::string name = arg.substr(arg.rfind("--", 0) == 0 ? 2 : 1);
    std::optional<std::string> value;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    const bool is_bool =
        name == "leader-elect" || name == "allocate" || name == "pin-allocated-node";
    if (!value && !is_bool) {
      if (i + 1 >= argc) return InvalidArgumentError("flag --" + name + " needs a value");
      value = argv[++i];
    }
    std::string v = value.value_or("true");
    Status st;
    auto set_bool = [&](bool& out) {
      auto b = ParseBool(v);
      if (!b.ok()) return b.status().WithPrefix("--" + name);
      out = *b;
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
    } else if (name == "leader-elect-namespace") {
      f.leader_elect_namespace = v;
    } else if (name == "leader-elect-lease-name") {
      f.leader_elect_lease_name = v;
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
    } else {
      return InvalidArgumentError("unknown flag " + arg);
    }
    if (!st.ok()) return st;
  }
  if (f.leader_elect_namespace.empty()) {
    const char* ns = std::getenv("POD_NAMESPACE");
    f.leader_elect_namespace = ns && *ns ? ns : "kube-system";
  }
  return f;
}

std::string FlagUsage() {
  Flags d;
  std::string u;
  u += "usage: draco run [flags]\n\n";
  u += "Runs the DRA controller: claim lifecycle, allocation before scheduling, cleanup.\n\n";
  u += "  --kubeconfig PATH                  kubeconfig (default: in-cluster, then $KUBECONFIG,\n"
       "                                     then ~/.kube/config)\n";
  u += "  --context NAME                     kubeconfig context (default: current-context)\n";
  u += "  --leader-elect BOOL                Lease leader election (default true)\n";
  u += "  --leader-elect-namespace NS        Lease namespace (default $POD_NAMESPACE or "
       "kube-system)\n";
  u += "  --leader-elect-lease-name NAME     Lease name (default " + d.leader_elect_lease_name +
       ")\n";
  u += "  --metrics-bind-address ADDR        /metrics (default " + d.metrics_bind_address +
       "; 0 = off)\n";
  u += "  --health-probe-bind-address ADDR   /healthz, /readyz (default " +
       d.health_probe_bind_address + "; 0 = off)\n";
  u += "  --kube-api-qps N                   client QPS (default " +
       std::to_string(int(d.kube_api_qps)) + ")\n";
  u += "  --kube-api-burst N                 client burst (default " +
       std::to_string(d.kube_api_burst) + ")\n";
  u += "  --workers N                        reconcile workers (default " +
       std::to_string(d.workers) + ")\n";
  u += "  --http-threads N                   HTTP transport I/O threads (default " +
       std::to_string(d.http_threads) + ")\n";
  u += "  --allocate BOOL                    allocate claims (default true; false = lifecycle "
       "only)\n";
  u += "  --pin-allocated-node BOOL          when an allocation is node-local, release the pod\n"
       "                                     with that node as required node affinity, so\n"
       "                                     kube-scheduler checks one node (default true)\n";
  u += "  --allocation-policy-recheck-interval SECONDS\n"
       "                                     look for the AllocationPolicy CRD again while it is\n"
       "                                     not installed (default " +
       std::to_string(d.allocation_policy_recheck_seconds) + ")\n";
  u += "  --feature-gates A=true,B=false     DRA feature gates with kube-scheduler's names; the\n"
       "                                     defaults are the API server version's (known: " +
       alloc::FeatureGateNames() + ")\n";
  u += "  -v N                               log verbosity (0 info, 1 debug, 4 trace)\n";
  u += "  --log-format text|json             log format (default text)\n";
  u += admission::WebhookFlagUsage();
  return u;
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
  logger->set_level(verbosity >= 4   ? spdlog::level::trace
                    : verbosity >= 1 ? spdlog::level::debug
                                     : spdlog::level::info);
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
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGINT);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);

  if (Status st = k8s::SetTransportThreads(flags->http_threads); !st.ok()) {
    spdlog::error("--http-threads: {}", st.ToString());
    return 1;
  }
  auto config = flags->kubeconfig.empty() ? k8s::DefaultConfig(flags->context)
                                          : k8s::LoadKubeconfig(flags->kubeconfig, flags->context);
  if (!config.ok()) {
    spdlog::error("cannot load client configuration: {}", config.status().ToString());
    return 1;
  }
  // rest_client_* metrics for every request of both clients below.
  auto registry = std::make_shared<prometheus::Registry>();
  std::string api_host = config->host;
  if (auto p = api_host.find("://"); p != std::string::npos) api_host = api_host.substr(p + 3);
  auto rest_metrics = std::make_shared<metrics::RestClientMetrics>(*registry, api_host);
  config->observer = [rest_metrics](const k8s::RestConfig::RequestEvent& e) {
    rest_metrics->Observe(e.method, e.code, e.latency_seconds, e.rate_limiter_seconds);
  };
  config->qps = flags->kube_api_qps;
  config->burst = flags->kube_api_burst;
  config->user_agent = "draco/0.1";
  Clock& clock = RealClock::Get();
  auto client = k8s::NewRestClient(*config, clock);
  if (!client.ok()) {
    spdlog::error("cannot build API client: {}", client.status().ToString());
    return 1;
  }
  // Leader election gets its own client: never starved by the controller's rate limit, and a
  // request timeout below the renew deadline.
  k8s::RestConfig lease_config = *config;
  lease_config.qps = 5;
  lease_config.burst = 10;
  lease_config.timeout = 4s;
  lease_config.max_retries = 0;
  auto lease_client = k8s::NewRestClient(lease_config, clock);
  if (!lease_client.ok()) {
    spdlog::error("cannot build lease client: {}", lease_client.status().ToString());
    return 1;
  }

  metrics::ControllerMetrics metrics(*registry, {"pod", "claim"});
  metrics::WorkqueueMetricsProvider wq_metrics(*registry);
  reconcilers::ClusterCache cache;
  auto inventory =
      std::make_shared<metrics::InventoryCollector>([&cache] { return cache.Inventory(); });

  k8s::Discovery discovery(**client);
  StatusOr<ServerProfile> profile = DiscoverServer(discovery, flags->feature_gates);
  if (!profile.ok()) {
    spdlog::error("cannot use the API server: {}", profile.status().ToString());
    return 1;
  }
  spdlog::info("API server: {}", profile->Summary());
  reconcilers::Informers informers(**client, cache, clock,
                                   std::chrono::seconds(flags->allocation_policy_recheck_seconds),
                                   profile->device_taint_rules);
  std::unique_ptr<admission::Webhook> webhook;  // every replica serves it, leader or not
  if (flags->webhook.bind_address != "0") {
    auto opts = admission::ToWebhookOptions(flags->webhook, flags->leader_elect_namespace);
    auto w = opts.ok() ? admission::Webhook::Start(**client, clock, *opts)
                       : StatusOr<std::unique_ptr<admission::Webhook>>(opts.status());
    if (!w.ok()) {
      spdlog::error("{}", w.status().ToString());
      return 1;
    }
    webhook = std::move(*w);
    spdlog::info("admission webhook on {} (port {})", flags->webhook.bind_address, webhook->port());
  }
  std::atomic<bool> leading{!flags->leader_elect};
  std::vector<std::unique_ptr<server::HttpServer>> servers;
  auto start_server = [&](const std::string& addr, std::vector<server::Route> routes) {
    if (addr == "0") return true;
    auto s = server::HttpServer::Start(addr, std::move(routes));
    if (!s.ok()) {
      spdlog::error("{}", s.status().message());
      return false;
    }
    spdlog::info("serving {} (port {})", addr, (*s)->port());
    servers.push_back(std::move(*s));
    return true;
  };
  std::vector<server::Check> ready_checks = {
      {"informers-synced",
       [&] { return informers.HasSynced() ? OkStatus() : UnavailableError("caches not synced"); }}};
  if (webhook) ready_checks.push_back({"webhook", [&] { return webhook->Ready(); }});
  auto probe_routes = [&] {
    return std::vector<server::Route>{server::ProbeRoute("/healthz", {}),
                                      server::ProbeRoute("/readyz", ready_checks)};
  };
  auto metrics_route = [&] { return server::MetricsRoute({registry, inventory}); };
  bool ok;
  if (flags->metrics_bind_address == flags->health_probe_bind_address) {
    auto routes = probe_routes();
    routes.push_back(metrics_route());
    ok = start_server(flags->metrics_bind_address, std::move(routes));
  } else {
    ok = start_server(flags->metrics_bind_address, {metrics_route()}) &&
         start_server(flags->health_probe_bind_address, probe_routes());
  }
  if (!ok) return 1;

  informers.Start();
  spdlog::info("draco starting: workers={} qps={} burst={} leader-elect={}", flags->workers,
               flags->kube_api_qps, flags->kube_api_burst, flags->leader_elect);

  // Process state shared with the signal thread and the elector callbacks.
  std::mutex mu;
  std::condition_variable cv;
  bool stop = false, lost = false, started = !flags->leader_elect;

  std::unique_ptr<k8s::LeaderElector> elector;
  std::thread elector_thread;
  if (flags->leader_elect) {
    k8s::LeaderElectionConfig le;
    le.lease_namespace = flags->leader_elect_namespace;
    le.lease_name = flags->leader_elect_lease_name;
    le.identity = Identity();
    le.on_started_leading = [&] {
      metrics.SetLeader(le.lease_name, true);
      std::lock_guard<std::mutex> l(mu);
      started = true;
      cv.notify_all();
    };
    le.on_stopped_leading = [&] {
      metrics.SetLeader(flags->leader_elect_lease_name, false);
      std::lock_guard<std::mutex> l(mu);
      if (!stop) lost = true;
      cv.notify_all();
    };
    le.on_new_leader = [](const std::string& holder) {
      spdlog::info("leader is now {}", holder.empty() ? "(none)" : holder);
    };
    spdlog::info("leader election: lease {}/{} as {}", le.lease_namespace, le.lease_name,
                 le.identity);
    metrics.SetLeader(le.lease_name, false);
    auto e = k8s::LeaderElector::New(**lease_client, clock, le);
    if (!e.ok()) {
      spdlog::error("{}", e.status().message());
      return 1;
    }
    elector = std::move(*e);
    elector_thread = std::thread([&] { elector->Run(); });
  }

  std::thread signal_thread([&] {
    int sig = 0;
    sigwait(&sigs, &sig);
    spdlog::info("received signal {}, shutting down", sig);
    std::lock_guard<std::mutex> l(mu);
    stop = true;
    cv.notify_all();
  });
  signal_thread.detach();

  {
    std::unique_lock<std::mutex> l(mu);
    cv.wait(l, [&] { return stop || started || lost; });
  }
  std::unique_ptr<k8s::workqueue::RateLimitingQueue> queue;
  std::unique_ptr<reconcilers::Worker> worker;
  std::unique_ptr<reconcilers::QueueEnqueuer> enqueuer;
  std::unique_ptr<reconcilers::RestApiWriter> writer;
  std::unique_ptr<reconcilers::AsyncEventRecorder> recorder;
  std::unique_ptr<reconcilers::SnapshotAllocator> allocator;
  std::unique_ptr<reconcilers::Controller> controller;
  std::thread auditor;
  bool have_controller = false;
  {
    std::unique_lock<std::mutex> l(mu);
    have_controller = started && !stop && !lost;
  }
  if (have_controller) {
    leading = true;
    spdlog::info("leading: waiting for informer caches");
    while (!informers.WaitForSync(1s)) {
      std::lock_guard<std::mutex> l(mu);
      if (stop || lost) break;
    }
  }
  {
    std::lock_guard<std::mutex> l(mu);
    have_controller = have_controller && !stop && !lost;
  }
  if (have_controller) {
    k8s::workqueue::QueueOptions qo;
    qo.name = "draco";
    qo.metrics = &wq_metrics;
    qo.clock = &clock;
    // Per-item exponential backoff (5 ms .. 1000 s) and an overall retry budget of 50 qps.
    std::vector<std::unique_ptr<k8s::workqueue::RateLimiter>> limiters;
    limiters.push_back(std::make_unique<k8s::workqueue::ItemExponentialFailureRateLimiter>(
        k8s::workqueue::kDefaultItemBaseDelay, k8s::workqueue::kDefaultItemMaxDelay));
    limiters.push_back(std::make_unique<k8s::workqueue::BucketRateLimiter>(50, 300, clock));
    queue = std::make_unique<k8s::workqueue::RateLimitingQueue>(
        qo, std::make_unique<k8s::workqueue::MaxOfRateLimiter>(std::move(limiters)));
    enqueuer = std::make_unique<reconcilers::QueueEnqueuer>(*queue);
    writer = std::make_unique<reconcilers::RestApiWriter>(**client);
    recorder =
        std::make_unique<reconcilers::AsyncEventRecorder>(**client, clock, "draco", Identity());
    alloc::Allocator::Config ac;
    ac.selectors = alloc::NewCelSelectorCompiler();
    ac.timeout = 10s;
    ac.features = profile->features;
    allocator = std::make_unique<reconcilers::SnapshotAllocator>(cache, ac);
    reconcilers::ControllerOptions co;
    co.allocate = flags->allocate;
    co.pin_node = flags->pin_allocated_node;
    controller = std::make_unique<reconcilers::Controller>(cache, *writer, *allocator, *recorder,
                                                           *enqueuer, clock, &metrics, co);
    informers.SetEventSink(recorder.get());
    informers.SetController(controller.get());
    controller->EnqueueAll();  // full resync: repairs whatever changed while nobody led
    worker = std::make_unique<reconcilers::Worker>(
        *queue, [&](const reconcilers::Request& r) { return controller->Reconcile(r); }, clock,
        &metrics);
    worker->Run(flags->workers);
    spdlog::info("controller running with {} workers", flags->workers);
    auditor = std::thread([&] {
      std::unique_lock<std::mutex> l(mu);
      while (!stop && !lost) {
        l.unlock();
        controller->Audit();
        l.lock();
        cv.wait_for(l, 10s, [&] { return stop || lost; });
      }
    });
    std::unique_lock<std::mutex> l(mu);
    cv.wait(l, [&] { return stop || lost; });
  }
  bool was_lost;
  {
    std::lock_guard<std::mutex> l(mu);
    was_lost = lost;
  }
  if (was_lost) {
    // Another replica may already be writing: stop at once, no draining.
    spdlog::error("leadership lost; exiting");
    std::_Exit(1);
  }
  spdlog::info("stopping workers");
  // Workers finish their current item while the API server answers. A worker still busy after
  // kShutdownDrainGrace is stuck in retries (the API server is unreachable or refusing): cancel
  // every request then, so that shutdown never waits out retry backoffs (minutes with a dead API
  // server). What a cancelled write did or did not do is repaired by the next leader's resync.
  std::mutex drain_mu;
  std::condition_variable drain_cv;
  bool drained = false;
  auto cancel_requests = [&] {
    (*client)->Cancel();
    (*lease_client)->Cancel();
  };
  std::thread drain_watchdog([&] {
    std::unique_lock<std::mutex> l(drain_mu);
    if (!drain_cv.wait_for(l, kShutdownDrainGrace, [&] { return drained; })) {
      spdlog::warn(
          "still draining {} ms after the signal; cancelling API requests",
          std::chrono::duration_cast<std::chrono::milliseconds>(kShutdownDrainGrace).count());
      cancel_requests();
    }
  });
  if (queue) queue->ShutDown();
  if (worker) worker->Join();
  if (auditor.joinable()) auditor.join();
  informers.SetController(nullptr);
  informers.SetEventSink(nullptr);
  if (elector) {
    elector->Stop();  // releases the lease so a peer takes over at once
    elector_thread.join();
  }
  {
    std::lock_guard<std::mutex> l(drain_mu);
    drained = true;
  }
  drain_cv.notify_all();
  drain_watchdog.join();
  // Nothing needs the API server any more; the informers' LISTs must not retry either.
  cancel_requests();
  informers.Stop();
  spdlog::info("stopped");
  return 0;
}

}  // namespace draco::run
