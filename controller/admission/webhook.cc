#include "controller/admission/webhook.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "controller/admission/review.h"

namespace draco::admission {

Webhook::Webhook(k8s::RestClient& client, Clock& clock, WebhookOptions options)
    : client_(client),
      clock_(clock),
      options_(std::move(options)),
      sync_(client, clock, options_.certs) {}

StatusOr<std::unique_ptr<Webhook>> Webhook::Start(k8s::RestClient& client, Clock& clock,
                                                  WebhookOptions options) {
  if (options.certs.hosts.empty()) {
    return InvalidArgumentError("webhook: no certificate hosts (--webhook-cert-hosts)");
  }
  std::unique_ptr<Webhook> w(new Webhook(client, clock, std::move(options)));
  Webhook* self = w.get();
  auto server = TlsServer::Start(
      w->options_.bind_address,
      [](std::string_view method, std::string_view path, std::string_view body) {
        if (path == "/healthz") return HttpReply{200, "text/plain", "ok"};
        if (path != "/mutate") return HttpReply{404, "text/plain", "not found\n"};
        if (method != "POST") return HttpReply{405, "text/plain", "POST an AdmissionReview\n"};
        ReviewResult r = HandleReview(body);
        if (r.http_code != 200) spdlog::warn("webhook: refused a request: {}", r.body);
        if (r.gated) spdlog::debug("webhook: gated a new pod");
        return HttpReply{r.http_code, r.http_code == 200 ? "application/json" : "text/plain",
                         std::move(r.body)};
      },
      w->options_.threads);
  if (!server.ok()) return server.status().WithPrefix("webhook");
  w->server_ = std::move(*server);
  w->thread_ = std::thread([self] { self->SyncLoop(); });
  if (w->options_.cert_dir.empty() && !w->options_.certs.webhook_config_name.empty()) {
    w->watch_thread_ = std::thread([self] { self->WatchConfigLoop(); });
  }
  return w;
}

Webhook::~Webhook() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
    if (watcher_) watcher_->Stop();
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (watch_thread_.joinable()) watch_thread_.join();
  server_.reset();
}

StatusOr<WebhookPki> Webhook::SyncOnce() {
  if (options_.cert_dir.empty()) return sync_.Sync();
  auto pki = LoadMountedPki(options_.cert_dir);
  if (!pki.ok()) return pki.status().WithPrefix("webhook certificate from " + options_.cert_dir);
  return pki;
}

void Webhook::SyncLoop() {
  std::string installed;
  std::unique_lock<std::mutex> l(mu_);
  while (!stop_) {
    kick_ = false;
    l.unlock();
    auto pki = SyncOnce();
    Status st = pki.ok() ? OkStatus() : pki.status();
    if (pki.ok() && pki->serving.cert_pem != installed) {
      st = server_->SetCertificate(pki->serving);
      if (st.ok()) installed = pki->serving.cert_pem;
    }
    if (!st.ok()) spdlog::warn("webhook: certificate sync failed: {}", st.ToString());
    l.lock();
    last_sync_ = st;
    if (pki.ok()) ca_bundle_ = pki->ca_bundle;
    // At most one pass a second, however often the watch kicks (another writer fighting over
    // the caBundle must not turn this into a busy loop).
    auto start = clock_.Now();
    clock_.WaitUntil(cv_, l, start + std::chrono::seconds(1), [&] { return stop_; });
    auto wait =
        st.ok() ? Clock::Duration(options_.resync) : Clock::Duration(std::chrono::seconds(5));
    clock_.WaitUntil(cv_, l, start + wait, [&] { return stop_ || kick_; });
  }
}

void Webhook::WatchConfigLoop() {
  const std::string& name = options_.certs.webhook_config_name;
  k8s::ListOptions opts;
  opts.field_selector = "metadata.name=" + name;  // authorized by the Role's resourceNames
  opts.timeout_seconds = 300;
  // A refused watch (e.g. RBAC without it) is retried 5 s, 10 s, ... up to 5 minutes apart.
  std::chrono::seconds backoff(5);
  std::unique_lock<std::mutex> l(mu_);
  while (!stop_) {
    l.unlock();
    auto w = client_.Watch(kMutatingWebhookConfigurations, "", opts);
    l.lock();
    if (!w.ok()) {
      spdlog::warn(
          "webhook: watching MutatingWebhookConfiguration {}: {} (the caBundle is still "
          "checked every {}s; next try in {}s)",
          name, w.status().ToString(), options_.resync.count(), backoff.count());
      clock_.WaitUntil(cv_, l, clock_.Now() + backoff, [&] { return stop_; });
      backoff = std::min<std::chrono::seconds>(backoff * 2, std::chrono::minutes(5));
      continue;
    }
    backoff = std::chrono::seconds(5);
    watcher_ = std::move(*w);
    if (stop_) break;
    std::shared_ptr<k8s::Watcher> watcher = watcher_;
    l.unlock();
    for (;;) {
      auto ev = watcher->Next();
      if (!ev.ok() || !ev->has_value()) break;
      const k8s::WatchEvent& e = **ev;
      if (e.type != k8s::WatchEvent::Type::kAdded && e.type != k8s::WatchEvent::Type::kModified) {
        continue;
      }
      std::lock_guard<std::mutex> g(mu_);
      if (ca_bundle_.empty() || CaBundleCurrent(e.object->json(), ca_bundle_)) continue;
      spdlog::info(
          "webhook: the caBundle of MutatingWebhookConfiguration {} is not draco's "
          "(blanked by a re-apply of the chart?); restoring it",
          name);
      kick_ = true;
      cv_.notify_all();
    }
    l.lock();
    watcher_.reset();
    // A watch the server ends at once (e.g. forbidden mid-stream) must not spin.
    clock_.WaitUntil(cv_, l, clock_.Now() + std::chrono::seconds(1), [&] { return stop_; });
  }
  watcher_.reset();
}

Status Webhook::Ready() const {
  std::string bundle;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (!last_sync_.ok()) return last_sync_;
    bundle = ca_bundle_;
  }
  if (!server_->HasCertificate()) return UnavailableError("no serving certificate installed");
  std::string host = server_->host();
  if (host == "0.0.0.0") host = "127.0.0.1";
  if (host == "::") host = "::1";
  auto reply = TlsRequest(host, server_->port(), bundle, options_.certs.hosts.front(), "GET",
                          "/healthz", "", 2000);
  if (!reply.ok()) return reply.status().WithPrefix("webhook self-check");
  if (reply->code != 200) {
    return UnavailableError("webhook self-check: HTTP " + std::to_string(reply->code));
  }
  return OkStatus();
}

}  // namespace draco::admission
