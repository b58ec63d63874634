// Internal to RestClientImpl (rest_client_impl.h); include only from rest_client_impl.cc and
// rest_client_helpers.cc. Stateless helpers of the cpprestsdk client: PEM checks for the TLS
// config, mapping cpprestsdk exceptions onto a Status, Retry-After parsing and building request
// URLs. All are thread-safe.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <cpprest/http_client.h>
#include <cpprest/http_headers.h>
#include <cpprest/uri_builder.h>
#include <openssl/x509.h>

#include "base/status.h"
#include "k8sclient/config.h"
#include "k8sclient/proto_json.h"
#include "k8sclient/rest_client.h"
#include "k8sclient/tls_trust.h"

namespace draco::k8s::rest_internal {

// Adds every certificate in `pem` to `store`; returns how many were added.
int AddPemCertsToStore(const std::string& pem, X509_STORE* store);
// INVALID_ARGUMENT unless the (optional) client certificate and key parse as PEM. (The CA bundle
// is checked where its trust store is built, TrustStoreFor in tls_trust.h.)
Status ValidateClientPem(const std::string& cert_pem, const std::string& key_pem);
// Maps an exception thrown by cpprestsdk/pplx onto a Status. Must be called inside a catch.
Status StatusFromCurrentException(std::string_view what_for);
// The Retry-After header in seconds, if present and a non-negative integer.
std::optional<int> ParseRetryAfter(const web::http::http_headers& headers);
// The JSON body of a DELETE with these options (kind DeleteOptions, apiVersion v1).
std::string DeleteOptionsJson(const DeleteOptions& o);
// The same from one header value (null: no header).
std::optional<int> ParseRetryAfterValue(const std::string* value);
// The Content-Type of a PATCH of type `t`.
std::string_view PatchContentType(PatchType t);
// Appends the query parameters of `o` (and watch=true when `watch`) to `b`.
void AppendListOptions(web::uri_builder& b, const ListOptions& o, bool watch);

// cpprestsdk's client configuration: `timeout`, gzip for large responses, TLS that trusts only
// `trust` and presents the config's client certificate.
web::http::client::http_client_config MakeHttpClientConfig(const RestConfig& config,
                                                           const X509StorePtr& trust,
                                                           std::chrono::milliseconds timeout);
// INVALID_ARGUMENT for a config NewRestClient refuses: no or a non-HTTP(S) host, a client
// certificate without its key (or the reverse), CR/LF in a header value.
Status ValidateRestConfig(const RestConfig& config);
// "v1" for the core group, else "group/version".
std::string ApiVersionOf(const GroupVersionResource& gvr);
// An error response's body as JSON: a protobuf Status (`protobuf`) is transcoded with `schema`
// (null: none); what cannot be transcoded becomes a placeholder the error decoder reports as is.
std::string ErrorBodyJson(const ProtoSchema* schema, bool protobuf, std::string body);
// `values` of header `name` as one value that cpprestsdk writes as one header line each.
std::string JoinAsHeaderLines(const std::string& name, const std::vector<std::string>& values);

}  // namespace draco::k8s::rest_internal
