// AdmissionReview (admission.k8s.io/v1) decoding and encoding for draco's mutating webhook.
//
// The API server POSTs an AdmissionReview with a `request`; the webhook answers with an
// AdmissionReview with a `response` carrying the request's uid, `allowed`, and for a mutation a
// base64 RFC 6902 JSON patch (patchType JSONPatch). Only v1 is accepted: the chart's
// MutatingWebhookConfiguration lists admissionReviewVersions [v1].
//
// All functions are thread-safe (no shared state) and never throw.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace draco::admission {

// The largest request body HandleReview accepts (the API server caps objects at 3 MiB in etcd).
inline constexpr size_t kMaxReviewBytes = 8u << 20;

struct AdmissionRequest {
  std::string uid;
  std::string operation;  // CREATE, UPDATE, DELETE, CONNECT
  std::string kind_group;
  std::string kind_version;
  std::string kind;  // request.kind.kind, e.g. "Pod"
  std::string namespace_name;
  std::string name;         // may be empty (generateName)
  std::string object_json;  // request.object as compact JSON; empty when absent
};

// Decodes an AdmissionReview v1 request. InvalidArgument (naming the field) when the body is not
// JSON, not an admission.k8s.io/v1 AdmissionReview, has no request or no request.uid, or a field
// has the wrong type.
StatusOr<AdmissionRequest> ParseAdmissionReview(std::string_view body);

struct AdmissionResponse {
  std::string uid;
  bool allowed = true;
  std::optional<std::string> json_patch;  // plain JSON text; encoded as base64
  int status_code = 0;                    // response.status.code when not allowed
  std::string status_message;             // response.status.message when not allowed
};

// The AdmissionReview v1 response document.
std::string EncodeAdmissionResponse(const AdmissionResponse& response);

// What the webhook endpoint answers: HTTP code and body.
struct ReviewResult {
  int http_code = 200;
  std::string body;
  bool gated = false;  // the response adds the scheduling gate
};

// Handles one POST body: a CREATE of a core/v1 Pod that ShouldGate() selects is allowed with the
// GatePatch(); any other request is allowed unchanged. A pod that cannot be decoded is denied
// (400, with the decoder's message) rather than admitted ungated. A body that is not an
// AdmissionReview is answered with HTTP 400 and a plain-text reason.
ReviewResult HandleReview(std::string_view body);

}  // namespace draco::admission
