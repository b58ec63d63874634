// SecureMetricsServer: /metrics over HTTPS, for authenticated and authorized callers only, as
// controller-runtime serves metrics with SecureServing and FilterProvider =
// filters.WithAuthenticationAndAuthorization.
//
// Transport. TLS 1.2+ on admission::TlsServer (draco's OpenSSL server of the webhook). Debian 12's
// civetweb (1.15, what HttpServer uses) cannot serve TLS there: it loads OpenSSL at run time by
// the development name libssl.so, which the runtime image does not have, and asks it for
// SSL_get_peer_certificate, which OpenSSL 3 no longer exports ("load_tls_dll: libssl.so: cannot
// find SSL_get_peer_certificate"), so its TLS listener never starts.
//
// Certificate. With cert_dir: cert_dir/tls.crt (leaf first, then any intermediates) and
// cert_dir/tls.key, as a kubernetes.io/tls Secret mounts them; both are read again every
// reload_interval and a changed pair is installed (rotation by cert-manager or a Secret update
// needs no restart; a pair that does not load is logged and the old one kept). Without: a
// self-signed CA and a serving certificate for "localhost" and 127.0.0.1, generated in memory at
// start (valid one year), as controller-runtime does; clients then skip verification
// (Prometheus: tlsConfig.insecureSkipVerify) or pin CertificatePem().
//
// Requests. Each route (exact path) is served only when MetricsAuth::Authorize(Authorization
// header, lower-case method, path) allows it; otherwise its 401/403/500 with a plain-text message.
// Unknown paths: 404, before any review.
//
// Lifetime. Start() binds synchronously; the destructor stops the reload thread and the server.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "controller/admission/certs.h"
#include "controller/admission/tls_server.h"
#include "controller/server/http_server.h"
#include "controller/server/metrics_auth.h"

namespace draco::server {

struct SecureMetricsOptions {
  std::string bind_address;  // host:port as for HttpServer (":8443" means 127.0.0.1:8443)
  std::string cert_dir;      // "" = a self-signed certificate generated at start
  std::chrono::seconds reload_interval{10};
  MetricsAuthOptions auth;
  int threads = 2;
};

class SecureMetricsServer {
 public:
  // `client` (for the reviews) and `clock` must outlive the server. InvalidArgument when the
  // certificate directory's pair does not load; Unavailable when the address is busy.
  static StatusOr<std::unique_ptr<SecureMetricsServer>> Start(SecureMetricsOptions opts,
                                                              std::vector<Route> routes,
                                                              k8s::RestClient& client,
                                                              Clock& clock);
  ~SecureMetricsServer();
  SecureMetricsServer(const SecureMetricsServer&) = delete;
  SecureMetricsServer& operator=(const SecureMetricsServer&) = delete;

  int port() const { return server_->port(); }
  // The certificate served now (leaf first).
  std::string CertificatePem() const { return server_->CertificatePem(); }

 private:
  SecureMetricsServer(SecureMetricsOptions opts, std::vector<Route> routes, k8s::RestClient& client,
                      Clock& clock);
  admission::HttpReply Handle(const admission::HttpRequest& req);
  // Installs the directory's pair when it differs from the one served.
  Status LoadCertDir();
  void ReloadLoop();

  SecureMetricsOptions opts_;
  std::vector<Route> routes_;
  Clock& clock_;
  MetricsAuth auth_;
  std::unique_ptr<admission::TlsServer> server_;
  admission::CertKey loaded_;  // the directory's pair last installed (reload thread only)
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // guarded by mu_
  std::thread reloader_;
};

// A serving pair from "<dir>/tls.crt" and "<dir>/tls.key"; NotFound/InvalidArgument naming the
// file that is missing or empty.
StatusOr<admission::CertKey> ReadCertDir(const std::string& dir);

}  // namespace draco::server
