#include "k8sclient/tls_trust.h"

#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <string_view>

#include <openssl/err.h>

#include "k8sclient/rest_client_helpers.h"

namespace draco::k8s {
namespace {

constexpr const char* kEmptyFile = "/dev/null";

SystemTrust& State() {
  static SystemTrust s;
  return s;
}

std::once_flag& Once() {
  static std::once_flag once;
  return once;
}

SystemTrust ReadSystemTrust() {
  SystemTrust t;
  // NOLINTNEXTLINE(concurrency-mt-unsafe): draco sets its environment only before threads start
  if (const char* f = std::getenv(X509_get_default_cert_file_env()); f != nullptr) {
    t.file = f;
    t.env_file = f;
  } else {
    t.file = X509_get_default_cert_file();
  }
  // NOLINTNEXTLINE(concurrency-mt-unsafe): as above
  const char* d = std::getenv(X509_get_default_cert_dir_env());
  t.dir = d != nullptr ? d : X509_get_default_cert_dir();
  return t;
}

}  // namespace

const SystemTrust& GetSystemTrust() {
  std::call_once(Once(), [] { State() = ReadSystemTrust(); });
  return State();
}

bool UseOwnTrustStores() {
  const SystemTrust& t = GetSystemTrust();
  if (t.redirected) return true;
  if (t.file == kEmptyFile || access(t.file.c_str(), R_OK) != 0) return false;
  // NOLINTNEXTLINE(concurrency-mt-unsafe): called first thing in main(), before any thread
  if (setenv(X509_get_default_cert_file_env(), kEmptyFile, 1) != 0) return false;
  State().redirected = true;
  return true;
}

StatusOr<X509StorePtr> TrustStoreFor(const std::string& ca_pem, const SystemTrust& trust) {
  X509StorePtr store(X509_STORE_new(), &X509_STORE_free);
  if (!store) return InternalError("X509_STORE_new failed");
  if (!ca_pem.empty()) {
    if (rest_internal::AddPemCertsToStore(ca_pem, store.get()) == 0) {
      return InvalidArgumentError("CA bundle contains no PEM certificate");
    }
    return store;
  }
  // What SSL_CTX_set_default_verify_paths gives, from the recorded locations. Either may be
  // missing (a system without a bundle file, or without a hashed directory).
  if (!trust.file.empty()) (void)X509_STORE_load_file(store.get(), trust.file.c_str());
  if (!trust.dir.empty()) (void)X509_STORE_load_path(store.get(), trust.dir.c_str());
  ERR_clear_error();
  return store;
}

std::vector<std::string> RestoreTrustEnvironment(std::vector<std::string> env,
                                                 const SystemTrust& trust) {
  if (!trust.redirected) return env;
  const std::string prefix = std::string(X509_get_default_cert_file_env()) + "=";
  std::erase_if(env, [&](const std::string& kv) { return kv.starts_with(prefix); });
  if (trust.env_file) env.push_back(prefix + *trust.env_file);
  return env;
}

}  // namespace draco::k8s
