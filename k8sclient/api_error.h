// ApiError: Kubernetes API errors (metav1.Status) as draco::Status values.
//
// Every failed call of the RestClient returns a Status whose code is derived from the HTTP code
// and the metav1.Status reason (table below) and whose message is the server's message followed by
// a machine-readable tail, " k8s-status:{json}", carrying the HTTP code, reason, causes and
// Retry-After. ApiError::FromStatus() recovers the full detail from such a Status, and the Is*()
// predicates answer the usual questions (client-go apimachinery/pkg/api/errors).
//
//   HTTP / reason                         StatusCode
//   400 BadRequest                        kInvalidArgument
//   401 Unauthorized                      kUnauthenticated
//   403 Forbidden                         kPermissionDenied
//   404 NotFound                          kNotFound
//   405 MethodNotAllowed                  kUnimplemented
//   409 AlreadyExists                     kAlreadyExists
//   409 Conflict                          kAborted
//   410 Gone / Expired                    kOutOfRange
//   415, 406                              kInvalidArgument
//   422 Invalid                           kInvalidArgument
//   429 TooManyRequests                   kResourceExhausted
//   500 ServerTimeout, 504 Timeout        kDeadlineExceeded
//   500 InternalError (other 500)         kInternal
//   502, 503 ServiceUnavailable           kUnavailable
// Transport failures (connection refused, TLS, reset) are kUnavailable without a k8s tail;
// client-side timeouts are kDeadlineExceeded without a tail.
//
// All functions are pure and thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace draco::k8s {

// metav1.StatusCause.
struct StatusCause {
  std::string type;  // e.g. "FieldValueInvalid", "ResourceVersionTooLarge"
  std::string message;
  std::string field;  // e.g. "metadata.name"
  friend bool operator==(const StatusCause&, const StatusCause&) = default;
};

// The decoded detail of one failed API call.
struct ApiError {
  int http_code = 0;
  std::string reason;  // metav1.StatusReason, "" when the body was not a metav1.Status
  std::string message;
  std::vector<StatusCause> causes;
  // From details.retryAfterSeconds or the Retry-After header; 0 when absent.
  int retry_after_seconds = 0;
  std::string details_name;
  std::string details_group;
  std::string details_kind;

  // The Status for this error (code per the table above, message with the k8s tail).
  Status ToStatus() const;
  // Recovers the detail from a Status produced by ToStatus(); nullopt for any other Status.
  static std::optional<ApiError> FromStatus(const Status& status);
};

// Decodes a non-2xx response. `body` may be a metav1.Status JSON document or anything else (then
// the reason is derived from the HTTP code, as client-go's NewGenericServerResponse does).
// `retry_after_header` is the parsed Retry-After header in seconds, if any.
ApiError DecodeApiError(int http_code, std::string_view body,
                        std::optional<int> retry_after_header = std::nullopt);

// Decodes the metav1.Status carried in a watch ERROR event.
ApiError DecodeApiErrorObject(std::string_view status_json);

// Predicates. All are false for OK.
bool IsNotFound(const Status& s);
bool IsAlreadyExists(const Status& s);
bool IsConflict(const Status& s);
// 410 Gone, or reason Expired/Gone (a resourceVersion too old for the watch cache or etcd).
bool IsGone(const Status& s);
bool IsResourceExpired(const Status& s);
// 504 with cause ResourceVersionTooLarge.
bool IsTooLargeResourceVersion(const Status& s);
bool IsInvalid(const Status& s);
bool IsBadRequest(const Status& s);
bool IsForbidden(const Status& s);
bool IsUnauthorized(const Status& s);
bool IsTooManyRequests(const Status& s);
bool IsServerTimeout(const Status& s);  // 500 ServerTimeout
bool IsTimeout(const Status& s);        // 504 Timeout
bool IsInternalError(const Status& s);
bool IsServiceUnavailable(const Status& s);
// The API server answered and refused the request: a 4xx response other than 408 and 429 (those
// and 5xx are "try again later"). False for transport failures and client-side cancellation.
bool IsRefusal(const Status& s);
// No answer from the API server: connection refused/reset, TLS failure, client-side timeout (a
// Status without the k8s tail whose code is kUnavailable or kDeadlineExceeded). Retry these; a
// write may or may not have been applied.
bool IsTransportError(const Status& s);
// Worth retrying later: a transport error, 408, 429 or a 5xx answer.
bool IsRetryable(const Status& s);
// Retry-After carried by the error (429 or 5xx), if any.
std::optional<int> RetryAfterSeconds(const Status& s);
// The causes of an Invalid (or other) error; empty when none.
std::vector<StatusCause> Causes(const Status& s);

}  // namespace draco::k8s
