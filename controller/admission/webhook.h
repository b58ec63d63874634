// Webhook: draco's mutating admission webhook as a running service: a TlsServer answering
// POST /mutate (HandleReview) and GET /healthz, plus a thread that runs CertSync every
// `resync` (every 5 s while failing) and installs the serving certificate it returns.
//
// With certs.webhook_config_name set, a second thread watches that MutatingWebhookConfiguration
// (by name) and runs a CertSync pass at once (at most one a second) when a webhook's caBundle
// differs from draco's bundle: a GitOps sync or a re-apply of the chart, which renders no
// caBundle, is repaired in about a second instead of at the next resync.
//
// With `cert_dir` set (cert-manager issues the certificate), the sync thread reads the mounted
// files instead (LoadMountedPki, every `resync`, so a renewal is picked up) and draco writes
// nothing: no Secret, no caBundle, no watch.
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
  // Directory of a mounted kubernetes.io/tls Secret (tls.crt, tls.key, ca.crt); "" = draco issues
  // its own certificate (CertSync).
  std::string cert_dir;
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
  StatusOr<WebhookPki> SyncOnce();
  // Watches the configuration and sets kick_ when its caBundle is not ca_bundle_.
  void WatchConfigLoop();

  k8s::RestClient& client_;
  Clock& clock_;
  WebhookOptions options_;
  CertSync sync_;
  std::unique_ptr<TlsServer> server_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool kick_ = false;                      // guarded by mu_: sync now (the watch saw a change)
  std::shared_ptr<k8s::Watcher> watcher_;  // guarded by mu_: the open watch, for Stop()
  Status last_sync_ = UnavailableError("no certificate sync yet");  // guarded by mu_
  std::string ca_bundle_;                                           // guarded by mu_
  std::thread thread_;
  std::thread watch_thread_;
};

}  // namespace draco::admission
