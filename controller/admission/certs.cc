#include "controller/admission/certs.h"

#include <array>
#include <ctime>
#include <memory>

#include <openssl/bio.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <arpa/inet.h>

namespace draco::admission {
namespace {

template <typename T, void (*F)(T*)>
struct Deleter {
  void operator()(T* p) const { F(p); }
};
using PKeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using X509Ptr = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using BioPtr = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;

std::string OpenSslError(std::string_view what) {
  std::string msg(what);
  unsigned long e = ERR_get_error();  // NOLINT(google-runtime-int): OpenSSL's type
  if (e != 0) {
    std::array<char, 256> buf{};
    ERR_error_string_n(e, buf.data(), buf.size());
    msg += ": ";
    msg += buf.data();
  }
  ERR_clear_error();
  return msg;
}

PKeyPtr NewKey() { return PKeyPtr(EVP_EC_gen("P-256")); }

X509Ptr ReadCert(std::string_view pem) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) return nullptr;
  return X509Ptr(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
}

PKeyPtr ReadKey(std::string_view pem) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) return nullptr;
  return PKeyPtr(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
}

std::string CertPem(X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509(bio.get(), cert);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);  // NOLINT(google-runtime-int): OpenSSL's type
  return {data, static_cast<size_t>(n)};
}

std::string KeyPem(EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);  // NOLINT(google-runtime-int): OpenSSL's type
  return {data, static_cast<size_t>(n)};
}

WallTime ToWall(const ASN1_TIME* t) {
  std::tm tm{};
  ASN1_TIME_to_tm(t, &tm);
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

bool AddExt(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (ext == nullptr) return false;
  bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

bool IsIp(const std::string& host) {
  std::array<unsigned char, 16> buf{};
  return inet_pton(AF_INET, host.c_str(), buf.data()) == 1 ||
         inet_pton(AF_INET6, host.c_str(), buf.data()) == 1;
}

// A certificate skeleton: random serial, subject CN, validity, public key.
X509Ptr NewCert(std::string_view cn, EVP_PKEY* key, WallTime not_before, WallTime not_after) {
  X509Ptr cert(X509_new());
  X509_set_version(cert.get(), 2);
  std::array<unsigned char, 16> serial{};
  RAND_bytes(serial.data(), static_cast<int>(serial.size()));
  serial[0] &= 0x7f;
  BIGNUM* bn = BN_bin2bn(serial.data(), static_cast<int>(serial.size()), nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
  BN_free(bn);
  time_t nb = std::chrono::system_clock::to_time_t(not_before);
  time_t na = std::chrono::system_clock::to_time_t(not_after);
  ASN1_TIME_set(X509_getm_notBefore(cert.get()), nb);
  ASN1_TIME_set(X509_getm_notAfter(cert.get()), na);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>(std::string(cn).c_str()), -1,
                             -1, 0);
  X509_set_pubkey(cert.get(), key);
  return cert;
}

}  // namespace

StatusOr<CertKey> GenerateCa(std::string_view common_name, std::chrono::seconds validity,
                             WallTime now) {
  PKeyPtr key = NewKey();
  if (!key) return InternalError(OpenSslError("generating the CA key"));
  X509Ptr cert = NewCert(common_name, key.get(), now - std::chrono::hours(1), now + validity);
  X509_set_issuer_name(cert.get(), X509_get_subject_name(cert.get()));
  if (!AddExt(cert.get(), cert.get(), NID_basic_constraints, "critical,CA:TRUE") ||
      !AddExt(cert.get(), cert.get(), NID_key_usage,
              "critical,keyCertSign,cRLSign,digitalSignature") ||
      !AddExt(cert.get(), cert.get(), NID_subject_key_identifier, "hash")) {
    return InternalError(OpenSslError("CA extensions"));
  }
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) {
    return InternalError(OpenSslError("signing the CA certificate"));
  }
  return CertKey{CertPem(cert.get()), KeyPem(key.get())};
}

StatusOr<CertKey> IssueServingCert(const CertKey& ca, const std::vector<std::string>& hosts,
                                   std::chrono::seconds validity, WallTime now) {
  if (hosts.empty()) return InvalidArgumentError("serving certificate: no hosts");
  X509Ptr ca_cert = ReadCert(ca.cert_pem);
  PKeyPtr ca_key = ReadKey(ca.key_pem);
  if (!ca_cert || !ca_key) return InvalidArgumentError(OpenSslError("CA certificate or key"));
  PKeyPtr key = NewKey();
  if (!key) return InternalError(OpenSslError("generating the serving key"));
  WallTime not_after = std::min(now + validity, ToWall(X509_get0_notAfter(ca_cert.get())));
  X509Ptr cert = NewCert(hosts.front(), key.get(), now - std::chrono::hours(1), not_after);
  X509_set_issuer_name(cert.get(), X509_get_subject_name(ca_cert.get()));
  std::string san;
  for (const auto& h : hosts) {
    if (!san.empty()) san += ",";
    san += (IsIp(h) ? "IP:" : "DNS:") + h;
  }
  if (!AddExt(cert.get(), ca_cert.get(), NID_basic_constraints, "critical,CA:FALSE") ||
      !AddExt(cert.get(), ca_cert.get(), NID_key_usage, "critical,digitalSignature") ||
      !AddExt(cert.get(), ca_cert.get(), NID_ext_key_usage, "serverAuth") ||
      !AddExt(cert.get(), ca_cert.get(), NID_subject_alt_name, san)) {
    return InvalidArgumentError(OpenSslError("serving certificate extensions (hosts " + san + ")"));
  }
  if (X509_sign(cert.get(), ca_key.get(), EVP_sha256()) == 0) {
    return InternalError(OpenSslError("signing the serving certificate"));
  }
  return CertKey{CertPem(cert.get()), KeyPem(key.get())};
}

StatusOr<Validity> CertValidity(std::string_view pem) {
  X509Ptr cert = ReadCert(pem);
  if (!cert) return InvalidArgumentError(OpenSslError("not a PEM certificate"));
  return Validity{ToWall(X509_get0_notBefore(cert.get())), ToWall(X509_get0_notAfter(cert.get()))};
}

bool NeedsRotation(std::string_view pem, WallTime now) {
  auto v = CertValidity(pem);
  if (!v.ok()) return true;
  auto life = v->not_after - v->not_before;
  return now >= v->not_after - life / 3;
}

bool CertMatches(std::string_view cert_pem, std::string_view ca_pem,
                 const std::vector<std::string>& hosts) {
  X509Ptr cert = ReadCert(cert_pem);
  X509Ptr ca = ReadCert(ca_pem);
  if (!cert || !ca) return false;
  PKeyPtr ca_pub(X509_get_pubkey(ca.get()));
  if (!ca_pub || X509_verify(cert.get(), ca_pub.get()) != 1) {
    ERR_clear_error();
    return false;
  }
  for (const auto& h : hosts) {
    int ok = IsIp(h) ? X509_check_ip_asc(cert.get(), h.c_str(), 0)
                     : X509_check_host(cert.get(), h.c_str(), h.size(), 0, nullptr);
    if (ok != 1) return false;
  }
  return true;
}

std::string DropExpired(std::string_view bundle_pem, WallTime now) {
  BioPtr bio(BIO_new_mem_buf(bundle_pem.data(), static_cast<int>(bundle_pem.size())));
  std::string out;
  while (X509* raw = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    X509Ptr cert(raw);
    if (ToWall(X509_get0_notAfter(cert.get())) > now) out += CertPem(cert.get());
  }
  ERR_clear_error();
  return out;
}

std::string FirstCert(std::string_view bundle_pem) {
  X509Ptr cert = ReadCert(bundle_pem);
  ERR_clear_error();
  return cert ? CertPem(cert.get()) : "";
}

bool IsUsableCa(const CertKey& ca) {
  X509Ptr cert = ReadCert(ca.cert_pem);
  PKeyPtr key = ReadKey(ca.key_pem);
  bool ok = cert && key && X509_check_ca(cert.get()) == 1 &&
            X509_check_private_key(cert.get(), key.get()) == 1;
  ERR_clear_error();
  return ok;
}

std::string Base64Encode(std::string_view in) {
  std::string out(4 * ((in.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(in.data()),
                          static_cast<int>(in.size()));
  out.resize(n < 0 ? 0 : static_cast<size_t>(n));
  return out;
}

}  // namespace draco::admission
