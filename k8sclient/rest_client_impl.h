// RestClientImpl: the RestClient over cpprestsdk (Boost.Asio + OpenSSL).
//
// - TLS: the server certificate is verified against RestConfig::ca_pem only (the system roots are
//   used only when no CA is configured), with RFC 2818 host-name checking; client certificates
//   come from the config. insecure_skip_tls_verify disables verification (warned at load).
// - Auth: bearer token from a TokenSource (static, rotating file, exec plugin), re-fetched once
//   after a 401; basic auth; Impersonate-* headers.
// - One http_client per RestClientImpl, so keep-alive connections are pooled and reused across
//   calls and threads. Each Watch opens its own connection (it is long-lived).
// - Client-side rate limit: a TokenBucket(qps, burst) shared by all calls of this client.
// - Retries: 429 and 5xx responses carrying Retry-After are retried (any verb: the server did not
//   process them) after min(Retry-After, max_retry_wait); connection failures are retried for
//   GET (reads are idempotent) with exponential backoff; up to max_retries times.
// - No exception escapes: every cpprestsdk/Boost call is wrapped and mapped onto a Status.
//
// Thread-safe. The Clock is used for rate limiting and retry waits (tests inject a FakeClock).
#pragma once

#include <memory>

#include "base/clock.h"
#include "base/status.h"
#include "k8sclient/config.h"
#include "k8sclient/rest_client.h"

namespace draco::k8s {

// Sets how many threads the HTTP transport (cpprestsdk's shared I/O pool, 40 by default) runs.
// Every request and watch of every client shares them. On a small machine a few threads hand
// work to each other less often than 40 do. Must be called before the first client is built;
// afterwards it fails with FailedPrecondition and changes nothing. `threads` must be >= 1.
Status SetTransportThreads(size_t threads);

// Validates `config` (URL, PEM material) and builds a client. `clock` must outlive the client.
StatusOr<std::unique_ptr<RestClient>> NewRestClient(const RestConfig& config,
                                                    Clock& clock = RealClock::Get());

}  // namespace draco::k8s
