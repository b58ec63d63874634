// Webhook: draco's mutating admission webhook as a running service: a TlsServer answering
// POST /mutate (HandleReview) and GET /healthz, plus a thread that runs CertSync every
// `resync` (every 5 s while failing) and installs the serving certificate it returns.
//
// Every replica runs one, leader or not: the API server may call any of them through the Service.
//
// Thread-safety: Ready() may be called from any thread. The destructor stops the sync thread and
// the server.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "base/clock.h"
#include "controller/admission/cert_sync.h"
#include "controller/admission/tls_server.h"
#include "k8sclient/rest_client.h"

namespace draco::admission {

struct WebhookOptions {
  std::string bind_address;  // e.g. "10.0.0.7:9443" (the pod IP) or "127.0.0.1:9443"
  CertSyncOptions certs;
  std::chrono::seconds resync{60};
  int threads = 4;
};

class Webhook {
 public:
  // Binds the port and starts the sync thread (the first Sync runs at once).
  static StatusOr<std::unique_ptr<Webhook>> Start(k8s::RestClient& client, Clock& clock,
                                                  WebhookOptions options);
  ~Webhook();
  Webhook(const Webhook&) = delete;
  Webhook& operator=(const Webhook&) = delete;

  // OK when the last CertSync pass succeeded, a certificate is installed, and a TLS request to the
  // webhook's own port, verified against the CA bundle as the API server verifies it, answers
  // /healthz. For /readyz.
  Status Ready() const;
  int port() const { return server_->port(); }

 private:
  Webhook(k8s::RestClient& client, Clock& clock, WebhookOptions options);
  void SyncLoop();

  Clock& clock_;
  WebhookOptions options_;
  CertSync sync_;
  std::unique_ptr<TlsServer> server_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  Status last_sync_ = UnavailableError("no certificate sync yet");  // guarded by mu_
  std::string ca_bundle_;                                           // guarded by mu_
  std::thread thread_;
};

}  // namespace draco::admission
