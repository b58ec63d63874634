// CertSync: keeps the webhook's CA and serving certificate in one Secret, shared by every draco
// replica, and the CA bundle of draco's MutatingWebhookConfiguration equal to the Secret's.
//
// Secret (type kubernetes.io/tls): ca.crt = the CA bundle (current CA first, then earlier CAs that
// have not expired), ca.key = the current CA's key, tls.crt/tls.key = the serving pair, signed by
// the current CA, for options.hosts.
//
// One Sync() pass, run by every replica on a timer:
//   1. Read the Secret; create it (new CA and serving pair) when missing. Two replicas creating at
//      once: one wins, the other reads the winner's.
//   2. When the current CA is unusable or in the last third of its lifetime, generate a new CA and
//      put it first in the bundle (the old CA stays until it expires); write the Secret.
//   3. Make every webhook's clientConfig.caBundle in the MutatingWebhookConfiguration equal the
//      bundle (a JSON patch guarded by the configuration's resourceVersion).
//   4. Only then, when the serving pair is missing, due (last third of its lifetime), not signed by
//      the current CA or lacks a host, issue a new one and write the Secret. Because the API server
//      already trusts the new CA (step 3), no request fails during a rotation.
// Every write is optimistic (resourceVersion); a Conflict means another replica wrote first and
// the pass returns the error, the next pass reads its result. All replicas must be given the same
// hosts.
//
// Thread-compatible: one Sync() at a time per object.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "base/clock.h"
#include "controller/admission/certs.h"
#include "k8sclient/rest_client.h"

namespace draco::admission {

inline const k8s::GroupVersionResource kSecrets{"", "v1", "secrets"};
inline const k8s::GroupVersionResource kMutatingWebhookConfigurations{
    "admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations"};

struct CertSyncOptions {
  std::string secret_namespace;
  std::string secret_name;
  // The MutatingWebhookConfiguration whose caBundle is kept current; "" = none.
  std::string webhook_config_name;
  // Serving certificate SANs (DNS names or IPs); hosts[0] is also its common name. Required.
  std::vector<std::string> hosts;
  // Lifetime of a new CA and of a serving certificate (capped by the CA's expiry).
  std::chrono::seconds validity = std::chrono::hours(24 * 365);
};

struct WebhookPki {
  CertKey serving;
  std::string ca_bundle;  // PEM, every CA the API server is told to trust
};

class CertSync {
 public:
  CertSync(k8s::RestClient& client, Clock& clock, CertSyncOptions options);

  // One pass as described above. Returns what the server must present and the bundle.
  StatusOr<WebhookPki> Sync();

  const CertSyncOptions& options() const { return options_; }

 private:
  Status EnsureCaBundle(const std::string& bundle);

  k8s::RestClient& client_;
  Clock& clock_;
  CertSyncOptions options_;
};

}  // namespace draco::admission
