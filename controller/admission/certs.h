// The webhook's own PKI: a self-signed CA and a serving certificate it signs (OpenSSL, ECDSA
// P-256, SHA-256), all in PEM. The CA exists only to make the API server trust the webhook: its
// certificate goes into the MutatingWebhookConfiguration's caBundle.
//
// Thread-safe (no shared state); never throws.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace draco::admission {

using WallTime = std::chrono::system_clock::time_point;

struct CertKey {
  std::string cert_pem;
  std::string key_pem;
};

// A self-signed CA certificate (basicConstraints CA:TRUE, keyCertSign) valid from now - 1 h
// (clock skew) to now + validity.
StatusOr<CertKey> GenerateCa(std::string_view common_name, std::chrono::seconds validity,
                             WallTime now);

// A serving certificate for `hosts` (DNS names, or IP addresses which become IP SANs) signed by
// `ca`, valid from now - 1 h to the earlier of now + validity and the CA's expiry.
// InvalidArgument when hosts is empty or the CA does not parse.
StatusOr<CertKey> IssueServingCert(const CertKey& ca, const std::vector<std::string>& hosts,
                                   std::chrono::seconds validity, WallTime now);

// Validity window of the first certificate in `pem`.
struct Validity {
  WallTime not_before;
  WallTime not_after;
};
StatusOr<Validity> CertValidity(std::string_view pem);

// True when the first certificate of `pem` is in the last third of its lifetime at `now` (or
// already expired, or unparsable): the point at which it is replaced.
bool NeedsRotation(std::string_view pem, WallTime now);

// True when `cert_pem` was signed by the CA certificate `ca_pem` and covers every host.
bool CertMatches(std::string_view cert_pem, std::string_view ca_pem,
                 const std::vector<std::string>& hosts);

// The certificates in `bundle_pem` that are still valid at `now`, concatenated (expired CAs are
// dropped from a caBundle).
std::string DropExpired(std::string_view bundle_pem, WallTime now);

// The first certificate of a PEM bundle ("" when there is none).
std::string FirstCert(std::string_view bundle_pem);

// True when `ca` is a CA certificate (basicConstraints CA:TRUE) whose public key matches the key.
bool IsUsableCa(const CertKey& ca);

// Standard base64 (RFC 4648, padded), as Kubernetes encodes []byte fields.
std::string Base64Encode(std::string_view in);

}  // namespace draco::admission
