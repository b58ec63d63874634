#include "controller/server/secure_metrics.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <utility>

#include <spdlog/spdlog.h>

namespace draco::server {
namespace {

StatusOr<std::string> ReadNonEmpty(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError("cannot read " + path);
  std::ostringstream out;
  out << in.rdbuf();
  if (out.str().empty()) return InvalidArgumentError(path + " is empty");
  return out.str();
}

constexpr std::chrono::hours kSelfSignedValidity(24 * 365);

}  // namespace

StatusOr<admission::CertKey> ReadCertDir(const std::string& dir) {
  auto cert = ReadNonEmpty(dir + "/tls.crt");
  if (!cert.ok()) return cert.status();
  auto key = ReadNonEmpty(dir + "/tls.key");
  if (!key.ok()) return key.status();
  return admission::CertKey{std::move(*cert), std::move(*key)};
}

SecureMetricsServer::SecureMetricsServer(SecureMetricsOptions opts, std::vector<Route> routes,
                                         k8s::RestClient& client, Clock& clock)
    : opts_(std::move(opts)),
      routes_(std::move(routes)),
      clock_(clock),
      auth_(client, clock, opts_.auth) {}

StatusOr<std::unique_ptr<SecureMetricsServer>> SecureMetricsServer::Start(SecureMetricsOptions opts,
                                                                          std::vector<Route> routes,
                                                                          k8s::RestClient& client,
                                                                          Clock& clock) {
  auto addr = NormalizeBindAddress(opts.bind_address);
  if (!addr.ok()) return addr.status();
  std::unique_ptr<SecureMetricsServer> s(
      new SecureMetricsServer(std::move(opts), std::move(routes), client, clock));
  auto server = admission::TlsServer::StartWithHeaders(
      *addr, [p = s.get()](const admission::HttpRequest& r) { return p->Handle(r); },
      s->opts_.threads);
  if (!server.ok()) return server.status();
  s->server_ = std::move(*server);
  if (!s->opts_.cert_dir.empty()) {
    if (Status st = s->LoadCertDir(); !st.ok()) {
      return st.WithPrefix("--metrics-cert-dir " + s->opts_.cert_dir);
    }
    s->reloader_ = std::thread([p = s.get()] { p->ReloadLoop(); });
    return s;
  }
  // The peer checks validity against its own wall clock, never a test's fake one.
  const auto now = std::chrono::system_clock::now();
  auto ca = admission::GenerateCa("draco-metrics-ca", kSelfSignedValidity, now);
  if (!ca.ok()) return ca.status().WithPrefix("self-signed metrics CA");
  auto leaf =
      admission::IssueServingCert(*ca, {"localhost", "127.0.0.1"}, kSelfSignedValidity, now);
  if (!leaf.ok()) return leaf.status().WithPrefix("self-signed metrics certificate");
  leaf->cert_pem += ca->cert_pem;  // the chain, so a client can pin the CA it is served
  if (Status st = s->server_->SetCertificate(*leaf); !st.ok()) return st;
  return s;
}

SecureMetricsServer::~SecureMetricsServer() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (reloader_.joinable()) reloader_.join();
  server_.reset();  // joins the connection threads, which call Handle
}

Status SecureMetricsServer::LoadCertDir() {
  auto pair = ReadCertDir(opts_.cert_dir);
  if (!pair.ok()) return pair.status();
  if (pair->cert_pem == loaded_.cert_pem && pair->key_pem == loaded_.key_pem) return OkStatus();
  if (Status st = server_->SetCertificate(*pair); !st.ok()) return st;
  if (!loaded_.cert_pem.empty()) spdlog::info("metrics: new certificate from {}", opts_.cert_dir);
  loaded_ = std::move(*pair);
  return OkStatus();
}

void SecureMetricsServer::ReloadLoop() {
  std::unique_lock<std::mutex> l(mu_);
  while (!clock_.WaitUntil(cv_, l, clock_.Now() + opts_.reload_interval, [&] { return stop_; })) {
    l.unlock();
    if (Status st = LoadCertDir(); !st.ok()) {
      spdlog::error("metrics: keeping the served certificate: {}", st.ToString());
    }
    l.lock();
  }
}

admission::HttpReply SecureMetricsServer::Handle(const admission::HttpRequest& req) {
  auto route = std::find_if(routes_.begin(), routes_.end(),
                            [&](const Route& r) { return r.path == req.path; });
  if (route == routes_.end()) return {404, "text/plain; charset=utf-8", "not found\n"};
  std::string verb(req.method);
  std::transform(verb.begin(), verb.end(), verb.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  AuthDecision d = auth_.Authorize(req.Header("Authorization"), verb, req.path);
  if (d.code != 200) return {d.code, "text/plain; charset=utf-8", d.message + "\n"};
  Response r = route->handler();
  return {r.code, std::move(r.content_type), std::move(r.body)};
}

}  // namespace draco::server
