// TLS trust stores of the REST clients, and the cost cpprestsdk adds to every connection.
//
// cpprestsdk gives every connection it opens a fresh OpenSSL context and loads OpenSSL's default
// CA bundle into it (SSL_CTX_set_default_verify_paths) before the client's ssl-context callback
// runs. With OpenSSL 3 and Debian's bundle (~140 certificates) that load costs ~18 ms of CPU per
// connection, and a client with a configured CA (in-cluster, every kubeconfig draco is given)
// throws that store away at once. `draco run` opens 60-70 connections in a 2,000-pod burst, and
// the pool re-opens them after idle periods; the loads were 10 % of draco's CPU in that burst.
//
// So: each client builds its trust store once (TrustStoreFor: the configured CA, or the system's
// certificates) and hands it to every connection's context; and UseOwnTrustStores(), called once at
// process start, points OpenSSL's default bundle (SSL_CERT_FILE) at an empty file, so the load that
// cpprestsdk forces finds nothing to parse. The system's locations are recorded first, so clients
// without a configured CA still trust exactly what they trusted before, and processes draco starts
// (exec credential plugins) get the environment as it was (RestoreTrustEnvironment).
//
// Thread-safety: UseOwnTrustStores must run before any other thread exists (it sets an environment
// variable); everything else is thread-safe.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <openssl/x509.h>

#include "base/status.h"

namespace draco::k8s {

// Where the system's trusted certificates are: SSL_CERT_FILE / SSL_CERT_DIR as they were at
// start-up, else OpenSSL's built-in locations.
struct SystemTrust {
  std::string file;
  std::string dir;
  // The value SSL_CERT_FILE had at start-up (unset: nullopt).
  std::optional<std::string> env_file;
  // UseOwnTrustStores pointed SSL_CERT_FILE at an empty file.
  bool redirected = false;
};

// The system trust as recorded by UseOwnTrustStores, or, when it was not called, as the
// environment and OpenSSL's defaults give it now.
const SystemTrust& GetSystemTrust();

// Records the system trust, then sets SSL_CERT_FILE to /dev/null. Call at most once, first thing
// in main(), before any thread starts. Returns false (and changes nothing) when the file OpenSSL
// would load does not exist anyway.
bool UseOwnTrustStores();

using X509StorePtr = std::shared_ptr<X509_STORE>;

// A store trusting exactly the PEM certificates in `ca_pem`, or, when it is empty, the system's
// certificates (`trust.file`, and `trust.dir` looked up by hash during verification). Fails when
// `ca_pem` holds no certificate. Share the result among contexts with SSL_CTX_set1_cert_store.
StatusOr<X509StorePtr> TrustStoreFor(const std::string& ca_pem, const SystemTrust& trust);

// `env` ("KEY=value" strings) with SSL_CERT_FILE as it was before UseOwnTrustStores: restored to
// `trust.env_file`, or removed when it was unset. Unchanged unless `trust.redirected`.
std::vector<std::string> RestoreTrustEnvironment(std::vector<std::string> env,
                                                 const SystemTrust& trust);

}  // namespace draco::k8s
