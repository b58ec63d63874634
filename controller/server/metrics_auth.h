// MetricsAuth: authentication and authorization of a request for /metrics the way
// controller-runtime's secure metrics serving (pkg/metrics/filters) and the API server's delegating
// authenticator and authorizer do it: the API server decides.
//
// Authentication. The request's bearer token (Authorization: Bearer TOKEN) goes to the API server
// in a TokenReview (authentication.k8s.io/v1, POST tokenreviews). No token, or a review that says
// not authenticated: 401. Anonymous requests are never allowed.
//
// Authorization. The reviewed user (name, uid, groups, extra) goes to the API server in a
// SubjectAccessReview (authorization.k8s.io/v1) for the non-resource URL: nonResourceAttributes
// {path, verb} with the request's path and lower-case method ("get" for GET). Allowed: 200 (the
// caller then serves the page); denied: 403.
//
// Errors. A review the API server does not answer (transport error, 5xx, 403 because draco may not
// create reviews, a malformed answer) is 500, logged once per failure with its cause, and never
// cached; nothing throws.
//
// Caches (so that a Prometheus scraping every 15 s costs no API request per scrape). Token reviews
// by SHA-256 of the token, successes and failures alike, for authn_ttl; access reviews by user,
// groups, uid, extra, verb and path, allowed for allow_ttl and denied for deny_ttl. Each cache
// holds at most max_entries; when full, expired entries go first, then the one expiring soonest.
//
// Thread-safety. Authorize may be called concurrently; API requests are made outside the lock
// (two concurrent misses for one key may both ask; the later answer is kept).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "k8sclient/rest_client.h"

namespace draco::server {

inline const k8s::GroupVersionResource kTokenReviews{"authentication.k8s.io", "v1", "tokenreviews"};
inline const k8s::GroupVersionResource kSubjectAccessReviews{"authorization.k8s.io", "v1",
                                                             "subjectaccessreviews"};

struct MetricsAuthOptions {
  // controller-runtime's values (filters.go: CacheTTL 1m; AllowCacheTTL 5m, DenyCacheTTL 30s).
  std::chrono::seconds authn_ttl{60};
  std::chrono::seconds allow_ttl{300};
  std::chrono::seconds deny_ttl{30};
  size_t max_entries = 1024;
};

// The authenticated user, as the TokenReview returned it.
struct UserInfo {
  std::string username;
  std::string uid;
  std::vector<std::string> groups;
  std::map<std::string, std::vector<std::string>> extra;
};

// An HTTP outcome: 200 (allowed), 401, 403 or 500, with a short plain-text message for the body.
struct AuthDecision {
  int code = 500;
  std::string message;
};

class MetricsAuth {
 public:
  // `client` (the API client of `draco run`) and `clock` must outlive this object.
  MetricsAuth(k8s::RestClient& client, Clock& clock, MetricsAuthOptions opts = {});

  // Decides a request with the given Authorization header value ("" when absent), lower-case verb
  // ("get") and path ("/metrics").
  AuthDecision Authorize(std::string_view authorization, std::string_view verb,
                         std::string_view path);

  // The API requests made so far (token reviews + access reviews), for tests and logs.
  int64_t reviews() const;

 private:
  struct Authn {
    bool authenticated = false;
    UserInfo user;
    Clock::TimePoint expires;
  };
  struct Authz {
    bool allowed = false;
    std::string reason;
    Clock::TimePoint expires;
  };
  // Authentication: OK with `out` filled, or the status of a failed review.
  Status Authenticate(const std::string& token, Authn& out);
  Status Review(const UserInfo& user, std::string_view verb, std::string_view path, Authz& out);

  template <typename T>
  void Put(std::map<std::string, T>& cache, const std::string& key, T value);

  k8s::RestClient& client_;
  Clock& clock_;
  MetricsAuthOptions opts_;
  mutable std::mutex mu_;
  std::map<std::string, Authn> authn_;  // guarded by mu_; key: SHA-256 of the token
  std::map<std::string, Authz> authz_;  // guarded by mu_
  int64_t reviews_ = 0;                 // guarded by mu_
};

// The token of an "Authorization: Bearer TOKEN" header value ("" when it is not one). The scheme
// is case-insensitive, as in the API server.
std::string BearerToken(std::string_view authorization);

}  // namespace draco::server
