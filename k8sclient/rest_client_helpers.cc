// Stateless helpers of the cpprestsdk RestClient (see rest_client_helpers.h): PEM validation,
// exception -> Status mapping, Retry-After parsing, PATCH content types and list/watch query
// parameters.
#include "k8sclient/rest_client_helpers.h"

#include <array>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <system_error>

#include <cpprest/http_client.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <spdlog/spdlog.h>

#include <boost/asio/ssl.hpp>

namespace draco::k8s::rest_internal {
namespace {

namespace http = web::http;

using BioPtr = std::unique_ptr<BIO, decltype(&BIO_free)>;

}  // namespace

// Adds every certificate in `pem` to `store`; returns how many were added.
int AddPemCertsToStore(const std::string& pem, X509_STORE* store) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free);
  if (!bio) return 0;
  int n = 0;
  while (X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    if (X509_STORE_add_cert(store, cert) == 1) ++n;
    X509_free(cert);
  }
  ERR_clear_error();  // the loop ends on a "no start line" error
  return n;
}

Status ValidateClientPem(const std::string& cert_pem, const std::string& key_pem) {
  if (!cert_pem.empty()) {
    BioPtr bio(BIO_new_mem_buf(cert_pem.data(), static_cast<int>(cert_pem.size())), &BIO_free);
    X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr);
    if (cert == nullptr) {
      ERR_clear_error();
      return InvalidArgumentError("client certificate is not PEM");
    }
    X509_free(cert);
    BioPtr kbio(BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size())), &BIO_free);
    EVP_PKEY* key = PEM_read_bio_PrivateKey(kbio.get(), nullptr, nullptr, nullptr);
    if (key == nullptr) {
      ERR_clear_error();
      return InvalidArgumentError("client key is not PEM");
    }
    EVP_PKEY_free(key);
  }
  return OkStatus();
}

// Maps an exception thrown by cpprestsdk/pplx onto a Status. Must be called inside a catch.
Status StatusFromCurrentException(std::string_view what_for) {
  try {
    throw;
  } catch (const http::http_exception& e) {
    const std::error_code ec = e.error_code();
    if (ec == std::errc::timed_out) {
      return DeadlineExceededError(std::string(what_for) + ": request timed out");
    }
    return UnavailableError(std::string(what_for) + ": " + e.what());
  } catch (const pplx::task_canceled&) {
    return CancelledError(std::string(what_for) + ": canceled");
  } catch (const std::exception& e) {
    return UnavailableError(std::string(what_for) + ": " + e.what());
  } catch (...) {
    return UnknownError(std::string(what_for) + ": unknown exception");
  }
}

static std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (static_cast<unsigned char>(c) < 0x20) {
      std::array<char, 8> esc{};
      std::snprintf(esc.data(), esc.size(), "\\u%04x", c);
      out += esc.data();
    } else {
      out.push_back(c);
    }
  }
  out.push_back('"');
  return out;
}

std::string DeleteOptionsJson(const DeleteOptions& o) {
  std::string s = R"({"kind":"DeleteOptions","apiVersion":"v1")";
  if (o.grace_period_seconds.has_value()) {
    s += ",\"gracePeriodSeconds\":" + std::to_string(*o.grace_period_seconds);
  }
  if (o.propagation_policy.has_value()) {
    s += ",\"propagationPolicy\":" + JsonString(*o.propagation_policy);
  }
  if (o.precondition_uid.has_value() || o.precondition_resource_version.has_value()) {
    s += ",\"preconditions\":{";
    bool first = true;
    if (o.precondition_uid.has_value()) {
      s += "\"uid\":" + JsonString(*o.precondition_uid);
      first = false;
    }
    if (o.precondition_resource_version.has_value()) {
      if (!first) s += ",";
      s += "\"resourceVersion\":" + JsonString(*o.precondition_resource_version);
    }
    s += "}";
  }
  s += "}";
  return s;
}

std::optional<int> ParseRetryAfter(const http::http_headers& headers) {
  auto it = headers.find("Retry-After");
  if (it == headers.end()) return std::nullopt;
  return ParseRetryAfterValue(&it->second);
}

std::optional<int> ParseRetryAfterValue(const std::string* value) {
  if (value == nullptr) return std::nullopt;
  try {
    int v = std::stoi(*value);
    if (v >= 0) return v;
  } catch (...) {
  }
  return std::nullopt;
}

std::string_view PatchContentType(PatchType t) {
  switch (t) {
    case PatchType::kJsonPatch:
      return "application/json-patch+json";
    case PatchType::kMergePatch:
      return "application/merge-patch+json";
    case PatchType::kStrategicMerge:
      return "application/strategic-merge-patch+json";
    case PatchType::kApply:
      return "application/apply-patch+yaml";
  }
  return "application/json";
}

void AppendListOptions(web::uri_builder& b, const ListOptions& o, bool watch) {
  if (watch) b.append_query("watch", "true");
  if (!o.label_selector.empty()) b.append_query("labelSelector", o.label_selector);
  if (!o.field_selector.empty()) b.append_query("fieldSelector", o.field_selector);
  if (!o.resource_version.empty()) b.append_query("resourceVersion", o.resource_version);
  if (!o.resource_version_match.empty()) {
    b.append_query("resourceVersionMatch", o.resource_version_match);
  }
  if (o.limit > 0) b.append_query("limit", std::to_string(o.limit));
  if (!o.continue_token.empty()) b.append_query("continue", o.continue_token);
  if (o.timeout_seconds > 0) b.append_query("timeoutSeconds", std::to_string(o.timeout_seconds));
  if (o.allow_watch_bookmarks) b.append_query("allowWatchBookmarks", "true");
  if (o.send_initial_events.has_value()) {
    b.append_query("sendInitialEvents", *o.send_initial_events ? "true" : "false");
  }
}

std::string ApiVersionOf(const GroupVersionResource& gvr) {
  return gvr.group.empty() ? gvr.version : gvr.group + "/" + gvr.version;
}

std::string ErrorBodyJson(const ProtoSchema* schema, bool protobuf, std::string body) {
  if (!protobuf || schema == nullptr) return body;
  auto json = ProtoObjectToJson(*schema, body);
  return json.ok() ? std::move(json).value() : std::string("(a protobuf error body)");
}

std::string JoinAsHeaderLines(const std::string& name, const std::vector<std::string>& values) {
  std::string out = values[0];
  for (size_t i = 1; i < values.size(); ++i) {
    out += "\r\n";
    out += name;
    out += ": ";
    out += values[i];
  }
  return out;
}

web::http::client::http_client_config MakeHttpClientConfig(const RestConfig& config,
                                                           const X509StorePtr& trust,
                                                           std::chrono::milliseconds timeout) {
  web::http::client::http_client_config c;
  if (timeout.count() > 0) c.set_timeout(timeout);
  c.set_validate_certificates(!config.insecure_skip_tls_verify);
  // Large LIST responses are gzip-compressed by the API server when asked (as client-go does by
  // default); besides the bytes, this turns thousands of tiny chunks into a few large ones.
  c.set_request_compressed_response(true);
  // Every connection's context trusts this client's store (built once, see tls_trust.h): the
  // configured CAs only, or the system's certificates when none is configured. It replaces
  // the default store cpprestsdk loaded.
  const std::string cert = config.client_cert_pem;
  const std::string key = config.client_key_pem;
  c.set_ssl_context_callback([trust, cert, key](boost::asio::ssl::context& ctx) {
    SSL_CTX_set1_cert_store(ctx.native_handle(), trust.get());
    if (!cert.empty()) {
      boost::system::error_code ec;
      ctx.use_certificate_chain(boost::asio::buffer(cert.data(), cert.size()), ec);
      if (!ec) {
        ctx.use_private_key(boost::asio::buffer(key.data(), key.size()),
                            boost::asio::ssl::context::pem, ec);
      }
      if (ec) spdlog::error("k8sclient: loading client certificate failed: {}", ec.message());
    }
  });
  return c;
}

Status ValidateRestConfig(const RestConfig& config) {
  if (config.host.empty()) return InvalidArgumentError("rest config: host is empty");
  if (config.host.rfind("https://", 0) != 0 && config.host.rfind("http://", 0) != 0) {
    return InvalidArgumentError("rest config: host must be an http(s) URL: " + config.host);
  }
  if (config.client_cert_pem.empty() != config.client_key_pem.empty()) {
    return InvalidArgumentError("rest config: client certificate and key must be set together");
  }
  auto has_crlf = [](const std::string& v) { return v.find_first_of("\r\n") != std::string::npos; };
  const ImpersonationConfig& imp = config.impersonate;
  bool bad_header = has_crlf(imp.user) || has_crlf(imp.uid) || has_crlf(config.bearer_token) ||
                    has_crlf(config.user_agent);
  for (const auto& g : imp.groups) bad_header |= has_crlf(g);
  for (const auto& [k, values] : imp.extra) {
    bad_header |= has_crlf(k);
    for (const auto& v : values) bad_header |= has_crlf(v);
  }
  if (bad_header) return InvalidArgumentError("rest config: header values must not contain CR/LF");
  return OkStatus();
}

}  // namespace draco::k8s::rest_internal
