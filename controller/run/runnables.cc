// See runnables.h.
#include "controller/run/runnables.h"

#include <utility>

#include <spdlog/spdlog.h>

namespace draco::run {

Runnable WebhookRunnable(const Flags& flags, k8s::RestClient& client, Clock& clock,
                         std::unique_ptr<admission::Webhook>& webhook) {
  return Runnable{"admission webhook",
                  [&flags, &client, &clock, &webhook]() -> Status {
                    if (flags.webhook.bind_address == "0") return OkStatus();
                    auto opts =
                        admission::ToWebhookOptions(flags.webhook, flags.leader_elect_namespace);
                    if (!opts.ok()) return opts.status();
                    auto w = admission::Webhook::Start(client, clock, *opts);
                    if (!w.ok()) return w.status();
                    webhook = std::move(*w);
                    spdlog::info("admission webhook on {} (port {})", flags.webhook.bind_address,
                                 webhook->port());
                    return OkStatus();
                  },
                  nullptr, [&webhook] { webhook.reset(); }};
}

Runnable ServersRunnable(const Flags& flags,
                         std::vector<std::unique_ptr<server::HttpServer>>& servers,
                         reconcilers::Informers& informers, Liveness& liveness,
                         const std::unique_ptr<admission::Webhook>& webhook,
                         std::vector<std::shared_ptr<prometheus::Collectable>> collectables) {
  auto start = [&flags, &servers, &informers, &liveness, &webhook,
                collectables = std::move(collectables)]() -> Status {
    auto serve = [&](const std::string& addr, std::vector<server::Route> routes) -> Status {
      if (addr == "0") return OkStatus();
      auto s = server::HttpServer::Start(addr, std::move(routes));
      if (!s.ok()) return s.status();
      spdlog::info("serving {} (port {})", addr, (*s)->port());
      servers.push_back(std::move(*s));
      return OkStatus();
    };
    std::vector<server::Check> ready = {{"informers-synced", [&informers] {
                                           return informers.HasSynced()
                                                      ? OkStatus()
                                                      : UnavailableError("caches not synced");
                                         }}};
    if (webhook) ready.push_back({"webhook", [&webhook] { return webhook->Ready(); }});
    std::vector<server::Route> probes = {server::ProbeRoute("/healthz", liveness.Checks(informers)),
                                         server::ProbeRoute("/readyz", ready)};
    if (flags.metrics_bind_address == flags.health_probe_bind_address) {
      probes.push_back(server::MetricsRoute(collectables));
      return serve(flags.metrics_bind_address, std::move(probes));
    }
    // With --metrics-secure, SecureMetricsRunnable serves /metrics.
    const std::string plain = flags.metrics_serving.secure ? "0" : flags.metrics_bind_address;
    if (Status st = serve(plain, {server::MetricsRoute(collectables)}); !st.ok()) {
      return st;
    }
    return serve(flags.health_probe_bind_address, std::move(probes));
  };
  return Runnable{"http servers", start, nullptr, [&servers] { servers.clear(); }};
}

Runnable ElectionRunnable(const Flags& flags, const std::string& identity,
                          k8s::RestClient& lease_client, Clock& clock, WarmClients& warm,
                          metrics::ControllerMetrics& metrics, Liveness& liveness, RunState& st,
                          std::unique_ptr<k8s::LeaderElector>& elector, std::thread& thread) {
  auto start = [&flags, &identity, &lease_client, &clock, &warm, &metrics, &liveness, &st, &elector,
                &thread]() -> Status {
    if (flags.leader_elect) {
      elector = StartElector(flags, identity, lease_client, clock, warm, metrics, st);
      if (!elector) return InvalidArgumentError("invalid leader election configuration");
      liveness.SetElector(elector.get(), flags.leader_elect_lease_duration,
                          flags.leader_elect_renew_deadline);
      thread = std::thread([&elector, &st] { ElectorLoop(*elector, st); });
      return OkStatus();
    }
    auto c = warm.Take();
    if (!c.ok()) return c.status().WithPrefix("cannot build API client");
    std::lock_guard<std::mutex> l(st.mu);
    st.fence = std::make_shared<k8s::FencedClient>(*c, clock, [] {
      return Clock::TimePoint::max();  // no election: writes are never fenced
    });
    st.leading = true;
    st.cv.notify_all();
    return OkStatus();
  };
  // The controller's begin_stop (added after this runnable, so it runs first) has shut the write
  // fence; releasing the Lease now lets the next leader start while the workers drain.
  auto begin_stop = [&elector, &liveness] {
    liveness.SetElector(nullptr, {}, {});  // it stops campaigning now
    if (elector) elector->Stop();
  };
  auto wait = [&thread, &st] {
    {
      std::lock_guard<std::mutex> l(st.mu);
      st.stop = true;
      st.cv.notify_all();
    }
    if (thread.joinable()) thread.join();
  };
  return Runnable{"leader election", start, begin_stop, wait};
}

Runnable SecureMetricsRunnable(const Flags& flags, k8s::RestClient& client, Clock& clock,
                               std::vector<std::shared_ptr<prometheus::Collectable>> collectables,
                               std::unique_ptr<server::SecureMetricsServer>& secure) {
  auto start = [&flags, &client, &clock, &secure,
                collectables = std::move(collectables)]() -> Status {
    const auto& f = flags.metrics_serving;
    if (Status st = server::ValidateMetricsServing(f, flags.metrics_bind_address,
                                                   flags.health_probe_bind_address);
        !st.ok()) {
      return st;
    }
    if (!f.secure || flags.metrics_bind_address == "0") return OkStatus();
    server::SecureMetricsOptions opts;
    opts.bind_address = flags.metrics_bind_address;
    opts.cert_dir = f.cert_dir;
    auto s = server::SecureMetricsServer::Start(opts, {server::MetricsRoute(collectables)}, client,
                                                clock);
    if (!s.ok()) return s.status();
    secure = std::move(*s);
    spdlog::info(
        "serving /metrics on {} over HTTPS (port {}, certificate {}), for callers allowed "
        "get on /metrics",
        flags.metrics_bind_address, secure->port(),
        f.cert_dir.empty() ? "self-signed" : "from " + f.cert_dir);
    return OkStatus();
  };
  return Runnable{"secure metrics", start, nullptr, [&secure] { secure.reset(); }};
}

}  // namespace draco::run
