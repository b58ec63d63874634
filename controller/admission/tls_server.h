// TlsServer: a small HTTPS/1.1 server on OpenSSL for draco's admission webhook and, with
// --metrics-secure, its /metrics (controller/server/secure_metrics.h).
//
// Overview. One listening socket on a host:port (127.0.0.1, the pod IP, or [::1]; port 0 picks an
// ephemeral port), an accept thread and a fixed pool of connection threads. Each connection serves
// one request (Connection: close): a request line, headers up to 16 KiB, and a body of exactly
// Content-Length bytes (at most kMaxReviewBytes; chunked bodies are refused with 411). Reads and
// writes time out after 10 s, so a stalled peer holds a connection thread for no longer.
//
// Certificates. The server starts without one and refuses handshakes until SetCertificate() is
// called; SetCertificate() may be called again at any time (rotation): connections accepted
// afterwards use the new pair, established ones finish with the old one.
//
// Thread-safety. All public methods are thread-safe. The handler runs on the connection threads,
// concurrently with itself, and must be thread-safe. The destructor stops accepting, waits for
// in-flight requests and joins every thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/status.h"
#include "controller/admission/certs.h"

struct ssl_ctx_st;

namespace draco::admission {

struct HttpReply {
  int code = 200;
  std::string content_type = "application/json";
  std::string body;
};

// (method, path without query, body) -> reply.
using HttpHandler =
    std::function<HttpReply(std::string_view method, std::string_view path, std::string_view body)>;

// One request as a RequestHandler sees it; the views live as long as the handler call.
struct HttpRequest {
  std::string_view method;
  std::string_view path;  // without the query
  std::string_view body;
  std::string_view headers;  // the raw header block, request line included
  // The value of header `name` (case-insensitive, surrounding blanks trimmed), "" when absent.
  std::string Header(std::string_view name) const;
};
using RequestHandler = std::function<HttpReply(const HttpRequest&)>;

class TlsServer {
 public:
  // Binds synchronously; a busy port or a bad address is an error. `threads` >= 1.
  static StatusOr<std::unique_ptr<TlsServer>> Start(const std::string& bind_address,
                                                    HttpHandler handler, int threads = 4);
  // The same, for a handler that reads request headers (e.g. Authorization).
  static StatusOr<std::unique_ptr<TlsServer>> StartWithHeaders(const std::string& bind_address,
                                                               RequestHandler handler,
                                                               int threads = 4);
  ~TlsServer();
  TlsServer(const TlsServer&) = delete;
  TlsServer& operator=(const TlsServer&) = delete;

  // Installs the serving certificate (leaf first, then any intermediates) and key.
  Status SetCertificate(const CertKey& serving);
  bool HasCertificate() const;
  // The certificate currently served ("" before SetCertificate).
  std::string CertificatePem() const;
  int port() const { return port_; }
  const std::string& host() const { return host_; }

 private:
  TlsServer() = default;
  void AcceptLoop();
  void ConnectionLoop();
  void Serve(int fd);

  RequestHandler handler_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::string host_;
  std::atomic<bool> stop_{false};
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<int> pending_;
  std::shared_ptr<ssl_ctx_st> ctx_;  // guarded by mu_
  std::string cert_pem_;             // guarded by mu_
  std::thread acceptor_;
  std::vector<std::thread> workers_;
};

// Connects to host:port over TLS, verifies the peer against `ca_bundle_pem` and `server_name`
// (DNS name or IP), sends `method path` with `body`, and returns the reply. For readiness
// self-checks and tests. Times out after `timeout_ms`. `extra_headers`: more request header lines,
// each ending in CRLF (e.g. "Authorization: Bearer T\r\n").
StatusOr<HttpReply> TlsRequest(const std::string& host, int port, const std::string& ca_bundle_pem,
                               const std::string& server_name, std::string_view method,
                               std::string_view path, std::string_view body = "",
                               int timeout_ms = 5000, std::string_view extra_headers = "");

}  // namespace draco::admission
