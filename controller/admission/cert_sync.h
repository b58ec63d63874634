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
// hosts. Step 3 also restores a caBundle that something else blanked or changed (a GitOps sync of
// the chart, which renders none): Webhook runs a pass as soon as its watch of the configuration
// sees CaBundleCurrent() turn false.
//
// LoadMountedPki() is the alternative when another party issues the certificate (cert-manager):
// draco then only reads the mounted Secret's files and writes nothing, not even the caBundle
// (cert-manager's CA injector owns it).
//
// Thread-compatible: one Sync() at a time per object.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
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

// True when every webhook of the MutatingWebhookConfiguration `config_json` has the caBundle
// `bundle_pem` (base64 in the object). False for a configuration that does not parse.
bool CaBundleCurrent(std::string_view config_json, std::string_view bundle_pem);

// The serving pair and CA bundle from a directory holding a kubernetes.io/tls Secret's files, as
// cert-manager writes them: tls.crt (the serving certificate, then any intermediates), tls.key and
// ca.crt (the issuing CA; when missing, the last certificate of tls.crt stands in, for a
// self-signed serving certificate). InvalidArgument/NotFound naming the file when one is missing
// or holds no PEM block.
StatusOr<WebhookPki> LoadMountedPki(const std::string& dir);

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
