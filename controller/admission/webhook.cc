#include "controller/admission/webhook.h"

#include <spdlog/spdlog.h>

#include "controller/admission/review.h"

namespace draco::admission {

Webhook::Webhook(k8s::RestClient& client, Clock& clock, WebhookOptions options)
    : clock_(clock), options_(std::move(options)), sync_(client, clock, options_.certs) {}

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
  return w;
}

Webhook::~Webhook() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  server_.reset();
}

void Webhook::SyncLoop() {
  std::string installed;
  std::unique_lock<std::mutex> l(mu_);
  while (!stop_) {
    l.unlock();
    auto pki = sync_.Sync();
    Status st = pki.ok() ? OkStatus() : pki.status();
    if (pki.ok() && pki->serving.cert_pem != installed) {
      st = server_->SetCertificate(pki->serving);
      if (st.ok()) installed = pki->serving.cert_pem;
    }
    if (!st.ok()) spdlog::warn("webhook: certificate sync failed: {}", st.ToString());
    l.lock();
    last_sync_ = st;
    if (pki.ok()) ca_bundle_ = pki->ca_bundle;
    auto wait =
        st.ok() ? Clock::Duration(options_.resync) : Clock::Duration(std::chrono::seconds(5));
    clock_.WaitUntil(cv_, l, clock_.Now() + wait, [&] { return stop_; });
  }
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
